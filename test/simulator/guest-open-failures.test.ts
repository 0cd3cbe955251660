import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * Files head, tail and wc cannot open: a symlink loop, a file the user may not read, a missing
 * one. The expected answers are LXD 5.0.2's busybox 1.35 (the reflex-busybox image).
 */
let guest: GuestShell;

const asUser = async (script: string) =>
  (await guest.client.exec('o', { command: ['sh', '-c', script], user: 1000, group: 1000, cwd: '/tmp' })).wait({ timeoutMs: 20_000 });

beforeAll(async () => {
  guest = await startGuestShell('o');
  const setUp = await guest.sh('mkdir /tmp/o; cd /tmp/o; echo hello > f; chmod 600 f; echo x > g; ln -s loop loop; ln -s l2 l1; ln -s l1 l2');
  expect(setUp.exitCode).toBe(0);
});
afterAll(() => guest.close());

describe('files head, tail and wc cannot open', () => {
  it('calls a symlink loop ELOOP in head, wc and tail, where it is not a missing file', async () => {
    const res = await guest.sh('cd /tmp/o; head loop; echo $?; head l1 g; echo $?; wc loop; echo $?; wc -l l1 g; echo $?; tail loop; echo $?');
    expect(res.stdout).toBe('1\n\n==> g <==\nx\n1\n1\n        1 g\n        1 total\n1\n1\n');
    expect(res.stderr).toBe(
      'head: loop: Too many levels of symbolic links\nhead: l1: Too many levels of symbolic links\n' +
        'wc: loop: Too many levels of symbolic links\nwc: l1: Too many levels of symbolic links\n' +
        "tail: can't open 'loop': Too many levels of symbolic links\ntail: no files\n",
    );
  });

  it("says tail can't open a file the user may not read, and no files when none opened", async () => {
    const res = await asUser('cd /tmp/o; tail f; echo $?; tail g f; echo $?; tail -n 1 f g; echo $?; tail nosuch g; echo $?; tail -c 2 f; echo $?');
    expect(res.stdout).toBe('1\nx\n1\nx\n1\nx\n1\n1\n');
    expect(res.stderr).toBe(
      "tail: can't open 'f': Permission denied\ntail: no files\n" +
        "tail: can't open 'f': Permission denied\n" +
        "tail: can't open 'f': Permission denied\n" +
        "tail: can't open 'nosuch': No such file or directory\n" +
        "tail: can't open 'f': Permission denied\ntail: no files\n",
    );
    // Root opens it; two files have headers.
    expect((await guest.sh('cd /tmp/o; tail g f')).stdout).toBe('==> g <==\nx\n\n==> f <==\nhello\n');
  });

  it('says why reading a directory failed, as each program does, and wc counts it as empty', async () => {
    const res = await guest.sh(
      'cd /tmp/o; mkdir dd; head dd; echo $?; tail dd; echo $?; wc dd g; echo $?; wc -l dd; wc -l g dd nosuch; echo $?; head g/x; tail g/x',
    );
    expect(res.stdout).toBe(
      '1\n1\n        0         0         0 dd\n        1         1         2 g\n        1         1         2 total\n1\n' +
        '0 dd\n        1 g\n        0 dd\n        1 total\n1\n',
    );
    expect(res.stderr).toBe(
      'head: dd: Input/output error\ntail: read error: Is a directory\nwc: dd: Is a directory\nwc: dd: Is a directory\n' +
        'wc: dd: Is a directory\nwc: nosuch: No such file or directory\nhead: g/x: Not a directory\n' +
        "tail: can't open 'g/x': Not a directory\ntail: no files\n",
    );
  });
});
