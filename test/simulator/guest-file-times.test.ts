import { InMemoryFs } from 'just-bash';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuestFs } from '../../src/simulator/guest/guest-fs.js';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * The three times of a guest's file (stat's Access, Modify and Change), as LXD 5.0.2's test bed
 * moves them on its ext4 root mounted `relatime` (observed there: a read moves the atime only while
 * it is not after the mtime and ctime; a write moves the mtime and ctime; chmod, chown, link and
 * rename the ctime; `ls -c`/`-u` sort by the ctime/atime without `-l` and show it with `-l`).
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('times');
});

afterAll(async () => {
  await guest.close();
});

/** `stat -c '%x|%y|%z' FILE` as [atime, mtime, ctime] after each step of `steps`. */
async function timesAfter(file: string, steps: string[]): Promise<[string, string, string][]> {
  const script = steps.map((s) => `${s}; stat -c '%x|%y|%z' ${file}`).join('; ');
  const result = await guest.sh(script);
  expect(result.stderr).toBe('');
  return result.stdout
    .trim()
    .split('\n')
    .map((l) => l.split('|') as [string, string, string]);
}

describe("a guest file's access, modification and change times", () => {
  it('are given to the nanosecond, as stat shows the kernel stamps', async () => {
    const [atime] = (await timesAfter('/tmp/ns', ['echo x > /tmp/ns']))[0]!;
    expect(atime).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9} \+0000$/);
    expect(atime).not.toMatch(/000000 \+0000$/);
  });

  it("of an image's file are the image's mtime, and the atime and ctime of when the instance's filesystem was unpacked", async () => {
    const [atime, mtime, ctime] = (await timesAfter('/etc/passwd', ['true']))[0]!;
    expect(mtime < ctime).toBe(true);
    expect(mtime).toMatch(/\.000000000 \+0000$/);
    expect(atime >= ctime).toBe(true);
  });

  it('move the atime on a read of a file written since its last read, and not on the read after (relatime)', async () => {
    const [, read, again] = await timesAfter('/tmp/r', ['echo x > /tmp/r', 'cat /tmp/r > /dev/null', 'cat /tmp/r > /dev/null']);
    expect(read![0] > read![1]).toBe(true);
    expect(read![1]).toBe(read![2]);
    expect(again).toEqual(read);
  });

  it('are one instant after a touch to now, as utimes(NULL) stamps them', async () => {
    const [atime, mtime, ctime] = (await timesAfter('/tmp/tn', ['echo x > /tmp/tn', 'touch /tmp/tn']))[1]!;
    expect([mtime, ctime]).toEqual([atime, atime]);
  });

  it('move the mtime and ctime on a write, the ctime alone on chmod, chown, link and rename', async () => {
    const [made, chmod, write, chown, link, rename] = await timesAfter('/tmp/w', [
      'echo x > /tmp/w',
      'chmod 600 /tmp/w',
      'echo y >> /tmp/w',
      'chown 1000 /tmp/w',
      'ln /tmp/w /tmp/w2',
      'mv /tmp/w2 /tmp/w3',
    ]);
    expect(chmod![1]).toBe(made![1]);
    expect(chmod![2] > made![2]).toBe(true);
    expect(write![1] > chmod![1]).toBe(true);
    expect(write![2]).toBe(write![1]);
    expect(write![0]).toBe(chmod![0]);
    for (const [before, after] of [
      [write, chown],
      [chown, link],
      [link, rename],
    ]) {
      expect(after![1]).toBe(before![1]);
      expect(after![2] > before![2]).toBe(true);
    }
  });

  it('keep a directory moved by mv its times but the ctime, and move its atime when it is listed', async () => {
    const [made, moved, listed] = await timesAfter('/tmp/d1', [
      'mkdir /tmp/d1 && touch -d "2020-01-01 00:00:00" /tmp/d1',
      'mv /tmp/d1 /tmp/d2 && mv /tmp/d2 /tmp/d1',
      'ls /tmp/d1',
    ]);
    expect(made![1]).toBe('2020-01-01 00:00:00.000000000 +0000');
    expect(moved!.slice(0, 2)).toEqual(made!.slice(0, 2));
    expect(moved![2] > made![2]).toBe(true);
    expect(listed![0] > made![0]).toBe(true);
    expect(listed!.slice(1)).toEqual(moved!.slice(1));
  });

  it('sort ls -c and -u by the ctime and atime without -l, and show them with -l', async () => {
    const result = await guest.sh(
      'mkdir /tmp/ls && cd /tmp/ls && echo 1 > a && echo 2 > b && touch -d "2020-01-01 00:00:00" a && touch -d "2021-01-01 00:00:00" b && ' +
        'echo u; ls -u; ls -lu --full-time a; echo t; ls -t; sleep 1; chmod 600 a; echo c; ls -c; ls -lc; ls -tcu; ls -tuc',
    );
    expect(result.stderr).toBe('');
    // LXD 5.0.2's answer; the ctimes `ls -lc` shows are the minute it ran.
    expect(result.stdout.replace(/\w{3} [ \d]\d \d\d:\d\d/g, 'TIME')).toBe(
      'u\nb\na\n-rw-r--r--    1 root     root             2 2020-01-01 00:00:00 +0000 a\nt\nb\na\nc\na\nb\ntotal 8\n' +
        '-rw-------    1 root     root             2 TIME a\n-rw-r--r--    1 root     root             2 TIME b\nb\na\na\nb\n',
    );
  });
});

describe('a push through the files API', () => {
  it("of a new file moves its directory's mtime and ctime, and over an existing one does not", async () => {
    const fs = new GuestFs(new InMemoryFs());
    const root = { uid: 0, gid: 0, mode: 0o644 };
    await fs.mkdir('/d', { ...root, mode: 0o755 });
    const past = new Date('2020-01-01T00:00:00Z');
    await fs.utimes('/d', past, past);
    const before = await fs.timesOf('/d');
    await fs.write('/d/f', Buffer.from('x'), root);
    const after = await fs.timesOf('/d');
    expect(after.mtime > before.mtime).toBe(true);
    expect(after.ctime).toBe(after.mtime);
    await fs.write('/d/f', Buffer.from('y'), root);
    expect(await fs.timesOf('/d')).toEqual(after);
  });
});

describe("utimes on a guest's file", () => {
  it('leaves a time given as an invalid Date as it is (UTIME_OMIT, for touch -a and -m)', async () => {
    const fs = new GuestFs(new InMemoryFs());
    const shell = fs.as({ uid: 0, gid: 0 });
    await shell.writeFile('/f', 'x');
    const made = await fs.timesOf('/f');
    const past = new Date('2020-01-01T00:00:00Z');
    await shell.utimes('/f', past, new Date(Number.NaN));
    const accessed = await fs.timesOf('/f');
    expect([accessed.atime, accessed.mtime]).toEqual([1577836800000000000n, made.mtime]);
    expect(accessed.ctime > made.ctime).toBe(true);
    await shell.utimes('/f', new Date(Number.NaN), past);
    expect(await fs.timesOf('/f')).toMatchObject({ atime: 1577836800000000000n, mtime: 1577836800000000000n });
  });
  it("are what find's -atime, -ctime, -amin and -cmin test, apart from the mtime (as on LXD 5.0.2)", async () => {
    const result = await guest.sh(
      'cd /tmp; echo x > ft; touch -d @1000000000 ft; find /tmp/ft -mtime -1; echo m; find /tmp/ft -ctime -1; echo c; find /tmp/ft -atime -1; echo a; find /tmp/ft -amin +5; find /tmp/ft -cmin -5',
    );
    expect(result.stdout).toBe('m\n/tmp/ft\nc\na\n/tmp/ft\n/tmp/ft\n');
  });
  it('move the access time alone under touch -a and the modification time alone under touch -m (as on LXD 5.0.2)', async () => {
    const result = await guest.sh(
      'cd /tmp; echo x > ta; touch -d @1000000000 ta; touch -a ta; stat -c "%X %Y" ta | awk "{print (\\$1>1700000000), \\$2}"; ' +
        'touch -d @1000000000 ta; touch -m ta; stat -c "%X %Y" ta | awk "{print \\$1, (\\$2>1700000000)}"; touch -d @1000000000 ta; touch -a -d @1100000000 ta; stat -c "%X %Y" ta',
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('1 1000000000\n1000000000 1\n1100000000 1000000000\n');
  });
});
