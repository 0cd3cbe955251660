import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * The applets that run a program (env, setsid, xargs) say in busybox's words that they could not
 * run it, with the shell's statuses (127 missing, 126 not executable). Each answer is LXD 5.0.2's.
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('xf');
});
afterAll(() => guest.close());

describe('a program an applet cannot run', () => {
  it('is said by env, setsid and xargs, with 126 or 127', async () => {
    const r = await guest.sh(
      'echo hi > /tmp/f; for p in env setsid xargs; do $p /tmp/f </dev/null; echo rc=$?; $p /nosuch </dev/null; echo rc=$?; done 2>&1; env -i A=1 nosuch; echo rc=$?; echo a | xargs nosuch; echo rc=$?',
    );
    expect(r.stdout).toBe(
      [
        "env: can't execute '/tmp/f': Permission denied",
        'rc=126',
        "env: can't execute '/nosuch': No such file or directory",
        'rc=127',
        "setsid: can't execute '/tmp/f': Permission denied",
        'rc=126',
        "setsid: can't execute '/nosuch': No such file or directory",
        'rc=127',
        'xargs: /tmp/f: Permission denied',
        'rc=126',
        'xargs: /nosuch: No such file or directory',
        'rc=127',
        'rc=127',
        'rc=127',
        '',
      ].join('\n'),
    );
    expect(r.stderr).toBe("env: can't execute 'nosuch': No such file or directory\nxargs: nosuch: No such file or directory\n");
  });

  it('leaves what the program itself says alone', async () => {
    const r = await guest.sh('env A=1 sh -c "echo \\$A; nosuch"; echo rc=$?');
    expect(r).toMatchObject({ stdout: '1\nrc=127\n', stderr: 'sh: nosuch: not found\n' });
  });

  it("ends env's options at --", async () => {
    const r = await guest.sh(
      'env -u HOME -- nosuch x; echo rc=$?; env -i -- A=1 sh -c "echo \\$A"; env -- | grep -c PATH; env -u HOME -- sh -c "echo [\\$HOME]"',
    );
    expect(r).toMatchObject({ stdout: 'rc=127\n1\n1\n[]\n', stderr: "env: can't execute 'nosuch': No such file or directory\n" });
  });
});
