import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestShell, type GuestShell } from './sim-client.js';

/**
 * A shell started inside the exec's (`sh -c`, `sh FILE`, `sh` reading a pipe, a script run by its
 * path) is a process of its own, as on the beds: its own `$$` and `$PPID`, only the variables it was
 * exported (no functions), its own traps, EXIT trap and umask, and a signal to its `$$` ends it
 * alone, its parent saying how it died and going on. Each answer below is LXD 5.0.2's.
 */
let guest: GuestShell;

beforeAll(async () => {
  guest = await startGuestShell('shellproc');
});

afterAll(async () => {
  await guest.close();
});

describe('a shell started inside the exec shell is a process of its own', () => {
  it.each([
    [
      'x=1; f() { echo f; }; printf \'#!/bin/sh\\necho "x=$x"; f\\n\' > /tmp/p; chmod +x /tmp/p; /tmp/p; echo rc=$?',
      'x=\nrc=127\n',
      '/tmp/p: line 2: f: not found\n',
    ],
    ["sh -c 'echo $$' > /tmp/a; echo $$ > /tmp/b; cmp -s /tmp/a /tmp/b && echo same || echo differ", 'differ\n', ''],
    ['sh -c \'kill $$; echo in\'; echo "after $?"', 'after 143\n', 'Terminated\n'],
    ["sh -c 'umask 077'; umask", '0022\n', ''],
    ['sh -c \'trap "echo X" EXIT; echo body\'; echo after', 'body\nX\nafter\n', ''],
    ["trap 'echo T' TERM; sh -c 'kill $$'; echo after $?", 'after 143\n', 'Terminated\n'],
    ['sh -c \'trap "echo N" TERM; kill $$; echo in\'; echo after $?', 'N\nin\nafter 0\n', ''],
    ["printf 'echo $$\\nkill $$\\necho in\\n' > /tmp/k; sh /tmp/k > /tmp/o; echo after $?; cat /tmp/o | wc -l", 'after 143\n1\n', 'Terminated\n'],
    ["printf '#!/bin/sh\\nkill $$\\necho in\\n' > /tmp/k2; chmod +x /tmp/k2; /tmp/k2; echo after $?", 'after 143\n', 'Terminated\n'],
    ['sh -c \'echo $PPID\' > /tmp/pp; [ "$(cat /tmp/pp)" = "$$" ] && echo ppid-ok', 'ppid-ok\n', ''],
    ['umask 077; sh -c umask', '0077\n', ''],
    ["trap '' INT; sh -c 'trap'", '', ''],
    ["sh -c 'kill -9 $$'; echo after $?", 'after 137\n', 'Killed\n'],
    ['printf \'#!/bin/sh\\ntrap "echo X" EXIT\\necho in\\n\' > /tmp/e; chmod +x /tmp/e; /tmp/e; echo after', 'in\nX\nafter\n', ''],
    [
      "printf '#!/bin/sh\\necho $$\\n' > /tmp/d; chmod +x /tmp/d; /tmp/d > /tmp/a; echo $$ > /tmp/b; cmp -s /tmp/a /tmp/b && echo same || echo differ",
      'differ\n',
      '',
    ],
    ['sh -c \'kill -USR1 $$; echo in\'; echo "after $?"', 'after 138\n', 'User defined signal 1\n'],
    ['echo \'kill $$; echo in\' | sh; echo "after $?"', 'after 143\n', 'Terminated\n'],
    ['sh -c \'sh -c "kill \\$PPID"; echo in\'; echo "after $?"', 'after 143\n', 'Terminated\n'],
  ])('%s', async (script, stdout, stderr) => {
    const r = await guest.sh(script);
    expect({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode }).toEqual({ stdout, stderr, exitCode: 0 });
  });
});
