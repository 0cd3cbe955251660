import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * A trap on a signal the shell's own commands send it runs, as in busybox's sh on LXD 5.0.2's test
 * bed (each answer below is the bed's): between two commands, in the shell's state, once however
 * many times the signal came, with `$?` kept.
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('traps');
});

afterAll(async () => {
  await guest.close();
});

describe('a trap on a signal sent to the shell', () => {
  it.each([
    ["trap 'echo got' USR1; kill -USR1 $$; echo after", 'got\nafter\n', 0],
    ["trap 'X=1' USR1; kill -USR1 $$; echo X=$X", 'X=1\n', 0],
    ["trap 'echo got; exit 3' TERM; kill $$; echo after", 'got\n', 3],
    ["trap '' USR1; kill -USR1 $$; echo after", 'after\n', 0],
    ["trap 'echo hup' HUP; echo a; kill -HUP $$; echo b; kill -1 $$; echo c", 'a\nhup\nb\nhup\nc\n', 0],
    ["trap 'echo got $?' USR2; false; kill -USR2 $$; echo rc=$?", 'got 0\nrc=0\n', 0],
    ["trap 'echo int' INT; (kill -INT $$); echo after", 'int\nafter\n', 0],
    ["trap 'echo t' USR1; killall -USR1 sh; echo after", 't\nafter\n', 0],
    ["trap 'echo e' EXIT; trap 'echo u' USR1; kill -USR1 $$; echo after", 'u\nafter\ne\n', 0],
    ["f() { kill -USR1 $$; echo in-f; }; trap 'echo t' USR1; f; echo after", 't\nin-f\nafter\n', 0],
    ["trap 'echo t' USR1; kill -USR1 $$ $$; echo after", 't\nafter\n', 0],
    ["trap 'echo t' USR1; kill -USR1 $$ | cat; echo after", 't\nafter\n', 0],
    ["h() { echo handled $1; }; trap 'h x' USR1; kill -USR1 $$; echo after", 'handled x\nafter\n', 0],
    ['kill -USR1 $$; echo after', '', 138],
    ['trap "echo chld" CHLD; kill -CHLD $$; echo after; trap "echo cont" CONT; kill -CONT $$; echo end', 'chld\nafter\ncont\nend\n', 0],
    ['kill -CHLD $$; echo after', 'after\n', 0],
    ["trap 'echo t' USR1; echo $(kill -USR1 $$; echo sub); echo after", 'sub\nt\nafter\n', 0],
    ['set -e; kill 99999 2>/dev/null || echo failed; echo end', 'failed\nend\n', 0],
    ['kill 99999 2>/dev/null; echo rc=$?', 'rc=1\n', 0],
    ["set -e; trap 'echo t' USR1; kill -USR1 $$ && echo ok; kill 99999 2>/dev/null && echo no; echo end", 't\nok\nend\n', 0],
  ])('%s', async (script, stdout, exitCode) => {
    const result = await guest.sh(script);
    expect({ stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode }).toEqual({ stdout, stderr: '', exitCode });
  });
});
