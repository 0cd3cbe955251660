import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * busybox's sh runs a signal's trap once the command that was running when it came has ended,
 * however that command was invoked, and a signal sent from a subshell, a pipeline's command or a
 * command substitution after the whole command holding it: each answer below is LXD 5.0.2's.
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('trapcmd');
});

afterAll(async () => {
  await guest.close();
});

describe("a signal's trap runs after the command that sent it", () => {
  it.each([
    ['trap "echo T" USR1; eval "kill -USR1 \\$\\$"; echo after', 'T\nafter\n', 0],
    ['trap "echo T" USR1; eval "kill -USR1 \\$\\$; echo in"; echo after', 'T\nin\nafter\n', 0],
    ['trap "echo T" USR1; command kill -USR1 $$; echo after', 'T\nafter\n', 0],
    ['trap "echo T" USR1; k=kill; $k -USR1 $$; echo after', 'T\nafter\n', 0],
    ['trap "echo T" USR1; f() { kill -USR1 $$; echo inf; }; f; echo after', 'T\ninf\nafter\n', 0],
  ])('%s', async (script, stdout, exitCode) => {
    const r = await guest.sh(script);
    expect({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode }).toEqual({ stdout, stderr: '', exitCode });
  });
});

describe('a signal sent to the shell from another process of it', () => {
  it.each([
    ['trap "echo T" USR1; (kill -USR1 $$; echo sub); echo after', 'sub\nT\nafter\n', 0],
    ['trap "echo T; exit 3" USR1; (kill -USR1 $$; echo sub); echo after', 'sub\nT\n', 3],
    ['trap "echo T" USR1; kill -USR1 $$ | cat; echo after', 'T\nafter\n', 0],
    ['trap "echo T" USR1; echo x | kill -USR1 $$; echo after', 'T\nafter\n', 0],
    ['trap "echo T" USR1; x=$(kill -USR1 $$; echo sub); echo "x=$x"; echo after', 'T\nx=sub\nafter\n', 0],
    ['trap "echo T" USR1; echo "x=$(kill -USR1 $$)"; echo after', 'x=\nT\nafter\n', 0],
    ['(kill $$); echo after', '', 143],
    ['x=$(kill $$); echo after', '', 143],
    ['kill $$ | cat; echo after', '', 143],
  ])('%s', async (script, stdout, exitCode) => {
    const r = await guest.sh(script);
    expect({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode }).toEqual({ stdout, stderr: '', exitCode });
  });
});

describe('a trap in the compound commands around it', () => {
  it.each([
    ['trap \'echo T$?\' USR1; (kill -USR1 $$; exit 4); echo "rc=$?"', 'T4\nrc=4\n', 0],
    ["set -e; trap 'echo T' USR1; (kill -USR1 $$; exit 4) || echo caught; echo after", 'T\ncaught\nafter\n', 0],
    ["trap 'echo T' USR1; while kill -USR1 $$; do echo loop; break; done; echo after", 'T\nloop\nafter\n', 0],
    ["trap 'echo T' USR1; for i in 1 2; do kill -USR1 $$; done; echo after", 'T\nT\nafter\n', 0],
    ["trap 'echo T' USR1; if kill -USR1 $$; then echo yes; fi", 'T\nyes\n', 0],
    ["trap 'echo T' USR1; kill -USR1 $$ && echo and", 'T\nand\n', 0],
    ["trap 'echo T' USR1; { kill -USR1 $$; echo g; } | cat; echo after", 'g\nT\nafter\n', 0],
    ['trap \'echo T\' USR1; f(){ kill -USR1 $$; return 3; }; f; echo "rc=$?"', 'T\nrc=3\n', 0],
    ["trap 'echo T' USR1; { kill -USR1 $$; echo g; }; echo after", 'T\ng\nafter\n', 0],
    ["trap 'echo T; false' USR1; set -e; kill -USR1 $$; echo after", 'T\n', 1],
    ["trap 'false || echo T' USR1; set -e; kill -USR1 $$; echo after", 'T\nafter\n', 0],
  ])('%s', async (script, stdout, exitCode) => {
    const r = await guest.sh(script);
    expect({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode }).toEqual({ stdout, stderr: '', exitCode });
  });
});
