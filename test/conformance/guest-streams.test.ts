import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * The exec's standard streams through `/dev/stdin`, `/dev/stdout`, `/dev/stderr` and `/dev/fd` (links
 * into `/proc/self/fd`), as LXD 5.0.2 and Incus 6.0.4 answer: the exec's own streams are the host's
 * pipes, which the container's root may not open again, while a pipe, a here-document or a file made
 * in the container opens again; held to the simulator's guest (`guest-streams.ts`).
 */
const cases: ShScript[] = [
  // /dev's links into /proc/self/fd, as LXC makes them.
  {
    script:
      "ls -l /dev/stdin /dev/stdout /dev/stderr /dev/fd | sed 's/ [A-Z][a-z][a-z] [ 0-9][0-9] [0-9:]* / DATE /'; readlink /dev/stdin; readlink /dev/fd",
    stdout:
      'lrwxrwxrwx    1 root     root            13 DATE /dev/fd -> /proc/self/fd\nlrwxrwxrwx    1 root     root            15 DATE /dev/stderr -> /proc/self/fd/2\nlrwxrwxrwx    1 root     root            15 DATE /dev/stdin -> /proc/self/fd/0\nlrwxrwxrwx    1 root     root            15 DATE /dev/stdout -> /proc/self/fd/1\n/proc/self/fd/0\n/proc/self/fd\n',
    stderr: '',
    exitCode: 0,
  },
  // The exec's own streams are the host's pipes: the container's root may not open them again, in each program's words.
  {
    script:
      'cat /dev/stdin; echo "rc=$?"; awk \'{print}\' /dev/stdin; echo "rc=$?"; head -c 3 /dev/fd/0; echo "rc=$?"; echo x | tee /dev/stderr; echo "rc=$?"; echo y | tee /dev/stdout; echo abc | dd of=/dev/stdout 2>/dev/null; echo "rc=$?"',
    stdout: 'rc=1\nrc=1\nrc=1\nx\nrc=1\ny\nrc=1\n',
    stderr:
      "cat: can't open '/dev/stdin': Permission denied\nawk: /dev/stdin: Permission denied\nhead: /dev/fd/0: Permission denied\ntee: /dev/stderr: Permission denied\ntee: /dev/stdout: Permission denied\n",
    exitCode: 0,
  },
  // The shell's redirections to and from the exec's own streams are refused likewise (the last command of a pipeline writes to the exec's stdout).
  {
    script:
      'echo x > /dev/stderr; echo "rc=$?"; echo y > /dev/stdout; echo "rc=$?"; echo z > /dev/fd/1; echo "rc=$?"; read v < /dev/stdin; echo "rc=$? v=$v"; echo w | echo x > /dev/stdout; echo "rc=$?"',
    stdout: 'rc=1\nrc=1\nrc=1\nrc=1 v=\nrc=1\n',
    stderr:
      "sh: can't create /dev/stderr: Permission denied\nsh: can't create /dev/stdout: Permission denied\nsh: can't create /dev/fd/1: Permission denied\nsh: can't open /dev/stdin: Permission denied\nsh: can't create /dev/stdout: Permission denied\n",
    exitCode: 0,
  },
  // A pipe made in the container opens again: what the program would read on its stdin.
  {
    script:
      "echo hi | cat /dev/stdin; echo a b | awk '{print $2}' /dev/stdin; echo hi | wc -c /dev/stdin; echo hi | sh -c 'cat /dev/stdin'; echo hi | (cat /dev/fd/0); echo pp | cat /proc/self/fd/0; echo w | { read v < /dev/stdin; echo \"v=$v\"; }; echo w | cat < /dev/fd/0",
    stdout: 'hi\nb\n3 /dev/stdin\nhi\nhi\npp\nv=w\nw\n',
    stderr: '',
    exitCode: 0,
  },
  // A file a redirection opened opens again, from its start.
  {
    script:
      'cd "$(mktemp -d)"; echo hi > f; cat /dev/stdin < f; cat /proc/self/fd/0 < f; cat /dev/fd/0 < f; echo a | cp /dev/stdin c; cat c; { read l; cat /dev/stdin; } < f',
    stdout: 'hi\nhi\nhi\na\nhi\n',
    stderr: '',
    exitCode: 0,
  },
  // A here-document is a pipe: it opens again.
  {
    script: 'cat <<EOT | cat /dev/stdin\nhere\nEOT\ncat /dev/stdin <<EOT\nhere2\nEOT\ntr a-z A-Z < /dev/stdin <<EOT\nhere3\nEOT',
    stdout: 'here\nhere2\n',
    stderr: "sh: can't open /dev/stdin: Permission denied\n",
    exitCode: 1,
  },
  // Where a pipe, a substitution or a redirection took stdout or stderr, a write through /dev/stdout or /dev/stderr goes there.
  {
    script:
      'cd "$(mktemp -d)"; { echo x > /dev/stderr; } 2> e; cat e; x=$(echo sub > /dev/stdout); echo "x=$x"; x=$(echo z > /dev/fd/1); echo "x=$x"; echo x | tee /dev/stderr | cat; echo y | tee /dev/stdout | cat; echo in | sh -c \'echo x > /dev/stderr; cat /dev/stdin\' 2>/dev/null; echo abc | dd of=/dev/stdout 2>/dev/null | cat',
    stdout: 'x\nx=sub\nx=z\nx\ny\ny\nin\nabc\n',
    stderr: 'tee: /dev/stderr: Permission denied\n',
    exitCode: 0,
  },
  // The exec's streams are pipes (test -p), owned by the host's root (65534 to the container), 0600.
  {
    script:
      "[ -p /dev/stdin ]; echo $?; echo | { [ -p /dev/stdin ]; echo $?; }; [ -L /dev/stdin ]; echo $?; [ -e /dev/stdout ]; echo $?; stat -c '%F %a %u %g' -L /proc/self/fd/0 /proc/self/fd/1 /dev/stderr",
    stdout: '0\n0\n0\n0\nfifo 600 65534 65534\nfifo 600 65534 65534\nfifo 600 65534 65534\n',
    stderr: '',
    exitCode: 0,
  },
  // /dev/fd/N opens the file fd N has open again (truncating it, as `>` does); a copy of the exec's stdout is refused; a descriptor not open is not there.
  {
    script:
      'cd "$(mktemp -d)"; exec 3> t; echo via3 > /dev/fd/3; cat t; echo a >&3; echo b > /dev/fd/3; cat t; exec 3>&1; echo three > /dev/fd/3; echo "rc=$?"; echo > /dev/fd/7; echo "rc=$?"; cat < /dev/fd/7; echo "rc=$?"; cat /dev/stdin <&-; echo "rc=$?"',
    stdout: 'via3\nb\nrc=1\nrc=1\nrc=1\nrc=1\n',
    stderr:
      "sh: can't create /dev/fd/3: Permission denied\nsh: can't create /dev/fd/7: nonexistent directory\nsh: can't open /dev/fd/7: no such file\ncat: can't open '/dev/stdin': No such file or directory\n",
    exitCode: 0,
  },
  // The programs a program starts (xargs, timeout, env) have its descriptors.
  {
    script:
      'echo data | xargs -I{} sh -c \'echo {} > /dev/stderr\'; echo "rc=$?"; echo x | timeout 5 cat /dev/stdin; env sh -c \'echo e > /dev/stderr\'; echo "rc=$?"',
    stdout: 'rc=123\nx\nrc=1\n',
    stderr: "sh: can't create /dev/stderr: Permission denied\nsh: can't create /dev/stderr: Permission denied\n",
    exitCode: 0,
  },
  // A stderr copied to the exec's own stdout (`2>&1` while fd 1 is the host's pipe) is the host's pipe too: opening it again is refused,
  // in a child shell and a group as in the command itself; copied to a pipe or a file, it opens.
  {
    script:
      "sh -c 'echo x > /dev/stderr' 2>&1; echo $?; sh -c 'echo x > /dev/stderr' 2>&1 | cat; echo $?; sh -c 'echo y > /dev/stderr' > /tmp/o 2>&1; cat /tmp/o; sh -c 'echo z > /dev/stderr' 2>&1 > /tmp/o; echo $?",
    stdout: "sh: can't create /dev/stderr: Permission denied\n1\nx\n0\ny\nsh: can't create /dev/stderr: Permission denied\n1\n",
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      '{ echo a > /dev/stderr; } 2>&1; echo $?; echo b 2>&1 > /dev/stderr; echo $?; cat /dev/stderr 2>&1; tee /dev/stderr < /dev/null 2>&1; echo $?; x=$(sh -c \'echo q > /dev/stderr\' 2>&1); echo "[$x]"',
    stdout:
      "sh: can't create /dev/stderr: Permission denied\n1\nsh: can't create /dev/stderr: Permission denied\n1\ncat: can't open '/dev/stderr': Permission denied\ntee: /dev/stderr: Permission denied\n1\n[q]\n",
    stderr: '',
    exitCode: 0,
  },
  // So after `exec 2>&1`; the shell's messages then written to stdout are worded as on stderr.
  {
    script: 'exec 2>&1; echo c > /dev/stderr; echo $?; nosuch; cd /x; cat < /nosuch; ls /nosuch',
    stdout:
      "sh: can't create /dev/stderr: Permission denied\n1\nsh: nosuch: not found\nsh: cd: line 0: can't cd to /x: No such file or directory\nsh: can't open /nosuch: no such file\nls: /nosuch: No such file or directory\n",
    stderr: '',
    exitCode: 1,
  },
];

await conformance("the exec's streams reopen through /dev/stdin and its kin as the container's descriptors do", (target) => {
  const name = launchPerSuite(target);
  shScripts(target, name, cases);
});
