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
    ['export X=1; Y=2; Z=3 sh -c \'echo "$X.$Y.$Z"\'', '1..3\n', '', 0],
    ["set -e; sh -c 'false; echo in'; echo out", 'in\nout\n', '', 0],
    ["cd /tmp; sh -c 'pwd; cd /; pwd'; pwd", '/tmp\n/\n/tmp\n', '', 0],
    ["sh -c 'echo $0 $1 $# \"$@\"' a b c; sh -c 'exit 5'; echo $?", 'a b 2 b c\n5\n', '', 0],
    ["alias ll='ls -ld'; sh -c 'type ll'; echo rc=$?", 'll: not found\nrc=127\n', '', 0],
    ['readonly R=1; sh -c \'R=2; echo "R=$R"\'', 'R=2\n', '', 0],
    ['echo "$SHLVL"; sh -c \'echo $SHLVL; sh -c "echo \\$SHLVL"\'', '1\n2\n3\n', '', 0],
    ['printf \'#!/bin/sh\\nread x; echo "got $x $# $1"\\n\' > /tmp/s; chmod +x /tmp/s; echo hi | /tmp/s one; rm /tmp/s', 'got hi 1 one\n', '', 0],
    ['printf \'f() { echo "f $1"; exit 4; }\\nf x\\necho no\\n\' > /tmp/s; sh /tmp/s; echo rc=$?; rm /tmp/s', 'f x\nrc=4\n', '', 0],
    [
      'printf \'#!/bin/sh\\necho "$0"\\n\' > /tmp/s; chmod +x /tmp/s; cd /tmp; ./s; /tmp/s; PATH=/tmp:$PATH s; rm /tmp/s',
      './s\n/tmp/s\n/tmp/s\n',
      '',
      0,
    ],
    ["trap 'echo parent-exit' EXIT; sh -c 'trap \"echo child-exit\" EXIT; exit 2'; echo rc=$?", 'child-exit\nrc=2\nparent-exit\n', '', 0],
    ['sh -c \'trap "echo child-exit" EXIT; kill $$\'; echo rc=$?', 'rc=143\n', 'Terminated\n', 0],
    [
      'printf \'#!/bin/sh\\necho "pp=$PPID"\\n\' > /tmp/s; chmod +x /tmp/s; x=$(/tmp/s); [ "$x" = "pp=$$" ] && echo same || echo "differ $x"; rm /tmp/s',
      'same\n',
      '',
      0,
    ],
    ["sh -c 'kill -TERM $PPID; echo child'; echo after", 'child\n', '', 143],
    ["umask 027; printf '#!/bin/sh\\numask; umask 077\\n' > /tmp/s; chmod +x /tmp/s; /tmp/s; umask; rm /tmp/s", '0027\n0027\n', '', 0],
    ["sh -c 'kill -0 $$ && echo alive'; kill -0 99999; echo rc=$?", 'alive\nrc=1\n', "sh: can't kill pid 99999: No such process\n", 0],
    ["sh -c 'kill -CHLD $$; echo in'; echo rc=$?", 'in\nrc=0\n', '', 0],
    ['sh -c \'trap "" TERM; kill $$; echo in\'; echo rc=$?', 'in\nrc=0\n', '', 0],
    ["sh -c '(kill $$; echo sub); echo in'; echo rc=$?", 'sub\nrc=143\n', 'Terminated\n', 0],
    ["sh -c 'f() { kill $$; echo inf; }; f; echo in'; echo rc=$?", 'rc=143\n', 'Terminated\n', 0],
    ["sh -c 'kill $$ && echo and'; echo rc=$?", 'rc=143\n', 'Terminated\n', 0],
    ['sh -c \'echo x; kill $$\' | cat; echo "rc=$?"', 'x\nrc=0\n', 'Terminated\n', 0],
    ['echo "$(sh -c \'echo x; kill $$; echo y\')"; echo rc=$?', 'x\nrc=0\n', 'Terminated\n', 0],
    ["export X=1; ash -c 'echo $X $0; nosuch'; echo rc=$?; ash -c 'echo $1' n a", '1 ash\nrc=127\na\n', 'ash: nosuch: not found\n'],
    [
      "echo 'echo piped $0' | ash; printf 'echo f $0\\nnosuch\\n' > /tmp/s; ash /tmp/s; rm /tmp/s",
      'piped ash\nf /tmp/s\n',
      '/tmp/s: line 2: nosuch: not found\n',
    ],
  ] as [string, string, string, number?][])('%s', async (script, stdout, stderr, exitCode = 0) => {
    const r = await guest.sh(script);
    expect({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode }).toEqual({ stdout, stderr, exitCode });
  });
});
