import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/** The simulator's shell builtins say what busybox's sh says, on the line they are on. The expected answers are LXD 5.0.2's (busybox image). */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('b');
});
afterAll(() => guest.close());

describe('a builtin’s refusal', () => {
  it('names the line it is on (from 0 in `sh -c`)', async () => {
    const res = await guest.sh('echo\numask xyz; trap x BAD');
    expect(res).toMatchObject({
      stdout: '\n',
      stderr: 'sh: umask: line 1: illegal mode: xyz\nsh: trap: line 1: BAD: invalid signal specification\n',
    });
  });

  it('of ulimit is getopt’s for an option, and a bad number fails with 1', async () => {
    const res = await guest.sh('ulimit -z; echo "rc=$?"; ulimit -n abc; echo "rc=$?"; ulimit -Hz; echo "rc=$?"; ulimit -f 10 extra; echo "rc=$?"');
    expect(res).toMatchObject({
      stdout: 'rc=1\nrc=1\nrc=1\nrc=1\n',
      stderr: "ulimit: invalid option -- 'z'\nsh: invalid number 'abc'\nulimit: invalid option -- 'z'\nsh: invalid number 'extra'\n",
    });
  });

  it('of chdir, cd by its other name, names chdir', async () => {
    const res = await guest.sh('chdir /nosuch; echo rc=$?; chdir; pwd; type chdir; chdir -P /tmp; pwd');
    expect(res).toMatchObject({
      stdout: 'rc=2\n/root\nchdir is a shell builtin\n/tmp\n',
      stderr: "sh: chdir: line 0: can't cd to /nosuch: No such file or directory\n",
    });
  });
});
