import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * An exec without a terminal gives its command no controlling terminal: `/dev/tty` opens for no one
 * (ENXIO), root included, and the shell's redirections and `cat` say so in busybox's words. Each answer below is
 * LXD 5.0.2's (`lxc exec` without `-t`).
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('devtty');
});

afterAll(async () => {
  await guest.close();
});

describe('/dev/tty in an exec without a terminal', () => {
  it.each([
    ['echo hi > /dev/tty; echo rc=$?', 'rc=1\n', "sh: can't create /dev/tty: No such device or address\n"],
    ['echo hi >> /dev/tty; echo rc=$?', 'rc=1\n', "sh: can't create /dev/tty: No such device or address\n"],
    ['read x < /dev/tty; echo rc=$?', 'rc=1\n', "sh: can't open /dev/tty: No such device or address\n"],
    ['(exec 1>/dev/tty; echo hi); echo rc=$?', 'rc=1\n', "sh: can't create /dev/tty: No such device or address\n"],
    ['(exec 3<>/dev/tty); echo rc=$?', 'rc=1\n', "sh: can't create /dev/tty: No such device or address\n"],
    ['cat /dev/tty; echo rc=$?', 'rc=1\n', "cat: can't open '/dev/tty': No such device or address\n"],
  ])('%s', async (script, stdout, stderr) => {
    const r = await guest.sh(script);
    expect({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode }).toEqual({ stdout, stderr, exitCode: 0 });
  });

  it('is not made by a write that was refused', async () => {
    await guest.sh('echo hi > /dev/tty');
    const r = await guest.sh('cat /dev/tty; echo rc=$?');
    expect(r.stdout).toBe('rc=1\n');
  });
});
