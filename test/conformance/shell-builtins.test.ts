import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * The guest shell's builtins that scripts and tools run first (issue #41 item 5): Ansible starts
 * every module with `umask 77 && mkdir …`, scripts clean up with `trap … EXIT`. Each case is the
 * test beds' busybox `sh` on LXD 5.0.2 and Incus 6.0.4, held to the simulator's shell.
 */
const cases: ShScript[] = [
  { script: 'umask', stdout: '0022\n', exitCode: 0 },
  { script: 'umask -S', stdout: 'u=rwx,g=rx,o=rx\n', exitCode: 0 },
  { script: 'umask 077; umask; umask 0027; umask -S', stdout: '0077\nu=rwx,g=rx,o=\n', exitCode: 0 },
  { script: 'umask 77 && mkdir -p /tmp/rt-ansible && echo made', stdout: 'made\n', exitCode: 0 },
  { script: 'umask 999', stdout: '', stderr: 'sh: umask: line 0: illegal mode: 999\n', exitCode: 2 },
  { script: 'trap "echo bye" EXIT; echo hi', stdout: 'hi\nbye\n', exitCode: 0 },
  { script: 'x=kept; trap "echo $x" EXIT; exit 3', stdout: 'kept\n', exitCode: 3 },
  { script: 'cd /tmp; trap pwd EXIT; y=1', stdout: '/tmp\n', exitCode: 0 },
  // ash's cd exports both PWD and OLDPWD (setpwd), so a program started after it has them.
  {
    script: 'cd /tmp; export -p | grep PWD; cd - >/dev/null; env | grep PWD | sort',
    stdout: "export OLDPWD='/root'\nexport PWD='/tmp'\nOLDPWD=/tmp\nPWD=/root\n",
    exitCode: 0,
  },
  { script: 'trap "echo t" INT TERM; trap', stdout: "trap -- 'echo t' INT\ntrap -- 'echo t' TERM\n", exitCode: 0 },
  { script: 'trap "echo no" EXIT; trap - EXIT; echo ok', stdout: 'ok\n', exitCode: 0 },
  { script: 'ulimit', stdout: 'unlimited\n', exitCode: 0 },
  // ash sets IFS at its start (not exported), so saving and restoring it keeps the splitting.
  {
    script: `[ "\${IFS}x" = "$(printf ' \\t\\nx')" ] && echo default; old=$IFS; IFS=:; IFS=$old; x="a b"; for w in $x; do echo "<$w>"; done; echo $(env | grep -c ^IFS=)`,
    stdout: 'default\n<a>\n<b>\n0\n',
    exitCode: 0,
  },
  // bash's variables and builtins that ash has not: unset, and not found.
  { script: 'echo "[$BASH_VERSION][$UID][$EUID][$BASHPID][$SECONDS]"', stdout: '[][][][][]\n', exitCode: 0 },
  { script: 'declare x=1 2>/dev/null; echo $?; type shopt; command -v typeset; echo $?', stdout: '127\nshopt: not found\n127\n', exitCode: 0 },
  // ash's own variables, set at its start and not exported, and `set` listing them as ash does:
  // each value in single quotes (a quote as "'"), FUNCNAME and LINENO empty, no arrays.
  {
    script: `set | grep -E "^(FUNCNAME|HOSTNAME|LINENO|OPTIND|PPID|PS1|PS2|PS4|PIPESTATUS)=" | sed "s/^HOSTNAME=.*/HOSTNAME/"`,
    stdout: "FUNCNAME=''\nHOSTNAME\nLINENO=''\nOPTIND='1'\nPPID='0'\nPS1='\\w \\$ '\nPS2='> '\nPS4='+ '\n",
    exitCode: 0,
  },
  {
    script: `a="'"; b="x'"; c="it''s"; d=""; x="a b"; set | grep -E "^[abcdx]="`,
    stdout: `a=''"'"\nb='x'"'"\nc='it'"''"'s'\nd=''\nx='a b'\n`,
    exitCode: 0,
  },
  {
    script: '[ "$HOSTNAME" = "$(hostname)" ] && echo same; env | grep -c HOSTNAME; echo "$OPTIND|$PS2|$PS4"; f() { echo "[$FUNCNAME]"; }; f',
    stdout: 'same\n0\n1|> |+ \n[f]\n',
    exitCode: 0,
  },
  // shift past the arguments is 1, silently; a count that is not a number ends the shell (2);
  // `$!` is empty before a background job.
  {
    script: 'set -- a b; shift 5; echo $?; echo "[$!]"; shift x; echo not reached',
    stdout: '1\n[]\n',
    stderr: 'sh: shift: line 0: Illegal number: x\n',
    exitCode: 2,
  },
  // A background job (`cmd &`): a subshell of its own (its cd and assignments stay in it), stdin at
  // end of file, `$!` its pid (above $$), `$?` 0 at once and under set -e, `wait PID` its status
  // (127 for a pid that is no job of the shell's, 2 and the message for what is no number), a
  // signal to it after it was waited for no such process. (Before the wait, a signal to it succeeds or not
  // on the beds as ash has reaped it or not: a race, left out.)
  {
    script:
      'set -e; false & p=$!; [ "$p" -gt $$ ] && echo bigger; wait $p || echo "rc=$?"; set +e; (exit 7) & wait $!; echo "rc=$?"; ' +
      'cd /tmp & x=1 & read v & q=$!; wait $q; echo "rc=$? $(pwd) [$x]"; kill -0 $q 2>/dev/null; echo "kill $?"; ' +
      'wait 99; echo "rc=$?"; wait x y; echo "rc=$?"',
    stdout: 'bigger\nrc=1\nrc=7\nrc=1 /root []\nkill 1\nrc=127\nrc=2\n',
    stderr: 'sh: wait: line 0: Illegal number: x\n',
    exitCode: 0,
  },
  // `type` with an option (any: ash skips one word that starts with -) names each command briefly:
  // an alias as its definition, a builtin or function by its name, a program by its path or applet
  // name, nothing for one not found (127).
  {
    script: `f() { :; }; alias a=b; type -t cd f a /bin/ls ls nosuch; echo "rc=$?"; type -- ls`,
    stdout: "cd\nf\nalias a='b'\n/bin/ls\nls\nrc=127\nls\n",
    exitCode: 0,
  },
  {
    script: 'getopts a; echo "rc=$?"',
    stdout: 'rc=2\n',
    stderr: 'sh: getopts: line 0: usage: getopts optstring var [arg]\n',
    exitCode: 0,
  },
  // A read-only variable given a value by export, readonly or local: the builtin names itself.
  { script: 'readonly r=1; export r=3; echo no', stdout: '', stderr: 'sh: export: line 0: r: is read only\n', exitCode: 2 },
  { script: 'readonly r=1; readonly r=5; echo no', stdout: '', stderr: 'sh: readonly: line 0: r: is read only\n', exitCode: 2 },
  { script: 'readonly r=1; f() { local r=2; }; f; echo no', stdout: '', stderr: 'sh: local: line 0: r: is read only\n', exitCode: 2 },
  // ${X:?word} says the word, even an empty one.
  { script: 'X=; echo ${X:?""}; echo no', stdout: '', stderr: 'sh: X: \n', exitCode: 2 },
  // A special builtin's error that ends the shell goes where the command's redirections send it,
  // and ends the shell from inside a group, a function, a loop, an if or a case too.
  {
    script: 'readonly r=1; f() { shift x; }; { export r=3 2>&1; } | sed s/^/out:/; (exit x 2>/dev/null); echo "rc=$?"; f 2>/dev/null; echo no',
    stdout: 'out:sh: export: line 0: r: is read only\nrc=2\n',
    exitCode: 2,
  },
  { script: 'for i in 1; do shift x; done; echo no', stdout: '', stderr: 'sh: shift: line 0: Illegal number: x\n', exitCode: 2 },
  { script: '{ shift x; } 2>&1; echo no', stdout: 'sh: shift: line 0: Illegal number: x\n', stderr: '', exitCode: 2 },
  // bash's syntax that ash refuses when it reads the line (nothing of the line runs): arrays,
  // here-strings, C-style for, |&. A line before it has run.
  { script: 'echo a\necho b; a=(1 2); echo c', stdout: 'a\n', stderr: 'sh: syntax error: unexpected "("\n', exitCode: 2 },
  { script: 'echo a; cat <<< hi', stdout: '', stderr: 'sh: syntax error: unexpected redirection\n', exitCode: 2 },
  {
    script: 'echo a\nif true; then\n  for ((i=0;i<2;i++)); do echo $i; done\nfi',
    stdout: 'a\n',
    stderr: 'sh: syntax error: bad for loop variable\n',
    exitCode: 2,
  },
  { script: 'echo x |& cat; echo b', stdout: '', stderr: 'sh: syntax error: unexpected "&"\n', exitCode: 2 },
  // bash's expansions ash lacks end the shell where they are expanded; (( … )) is two subshells in ash, running a command.
  {
    script: 'x=AbC; echo ${x/b/z} ${x:1:1} ${#x}; echo ${x^^}; echo no',
    stdout: 'AzC b 3\n',
    stderr: 'sh: syntax error: bad substitution\n',
    exitCode: 2,
  },
  { script: 'y=x; echo ${!y}; echo no', stdout: '', stderr: 'sh: syntax error: bad substitution\n', exitCode: 2 },
  {
    script: '(( x = 2 )); echo "rc=$? x=$x"\necho a; (( ))',
    stdout: 'rc=127 x=\n',
    stderr: 'sh: x: not found\nsh: syntax error: unexpected ")"\n',
    exitCode: 2,
  },
  // The errors that end a shell that is not interactive, with 2, in ash's words.
  { script: 'echo $((1/0)); echo after', stdout: '', stderr: 'sh: divide by zero\n', exitCode: 2 },
  { script: 'echo $((x+)); echo after', stdout: '', stderr: 'sh: arithmetic syntax error\n', exitCode: 2 },
  { script: 'x=$(echo $((1/0))); echo "after $?"', stdout: 'after 2\n', stderr: 'sh: divide by zero\n', exitCode: 0 },
  { script: 'echo ${y?}; echo after', stdout: '', stderr: 'sh: y: parameter not set\n', exitCode: 2 },
  { script: 'x=; echo ${x:?}; echo after', stdout: '', stderr: 'sh: x: parameter not set or null\n', exitCode: 2 },
  { script: 'echo ${y?gone}; echo after', stdout: '', stderr: 'sh: y: gone\n', exitCode: 2 },
  { script: 'readonly r=1; r=2; echo after', stdout: '', stderr: 'sh: r: is read only\n', exitCode: 2 },
  { script: 'set -u; echo ${n:-ok}; echo $n; echo after', stdout: 'ok\n', stderr: 'sh: n: parameter not set\n', exitCode: 2 },
  { script: 'exit x; echo after', stdout: '', stderr: 'sh: exit: line 0: Illegal number: x\n', exitCode: 2 },
  { script: 'f() { local y=1; echo $y; }; f; local x=1; echo after', stdout: '1\n', stderr: 'sh: local: line 0: not in a function\n', exitCode: 2 },
  // test's numbers are strtoll's, whole (an empty one is a bad number: 2, not 0), and its other errors busybox's.
  {
    script: 'test 1 -eq a; echo $?; [ "" -ge 1 ] && echo t || echo f; test 99999999999999999999 -gt 1; echo $?',
    stdout: '2\nf\n2\n',
    stderr: 'sh: a: bad number\nsh: bad number\nsh: 99999999999999999999: out of range\n',
    exitCode: 0,
  },
  {
    script:
      '[ 1 -lt ]; echo $?; [ a b ]; echo $?; [ 1 -eq 1 ; echo $?; test " 1 " -eq 1; echo $?; test 9223372036854775807 -gt 9223372036854775806; echo $?',
    stdout: '2\n2\n2\n0\n0\n',
    stderr: 'sh: -lt: argument expected\nsh: b: unknown operand\nsh: missing ]\n',
    exitCode: 0,
  },
  // Past three arguments, test's grammar is busybox's (test.c): a word left over is an unknown operand, a
  // missing one is expected, a `(` needs its `)`; a bad number ends it where it is read; POSIX's four-argument `!`.
  {
    script:
      'test 1 2 3 4 5; echo $?; test ! a = a b; echo $?; test a -a; echo $?; test \\( 1 -eq 1; echo $?; [ a -o ]; echo $?; ' +
      'test a -eq 1 b; echo $?; [ -t x ]; echo $?; test \\( \\); echo $?',
    stdout: '2\n2\n2\n2\n2\n2\n2\n2\n',
    stderr:
      'sh: 2: unknown operand\nsh: b: unknown operand\nsh: argument expected\nsh: closing paren expected\nsh: argument expected\n' +
      'sh: a: bad number\nsh: x: bad number\nsh: closing paren expected\n',
    exitCode: 0,
  },
  {
    script:
      'test ! \\( ! a \\); echo $?; test \\( a -o b \\) -a \\( ! c \\); echo $?; test "" -o a; echo $?; test ! ! a; echo $?; ' +
      "test '(' = '('; echo $?; test -f /etc/passwd -a -d /tmp -a ! -e /nosuch; echo $?",
    stdout: '0\n1\n0\n0\n0\n0\n',
    exitCode: 0,
  },
  // printf's conversions are busybox's: another (`%q`, a bare `%`) prints what came before it, then 1.
  {
    script: 'printf "a%qb\\n" x; echo $?; printf "%z"; echo $?; printf "%s-%5.1f|%q" x 2.5 y; echo " $?"',
    stdout: 'a1\n1\nx-  2.5| 1\n',
    stderr: 'sh: %qb\\n: invalid format\nsh: %: invalid format\nsh: %q: invalid format\n',
    exitCode: 0,
  },
  // printf's complaints come before its output where both go to one place: its stdout is buffered to its end.
  {
    script: "printf '%d\\n' 1.5 2>&1; printf '%d %d\\n' x 2 2>&1; printf 'a%d\\n' 3 2>&1",
    stdout: "sh: invalid number '1.5'\n0\nsh: invalid number 'x'\n0 2\na3\n",
    stderr: '',
    exitCode: 0,
  },
  // ash has no brace expansion: the braces are kept as typed.
  { script: 'echo {a,b} a{1..3} x{}; mkdir -p /tmp/rt-q/{a,b}; ls /tmp/rt-q; rm -r /tmp/rt-q', stdout: '{a,b} a{1..3} x{}\n{a,b}\n', exitCode: 0 },
  // ash's options, in its order, and its help: its builtins, then busybox's applets.
  {
    script: 'set -e; set -o | head -3; set +o | tail -2',
    stdout: 'errexit         on\nnoglob          off\nignoreeof       off\nset +o vi\nset +o pipefail\n',
    exitCode: 0,
  },
  {
    script: 'help | head -3; help | tail -2; help | wc -l',
    stdout:
      'Built-in commands:\n------------------\n\t. : [ [[ alias bg break cd chdir command continue echo eval exec\n' +
      '\twatchdog wc wget which who whoami xargs xxd xz xzcat yes zcat\n\n34\n',
    exitCode: 0,
  },
  // read takes a line of a file or a pipe as text where its bytes are UTF-8 (its length in characters, equal to the
  // same text typed in the script), bytes where they are not.
  {
    script: 'printf \'é1\\né2\\n\' > /tmp/rt-u; while read l; do echo "$l" | od -An -tx1; done < /tmp/rt-u; read x < /tmp/rt-u; echo ${#x}',
    stdout: ' c3 a9 31 0a\n c3 a9 32 0a\n2\n',
    exitCode: 0,
  },
  {
    script:
      'printf \'é\\n\' > /tmp/rt-u; read x < /tmp/rt-u; case $x in é) echo match;; esac; [ "$x" = é ] && echo eq; echo "$x" > /tmp/rt-v; od -An -tx1 /tmp/rt-v',
    stdout: 'match\neq\n c3 a9 0a\n',
    exitCode: 0,
  },
  { script: 'printf \'a:é:b\\n\' | { IFS=: read a b c; echo "$b" | od -An -tx1; echo ${#b}; }', stdout: ' c3 a9 0a\n1\n', exitCode: 0 },
  { script: "printf 'é\\n' | sh -c 'read x; [ \"$x\" = é ] && echo eq; echo ${#x}'", stdout: 'eq\n1\n', exitCode: 0 },
  {
    script: "printf '日本\\n' > /tmp/rt-u; read x < /tmp/rt-u; echo ${#x} \"$x\"; printf 'é\\377\\n' > /tmp/rt-u; read x < /tmp/rt-u; echo ${#x}",
    stdout: '2 日本\n3\n',
    exitCode: 0,
  },
  // ash's ERR trap (bash's): after a command of a list ash reads (the script, eval's text, a sourced file) ends with a status
  // that is not 0, but for one ash tests (a condition, the left of && and ||, a negation) and not inside a function or a group;
  // before set -e ends the shell; not again from its own action.
  {
    script: 'trap \'echo "err $?"\' ERR; false; echo after $?; trap',
    stdout: 'err 1\nafter 1\ntrap -- \'echo "err $?"\' ERR\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "trap 'echo err' ERR; if false; then :; fi; false || true; ! false; true && false; false | true; true | false; while false; do :; done; echo end",
    stdout: 'err\nerr\nend\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: "trap 'echo err' ERR; f() { false; echo in-f; }; f; g() { return 3; }; g; (false); x=$(false); { false; }; echo end",
    stdout: 'in-f\nerr\nerr\nerr\nerr\nend\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: "trap 'echo err' ERR; eval false; eval 'false; true'; if eval false; then :; fi; eval false || true; echo end",
    stdout: 'err\nerr\nerr\nend\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "printf 'false\\necho in\\n' > /tmp/rt-e; trap 'echo err' ERR; . /tmp/rt-e; sh -c 'trap \"echo inner\" ERR; false'; nosuch 2>/dev/null; echo end",
    stdout: 'err\nin\ninner\nerr\nerr\nend\n',
    stderr: '',
    exitCode: 0,
  },
  { script: 'trap \'echo err; false\' ERR; false; echo "end $?"; trap - ERR; false; echo off', stdout: 'err\nend 1\noff\n', stderr: '', exitCode: 0 },
  { script: "trap 'echo err' ERR; set -e; false; echo no", stdout: 'err\n', stderr: '', exitCode: 1 },
  { script: "trap 'exit 7' ERR; false; echo no", stdout: '', stderr: '', exitCode: 7 },
  // read's options are ash's: bash's -a and -N are illegal (2).
  {
    script: "printf 'a b\\n' | { read -a arr; echo $?; }; read -x v < /dev/null; echo $?; read -N 1 v < /dev/null; echo $?",
    stdout: '2\n2\n2\n',
    stderr: 'sh: read: line 0: illegal option -a\nsh: read: line 0: illegal option -x\nsh: read: line 0: illegal option -N\n',
    exitCode: 0,
  },
  // hash as ash's (nothing listed, `line N` in its errors); job specs (`%1`, `%%`, `%-`) for kill and wait, a job keeping its number
  // until a new one takes the slot once it is done and waited for; ash keeps no command text, so `%name` names no job.
  {
    script: 'hash; echo $?; hash ls; hash; echo $?; hash nosuch; echo $?; hash -r; echo $?; hash -x; echo $?',
    stdout: '0\n0\n1\n0\n2\n',
    stderr: 'sh: hash: line 0: nosuch: not found\nsh: hash: line 0: illegal option -x\n',
    exitCode: 0,
  },
  {
    script:
      'kill %1; echo $?; sleep 0 & sleep 0 & kill %1 %2; echo $?; kill %-; echo $?; kill %+ %%; echo $?; kill %sl; echo $?; kill -9 %3; echo $?',
    stdout: '2\n0\n0\n0\n2\n2\n',
    stderr: 'sh: kill: line 0: %1: no such job\nsh: kill: line 0: %sl: no such job\nsh: kill: line 0: %3: no such job\n',
    exitCode: 0,
  },
  {
    script:
      'sleep 0 & wait; kill %1; echo $?; sleep 0 & sleep 0 & wait %1; echo $?; wait; sleep 0 & wait $!; kill %1 && echo k1; wait %3; echo $?; kill %2 && echo k2; wait %2; echo $?; wait %x; echo $?',
    stdout: '0\n0\nk1\n2\nk2\n0\n2\n',
    stderr: 'sh: wait: line 0: %3: no such job\nsh: wait: line 0: %x: no such job\n',
    exitCode: 0,
  },
  // return outside a function ends the script (a subshell, a `$(…)`) with its status, as exit does; its number is 0 to 255
  // modulo 256, anything else `Illegal number` (2, the script ends).
  {
    script:
      "sh -c 'false; return; echo no'; echo $?; sh -c 'return 5; echo no'; echo $?; (return 3; echo no); echo $?; x=$(return 4; echo no); echo \"$? [$x]\"",
    stdout: '1\n5\n3\n4 []\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "sh -c 'for i in 1 2; do return 6; done; echo no'; echo $?; sh -c 'if true; then return 7; fi; echo no'; echo $?; sh -c '{ return 8; }; echo no'; echo $?",
    stdout: '6\n7\n8\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: "sh -c 'return x; echo no'; echo $?; sh -c 'return -1'; echo $?; sh -c 'return 300'; echo $?",
    stdout: '2\n2\n44\n',
    stderr: 'sh: return: line 0: Illegal number: x\nsh: return: line 0: Illegal number: -1\n',
    exitCode: 0,
  },
  {
    script: "printf 'echo in; return 3; echo no\\n' > /tmp/r.sh; . /tmp/r.sh; echo $?; sh /tmp/r.sh; echo $?",
    stdout: 'in\n3\nin\n3\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'sh -c \'eval "return 9"; echo no\'; echo $?; sh -c \'trap "echo t" EXIT; return 2\'; echo $?',
    stdout: '9\nt\n2\n',
    stderr: '',
    exitCode: 0,
  },
  // An `exit` in the EXIT trap sets the shell's status (ash's exitshell); the trap's last status otherwise does not.
  { script: 'trap \'echo "exit $?"; exit 5\' EXIT; false', stdout: 'exit 1\n', stderr: '', exitCode: 5 },
  { script: "trap 'false' EXIT; true", stdout: '', stderr: '', exitCode: 0 },
  {
    script:
      "sh -c 'trap \"echo t; exit 6\" EXIT; exit 2'; echo $?; sh -c 'trap \"false\" EXIT; exit 2'; echo $?; (trap 'exit 4' EXIT; true); echo $?",
    stdout: 't\n6\n2\n4\n',
    stderr: '',
    exitCode: 0,
  },
  // getopts says ash's words for a missing value and an unknown option (no `sh:`), unless its option string starts with `:`.
  { script: 'getopts \'a:\' o -a; echo "rc=$? o=$o"', stdout: 'rc=0 o=?\n', stderr: 'No arg for -a option\n', exitCode: 0 },
  { script: 'getopts \'a\' o -z; echo "rc=$? o=$o a=$OPTARG"', stdout: 'rc=0 o=? a=\n', stderr: 'Illegal option -z\n', exitCode: 0 },
  {
    script: 'getopts \':a:\' o -a; echo "rc=$? o=$o a=$OPTARG"; OPTIND=1; getopts \':a\' o -z; echo "rc=$? o=$o a=$OPTARG"',
    stdout: 'rc=0 o=: a=a\nrc=0 o=? a=z\n',
    stderr: '',
    exitCode: 0,
  },
  { script: 'getopts \'a:\' o -a 2>&1; echo "rc=$? o=$o"', stdout: 'No arg for -a option\nrc=0 o=?\n', stderr: '', exitCode: 0 },
  {
    script: 'while getopts \'ab:\' opt -a -b; do echo "got $opt $OPTARG"; done; echo "end $OPTIND"',
    stdout: 'got a \ngot ? \nend 3\n',
    stderr: 'No arg for -b option\n',
    exitCode: 0,
  },
  { script: 'jobs; echo $?', stdout: '0\n', exitCode: 0 },
  { script: 'times', stdout: '0m0.000s 0m0.000s\n0m0.000s 0m0.000s\n', exitCode: 0 },
  { script: 'ls /nosuch; echo $?', stdout: '1\n', stderr: 'ls: /nosuch: No such file or directory\n', exitCode: 0 },
  { script: 'nosuchcmd', stdout: '', stderr: 'sh: nosuchcmd: not found\n', exitCode: 127 },
  // `-nt`/`-ot` compare whole seconds and are false when either file is missing; unset, export and readonly refuse a bad name, a read-only one or an unknown option as ash does (a special builtin's error ends the shell, 2); cd's options are -L and -P.
  {
    script:
      "cd /tmp && rm -rf nt && mkdir nt && cd nt && touch -d '2024-01-01 00:00:00' a && touch -d '2024-01-01 00:00:05' b && [ b -nt a ]; echo nt=$?; [ a -ot b ]; echo ot=$?; [ a -ot nosuch ]; echo ot2=$?; [ nosuch -ot a ]; echo ot3=$?; [ a -nt nosuch ]; echo nt3=$?; [ nosuch -nt a ]; echo nt4=$?; cd /tmp && rm -r nt",
    stdout: 'nt=0\not=0\not2=1\not3=1\nnt3=1\nnt4=1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'sh -c "unset 2x; echo after"; echo rc=$?; unset -f nosuchf; echo rc=$?; sh -c "unset -z; echo after"; echo rc=$?; sh -c "readonly q=1; unset -v q; echo after"; echo rc=$?; sh -c "readonly q=1; unset q; echo after"; echo rc=$?; sh -c \'unset "a[1]"\'; echo rc=$?',
    stdout: 'rc=2\nrc=0\nrc=2\nrc=2\nrc=2\nrc=2\n',
    stderr:
      'sh: unset: line 0: 2x: bad variable name\nsh: unset: line 0: illegal option -z\nsh: unset: line 0: q: is read only\nsh: unset: line 0: q: is read only\nsh: unset: line 0: a[1]: bad variable name\n',
    exitCode: 0,
  },
  {
    script:
      "sh -c 'export 2x=1; echo after'; echo rc=$?; sh -c 'readonly 2y=1; echo after'; echo rc=$?; sh -c 'export -z'; echo rc=$?; sh -c 'readonly -z'; echo rc=$?; sh -c 'readonly r=1; readonly r=2; echo after'; echo rc=$?; sh -c 'readonly r=1; export r=2'; echo rc=$?; export 3z 2>&1; echo not-run",
    stdout: 'rc=2\nrc=2\nrc=2\nrc=2\nrc=2\nrc=2\nsh: export: line 0: 3z: bad variable name\n',
    stderr:
      'sh: export: line 0: 2x: bad variable name\nsh: readonly: line 0: 2y: bad variable name\nsh: export: line 0: illegal option -z\nsh: readonly: line 0: illegal option -z\nsh: readonly: line 0: r: is read only\nsh: export: line 0: r: is read only\n',
    exitCode: 2,
  },
  {
    script: 'cd -z; echo rc=$?; cd -L /tmp; echo rc=$? $PWD; cd -P /; echo $PWD; cd -LP /tmp; pwd',
    stdout: 'rc=2\nrc=0 /tmp\n/\n/tmp\n',
    stderr: 'sh: cd: line 0: illegal option -z\n',
    exitCode: 0,
  },
  // A special builtin's error ends the subshell it is in (a pipeline's command, `( … )`, `$( … )`), not the script.
  {
    script: '{ shift x; } | cat; echo after1 $?; (shift x); echo after2 $?; y=$(shift x); echo after3 $?',
    stdout: 'after1 0\nafter2 2\nafter3 2\n',
    stderr: 'sh: shift: line 0: Illegal number: x\nsh: shift: line 0: Illegal number: x\nsh: shift: line 0: Illegal number: x\n',
    exitCode: 0,
  },
  {
    script: '{ unset 2x; } | cat; echo after1 $?; (unset 2x); echo after2 $?; y=$(unset 2x); echo after3 $?; f() { unset 2x; }; f; echo not',
    stdout: 'after1 0\nafter2 2\nafter3 2\n',
    stderr:
      'sh: unset: line 0: 2x: bad variable name\nsh: unset: line 0: 2x: bad variable name\nsh: unset: line 0: 2x: bad variable name\nsh: unset: line 0: 2x: bad variable name\n',
    exitCode: 2,
  },
  {
    script: '{ export 2x; } 2>&1 | cat; echo after1 $?; (readonly 3y=1); echo after2 $?',
    stdout: 'sh: export: line 0: 2x: bad variable name\nafter1 0\nafter2 2\n',
    stderr: 'sh: readonly: line 0: 3y: bad variable name\n',
    exitCode: 0,
  },
];

await conformance('the guest shell runs the builtins scripts start with (umask, trap, ulimit, jobs, times) as busybox sh does', (target) => {
  shScripts(target, launchPerSuite(target), cases);
});
