import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/** `sleep` and `usleep` read their numbers as busybox does, and refuse a bad one at once. Each answer is LXD 5.0.2's (busybox image). */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('sl');
});
afterAll(() => guest.close());

const banner = 'BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\n';

describe('sleep and usleep', () => {
  it.each([
    ['usleep -; echo rc=$?', 'rc=1\n', "usleep: invalid number '-'\n"],
    ['usleep /tmp; echo rc=$?', 'rc=1\n', "usleep: invalid number '/tmp'\n"],
    ['usleep 1x; echo rc=$?', 'rc=1\n', "usleep: invalid number '1x'\n"],
    ['usleep +5; echo rc=$?', 'rc=1\n', "usleep: invalid number '+5'\n"],
    ["usleep ' 5'; echo rc=$?", 'rc=1\n', "usleep: invalid number ' 5'\n"],
    ['usleep 4294967296; echo rc=$?', 'rc=1\n', "usleep: invalid number '4294967296'\n"],
    ['usleep 1 2; usleep 0004; echo rc=$?', 'rc=0\n', ''],
    ['usleep; echo rc=$?', 'rc=1\n', `${banner}Usage: usleep N\n\nPause for N microseconds\n`],
    ['sleep x; echo rc=$?', 'rc=1\n', "sleep: invalid number 'x'\n"],
    [
      'sleep; echo rc=$?',
      'rc=1\n',
      `${banner}Usage: sleep [N]...\n\nPause for a time equal to the total of the args given, where each arg can\nhave an optional suffix of (s)econds, (m)inutes, (h)ours, or (d)ays\n`,
    ],
  ])('%s', async (script, stdout, stderr) => {
    const r = await guest.sh(script);
    expect({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode }).toEqual({ stdout, stderr, exitCode: 0 });
  });
});
