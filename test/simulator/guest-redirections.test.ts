import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * Redirections the shell cannot open, as busybox 1.35's ash answers them on the LXD 5.0.2 test
 * bed (recorded there; the lxc differential holds the same lines against the bed itself). The
 * file is not made, the command fails with 1, and the script goes on, except after a special
 * builtin, where the shell ends.
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('r');
});

afterAll(() => guest.close());

const sh = (script: string) => guest.sh(script);

describe('a redirection the shell cannot open', () => {
  it('into a missing directory, a file or a directory: the command fails with 1, nothing is made, the script goes on', async () => {
    const r = await sh(
      [
        'echo x > /nosuch/f; echo "rc=$?"',
        'echo x > /tmp; echo "rc=$?"',
        'echo x > /etc/passwd/x; echo "rc=$?"',
        'echo x >> /nosuch/f; echo "rc=$?"',
        'cat < /nosuch; echo "rc=$?"',
        '{ echo x; } > /nosuch/f; echo "rc=$?"',
        '( echo x ) > /nosuch/f; echo "rc=$?"',
        'echo x 2> /nosuch/f; echo "rc=$?"',
        'ls /nosuch 2>/nosuch/e; echo "rc=$?"',
        'echo a | cat > /nosuch/q; echo "rc=$?"',
        'if echo x > /nosuch/f; then echo t; else echo f; fi',
        'for i in 1; do echo x; done > /nosuch/f; echo "rc=$?"',
        '> /nosuch/f; echo "rc=$?"',
        'x=1 > /nosuch/f; echo "rc=$?"',
        'ls -d /nosuch; echo "rc=$?"',
      ].join('\n'),
    );
    expect(r.stdout).toBe(
      ['rc=1', 'rc=1', 'rc=1', 'rc=1', 'rc=1', 'rc=1', 'rc=2', 'rc=1', 'rc=1', 'rc=1', 'f', 'rc=1', 'rc=1', 'rc=1', 'rc=1', ''].join('\n'),
    );
    const create = (path: string) => `sh: can't create ${path}: nonexistent directory`;
    expect(r.stderr).toBe(
      [
        create('/nosuch/f'),
        "sh: can't create /tmp: Is a directory",
        create('/etc/passwd/x'),
        create('/nosuch/f'),
        "sh: can't open /nosuch: no such file",
        create('/nosuch/f'),
        create('/nosuch/f'),
        create('/nosuch/f'),
        create('/nosuch/e'),
        create('/nosuch/q'),
        create('/nosuch/f'),
        create('/nosuch/f'),
        create('/nosuch/f'),
        create('/nosuch/f'),
        'ls: /nosuch: No such file or directory',
        '',
      ].join('\n'),
    );
    expect(r.exitCode).toBe(0);
  });

  it('through a symlink loop: too many levels of symbolic links, for writing and for reading', async () => {
    expect(await sh('cd /tmp; ln -s loop loop; echo x > loop; echo $?; cat < loop; echo $?; rm loop')).toMatchObject({
      exitCode: 0,
      stdout: '1\n1\n',
      stderr: "sh: can't create loop: Too many levels of symbolic links\nsh: can't open loop: Too many levels of symbolic links\n",
    });
  });

  it('on a special builtin (exec, :) the shell ends with 1; noclobber refuses an existing file', async () => {
    for (const line of ['exec 3> /nosuch/f; echo never', ': > /nosuch/f; echo never', 'exec > /nosuch/f; echo never']) {
      expect(await sh(line)).toMatchObject({ exitCode: 1, stdout: '', stderr: "sh: can't create /nosuch/f: nonexistent directory\n" });
    }
    expect(await sh('echo a > /tmp/c; set -o noclobber; echo b > /tmp/c; echo "rc=$?"; cat /tmp/c')).toMatchObject({
      exitCode: 0,
      stdout: 'rc=1\na\n',
      stderr: "sh: can't create /tmp/c: File exists\n",
    });
  });
});
