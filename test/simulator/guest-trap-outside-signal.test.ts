import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * A signal sent to an exec through its control socket reaches busybox's sh as LXD 5.0.2 forwards
 * it (`lxc exec` given SIGTERM): a trapped one runs its action once the command the shell waits for
 * has ended, an ignored one does nothing, any other ends the shell (each answer below is the bed's,
 * with `sleep 4` where these loop).
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('outside');
});

afterAll(async () => {
  await guest.close();
});

/**
 * Runs `script` after a trap (`trap`: its arguments) with `WAIT` standing for a loop that ends when
 * /tmp/go exists; sends `signal` once the trap is set (the script has made /tmp/ready), and gives
 * what it ended with. A trap that is to let the script go on makes /tmp/go itself: nothing here
 * hangs on the clock, and "after" comes only once the trap ran.
 */
async function signalled(trap: string, signal: number, letGo: boolean): Promise<{ stdout: string; exitCode: number | undefined }> {
  await guest.sh('rm -f /tmp/ready /tmp/go');
  // A loop on a program (sleep): once the shell is killed its programs do nothing and fail, and the
  // loop ends (the simulator's kill lets the script run out, keeping the output it wrote before).
  const wait = 'while sleep 0.05; do [ -e /tmp/go ] && break; done';
  const script = `echo started; ${trap}; touch /tmp/ready; ${wait}; echo after`;
  const session = await guest.client.exec('outside', { command: ['sh', '-c', script] });
  await until('the trap set', async () => (await guest.sh('test -e /tmp/ready')).exitCode === 0);
  session.signal(signal);
  // An ignored signal leaves the loop waiting: let it go once the signal was surely sent.
  if (letGo) await guest.sh('touch /tmp/go');
  const r = await session.wait({ timeoutMs: 20_000 });
  return { stdout: r.stdout, exitCode: r.exitCode };
}

describe('a signal from outside the shell', () => {
  it('runs a trap that exits, once the command the shell waits for has ended', async () => {
    expect(await signalled('trap "echo got; exit 5" TERM', 15, false)).toEqual({ stdout: 'started\ngot\n', exitCode: 5 });
  });
  it('runs a trap and goes on', async () => {
    expect(await signalled('trap "echo got; touch /tmp/go" TERM', 15, false)).toEqual({ stdout: 'started\ngot\nafter\n', exitCode: 0 });
  });
  it('does nothing for an ignored signal', async () => {
    expect(await signalled('trap "" TERM', 15, true)).toEqual({ stdout: 'started\nafter\n', exitCode: 0 });
  });
  it('ends the shell with 128+N for a signal without a trap', async () => {
    expect(await signalled(':', 15, false)).toEqual({ stdout: 'started\n', exitCode: 143 });
    expect(await signalled('trap "echo got" INT', 15, false)).toEqual({ stdout: 'started\n', exitCode: 143 });
  });
});
