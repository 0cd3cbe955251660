import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * busybox's gzip, gunzip and zcat in the guest. The expected answers are LXD 5.0.2's busybox 1.35
 * (the reflex-busybox image), as root and as `--user 1000 --group 1000`.
 */
let guest: GuestShell;

const asUser = async (script: string) =>
  (await guest.client.exec('z', { command: ['sh', '-c', script], user: 1000, group: 1000, cwd: '/tmp' })).wait({ timeoutMs: 20_000 });

beforeAll(async () => {
  guest = await startGuestShell('z');
});
afterAll(() => guest.close());

describe('gzip and gunzip', () => {
  it("write the input's mode (under the umask) to what they make", async () => {
    const res = await guest.sh(
      'mkdir /tmp/z1; cd /tmp/z1; echo hello > f; chmod 640 f; gzip f; stat -c "%n %a" f.gz; gunzip f.gz; stat -c "%n %a" f; ' +
        'chmod 644 f; umask 077; gzip f; stat -c "%n %a" f.gz; chmod 604 f.gz; umask 0; gunzip f.gz; stat -c "%n %a" f',
    );
    expect(res.stdout).toBe('f.gz 640\nf 640\nf.gz 600\nf 604\n');
  });

  it("say can't open for a file the user may not read, and go on to the next", async () => {
    await guest.sh('mkdir /tmp/z2; chmod 777 /tmp/z2; echo z > /tmp/z2/u; chmod 600 /tmp/z2/u');
    const res = await asUser('cd /tmp/z2; echo y > v; gzip u v; echo $?; ls');
    expect(res.stdout).toBe('1\nu\nv.gz\n');
    expect(res.stderr).toBe("gzip: can't open 'u': Permission denied\n");
  });

  it('read gzip streams as busybox does: members in a row, trailing garbage, bad data', async () => {
    const res = await guest.sh(
      'cd /tmp; echo hello | gzip | od -An -tx1; echo a | gzip > x.gz; echo b | gzip >> x.gz; zcat x.gz; echo junk >> x.gz; zcat x.gz; echo $?; ' +
        'echo notgz > n.gz; gunzip n.gz; echo $?; printf "\\037\\213\\010\\000" | gunzip; echo $?; echo hello | gzip | head -c 15 | gunzip; echo $?; ' +
        'echo a | gzip > c.gz; printf "\\000" | dd of=c.gz bs=1 seek=12 conv=notrunc 2>/dev/null; gunzip -c c.gz | od -An -c; gzip -t x.gz; echo $?',
    );
    expect(res.stdout).toBe(
      ' 1f 8b 08 00 00 00 00 00 00 03 cb 48 cd c9 c9 e7\n 02 00 20 30 3a 36 06 00 00 00\na\nb\na\nb\n0\n1\n1\n1\n   a  \\b\n0\n',
    );
    expect(res.stderr).toBe('gunzip: invalid magic\ngunzip: corrupted data\ngunzip: unexpected end of file\ngunzip: crc error\n');
  });
});
