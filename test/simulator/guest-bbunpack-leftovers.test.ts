import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * busybox's bbunpack programs (bzip2, xz, lzma, uncompress, gzip, lzop ...), the other programs that
 * write bytes, and xargs on empty input. The expected answers are LXD 5.0.2's busybox 1.35 (the
 * reflex-busybox image), as root and as `--user 1000 --group 1000`.
 */
let guest: GuestShell;

const asUser = async (script: string) =>
  (await guest.client.exec('bb', { command: ['sh', '-c', script], user: 1000, group: 1000, cwd: '/tmp/p' })).wait({ timeoutMs: 20_000 });

beforeAll(async () => {
  guest = await startGuestShell('bb');
});
afterAll(() => guest.close());

describe('programs that write bytes', () => {
  it('write UTF-8 text as it is to the command output', async () => {
    await guest.sh('cd /tmp; printf "\\303\\251\\n" > u; bzip2 -k u; gzip -k u; uuencode -m x < u > uu; printf "a\\303\\251\\r\\n" > d');
    for (const [command, expected] of [
      ['bzcat u.bz2', 'é\n'],
      ['zcat u.gz', 'é\n'],
      ['dos2unix < d', 'aé\n'],
      ['unix2dos < u', 'é\r\n'],
      ['uudecode -o - uu', 'é\n'],
      ['dd if=u 2>/dev/null', 'é\n'],
    ] as [string, string][]) {
      const res = await guest.sh(`cd /tmp; ${command}`);
      expect([command, res.stdout]).toEqual([command, expected]);
    }
  });
});

describe('bbunpack', () => {
  it("says can't open for a file the user may not read, whatever the applet, and goes on to the next", async () => {
    await guest.sh('mkdir -p /tmp/p; cd /tmp/p; for f in a a.bz2 a.xz a.lzma a.Z a.gz a.lzo; do echo hi > $f; chmod 600 $f; done; chmod 777 .');
    for (const [command, expected] of [
      ['bzip2 a', "bzip2: can't open 'a': Permission denied\n"],
      ['bzcat a.bz2', "bzcat: can't open 'a.bz2': Permission denied\n"],
      ['unxz a.xz', "unxz: can't open 'a.xz': Permission denied\n"],
      ['unlzma a.lzma', "unlzma: can't open 'a.lzma': Permission denied\n"],
      ['uncompress a.Z', "uncompress: can't open 'a.Z': Permission denied\n"],
      ['lzop -d a.lzo', "lzop: can't open 'a.lzo': Permission denied\n"],
      ['gunzip a.gz', "gunzip: can't open 'a.gz': Permission denied\n"],
      ['zcat a.gz', 'zcat: a.gz: Permission denied\n'],
      ['bunzip2 nosuch a.bz2', "bunzip2: nosuch: No such file or directory\nbunzip2: can't open 'a.bz2': Permission denied\n"],
    ] as [string, string][]) {
      const res = await asUser(command);
      expect([command, res.stderr, res.exitCode]).toEqual([command, expected, 1]);
    }
  });

  it('gzip DIR writes DIR.gz of nothing and then fails to remove DIR; bzip2 DIR writes nothing', async () => {
    const res = await guest.sh(
      'cd /tmp; mkdir g1; echo x > g1/f; chmod 700 g1; gzip g1; echo rc=$?; ls -d g1*; stat -c %a g1.gz; od -An -tx1 g1.gz; ' +
        'mkdir g2; gzip -v g2; echo rc=$?; mkdir g3; gzip -k g3; echo rc=$?; gzip -c g3 | wc -c; mkdir b1; bzip2 b1; echo rc=$?; ls -d b1*',
    );
    expect(res.stdout).toBe('rc=1\ng1\ng1.gz\n700\n 1f 8b 08 00 00 00 00 00 00 03 03 00 00 00 00 00\n 00 00 00 00\nrc=1\nrc=0\n20\nrc=1\nb1\n');
    expect(res.stderr).toBe(
      "gzip: can't remove file 'g1': Is a directory\ng2: 100% - replaced with g2.gz\ngzip: can't remove file 'g2': Is a directory\nbzip2: read error: Is a directory\n",
    );
  });
});

describe('xargs', () => {
  it('runs its command once on input with no arguments, unless -r', async () => {
    const res = await guest.sh(
      'printf "" | xargs echo hi; echo rc=$?; printf "" | xargs; echo rc=$?; printf "" | xargs -r echo hi; echo rc=$?; printf "\\n " | xargs echo hi; echo rc=$?; ' +
        'printf "" | xargs false; echo rc=$?; printf "" | xargs -t echo hi; printf "" | xargs -I{} echo a{}; echo rc=$?; printf "" | xargs nosuchcmd; echo rc=$?',
    );
    expect(res.stdout).toBe('hi\nrc=0\n\nrc=0\nrc=0\nhi\nrc=0\nrc=123\nhi\nrc=0\nrc=127\n');
    expect(res.stderr).toBe('echo hi\nxargs: nosuchcmd: No such file or directory\n');
  });
});
