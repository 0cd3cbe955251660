import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * Read and search permission for a user other than root in the guest's filesystem. The expected
 * answers are LXD 5.0.2's (busybox image), run there as `lxc exec --user 1000 --group 1000 --cwd /tmp`.
 */
let guest: GuestShell;

/** `sh -c SCRIPT` as uid and gid 1000 in /tmp, as the differential's user steps run. */
const asUser = async (script: string) =>
  (await guest.client.exec('r', { command: ['sh', '-c', script], user: 1000, group: 1000, cwd: '/tmp' })).wait({ timeoutMs: 20_000 });

beforeAll(async () => {
  guest = await startGuestShell('r');
  const setUp = await guest.sh(
    'mkdir -p /tmp/q/sub /tmp/q/nox /tmp/q/noread; echo secret > /tmp/q/unread; chmod 600 /tmp/q/unread; echo sub > /tmp/q/sub/f; ' +
      'chmod 711 /tmp/q/sub; echo n > /tmp/q/nox/f; chmod 744 /tmp/q/nox; chmod 300 /tmp/q/noread; chmod 700 /root; echo r > /root/x',
  );
  expect(setUp.exitCode).toBe(0);
});
afterAll(() => guest.close());

describe('read and search permission in the guest filesystem', () => {
  it('refuses a user other than root a file it may not read, as the kernel does', async () => {
    const res = await asUser(
      'cat /tmp/q/unread; echo $?; head -1 /tmp/q/unread; echo $?; wc -l /tmp/q/unread; echo $?; grep x /tmp/q/unread; echo $?; ' +
        'cp /tmp/q/unread /tmp/cpy; echo $?; ls /tmp/cpy; echo $?; cat < /tmp/q/unread; echo $?; sort /tmp/q/unread; echo $?; ' +
        'md5sum /tmp/q/unread; echo $?; od -c /tmp/q/unread; echo $?; ls -l /tmp/q/unread | cut -c1-10; stat -c %a /tmp/q/unread',
    );
    expect(res.stdout).toBe('1\n1\n1\n2\n1\n1\n1\n2\n1\n1\n-rw-------\n600\n');
    expect(res.stderr).toBe(
      "cat: can't open '/tmp/q/unread': Permission denied\n" +
        'head: /tmp/q/unread: Permission denied\n' +
        'wc: /tmp/q/unread: Permission denied\n' +
        'grep: /tmp/q/unread: Permission denied\n' +
        "cp: can't open '/tmp/q/unread': Permission denied\n" +
        'ls: /tmp/cpy: No such file or directory\n' +
        "sh: can't open /tmp/q/unread: Permission denied\n" +
        'sort: /tmp/q/unread: Permission denied\n' +
        "md5sum: can't open '/tmp/q/unread': Permission denied\n" +
        'od: /tmp/q/unread: Permission denied\n',
    );
    // Root reads it.
    expect((await guest.sh('cat /tmp/q/unread')).stdout).toBe('secret\n');
  });

  it('refuses a path through a directory the user may not search (/root 0700), as the kernel does', async () => {
    const res = await asUser(
      'cat /root/x; echo $?; ls /root/x; echo $?; stat /root/x; echo $?; echo > /root/x; echo $?; ls /root; echo $?; ls -l /root/x; ' +
        'echo $?; test -f /root/x; echo $?; wc -c < /root/x; echo $?; rm /root/x; echo $?; mkdir /root/d; echo $?; touch /root/x; echo $?; ' +
        'realpath /root/x; echo $?; ls -ld /root | cut -c1-10',
    );
    expect(res.stdout).toBe(`${'1\n'.repeat(12)}drwx------\n`);
    expect(res.stderr).toBe(
      "cat: can't open '/root/x': Permission denied\n" +
        'ls: /root/x: Permission denied\n' +
        "stat: can't stat '/root/x': Permission denied\n" +
        "sh: can't create /root/x: Permission denied\n" +
        "ls: can't open '/root': Permission denied\n" +
        'ls: /root/x: Permission denied\n' +
        "sh: can't open /root/x: Permission denied\n" +
        "rm: can't stat '/root/x': Permission denied\n" +
        "mkdir: can't create directory '/root/d': Permission denied\n" +
        'touch: /root/x: Permission denied\n' +
        'realpath: /root/x: Permission denied\n',
    );
    expect((await guest.sh('cat /root/x')).stdout).toBe('r\n');
  });

  it('lists a directory the user may read but not search without its entries, and refuses listing one it may not read', async () => {
    const res = await asUser(
      'ls /tmp/q/nox; echo $?; ls -l /tmp/q/nox; echo $?; cat /tmp/q/nox/f; echo $?; ls /tmp/q/sub; echo $?; cat /tmp/q/sub/f; echo $?; ' +
        'ls /tmp/q/noread; echo $?; ls -l /tmp/q/noread; echo $?; find /tmp/q -name f; echo $?',
    );
    expect(res.stdout).toBe('1\ntotal 0\n1\n1\n1\nsub\n0\n1\ntotal 0\n1\n1\n');
    // find perrors each in the order it walks (hash order on ext4): compared as a set.
    const [others, finds] = [res.stderr.split('\n').filter((l) => !l.startsWith('find')), res.stderr.split('\n').filter((l) => l.startsWith('find'))];
    expect(others.join('\n')).toBe(
      'ls: /tmp/q/nox/f: Permission denied\n' +
        'ls: /tmp/q/nox/f: Permission denied\n' +
        "cat: can't open '/tmp/q/nox/f': Permission denied\n" +
        "ls: can't open '/tmp/q/sub': Permission denied\n" +
        "ls: can't open '/tmp/q/noread': Permission denied\n" +
        "ls: can't open '/tmp/q/noread': Permission denied\n",
    );
    expect(finds.sort()).toEqual([
      'find: /tmp/q/noread: Permission denied',
      'find: /tmp/q/nox/f: Permission denied',
      'find: /tmp/q/sub: Permission denied',
    ]);
  });
});
