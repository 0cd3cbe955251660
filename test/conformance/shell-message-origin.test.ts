import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * Where the guest shell's own messages say they come from, as busybox ash words them: a command not
 * found and a redirection that fails say `eval: line N:` while `eval` runs (functions it calls,
 * subshells, substitutions and jobs it starts too), the sourced file's name and line inside `.`,
 * and the line in a named script; the line inside `eval`'s text counts on from the line `eval` is
 * on. Each case was run on the test beds' busybox `sh` on LXD 5.0.2 and Incus 6.0.4 (the same
 * answers on both), held to the simulator's shell (patches/README.md 113).
 */
const cases: ShScript[] = [
  {
    script: "echo\ncd /x1\neval 'cd /x2'\neval nosuch1\neval '\n\nnosuch2'\neval '\n\ncd /x3'",
    stdout: '\n',
    stderr:
      "sh: cd: line 1: can't cd to /x1: No such file or directory\nsh: cd: line 2: can't cd to /x2: No such file or directory\nsh: eval: line 3: nosuch1: not found\nsh: eval: line 6: nosuch2: not found\nsh: cd: line 9: can't cd to /x3: No such file or directory\n",
    exitCode: 2,
  },
  // A function keeps the lines it was defined on; called while eval runs, its messages are eval's.
  {
    script: "echo\nf() {\n  nosuch3\n}\neval f\neval 'f\ng() { cd /x5; }\ng'",
    stdout: '\n',
    stderr:
      "sh: eval: line 2: nosuch3: not found\nsh: eval: line 2: nosuch3: not found\nsh: cd: line 6: can't cd to /x5: No such file or directory\n",
    exitCode: 2,
  },
  // The innermost of eval and `.` names the message.
  {
    script: "echo a > s; eval '. ./s; nosuch6'; echo 'eval nosuch7' > s2; . ./s2",
    stdout: '',
    stderr: 'sh: ./s: line 1: a: not found\nsh: eval: line 0: nosuch6: not found\nsh: eval: line 1: nosuch7: not found\n',
    exitCode: 127,
  },
  {
    script: "eval 'x=$(nosuch10)'; eval 'nosuch11 &' ; wait; eval '( nosuch12 )'; eval 'echo | nosuch13'",
    stdout: '',
    stderr:
      'sh: eval: line 0: nosuch10: not found\nsh: eval: line 0: nosuch11: not found\nsh: eval: line 0: nosuch12: not found\nsh: eval: line 0: nosuch13: not found\n',
    exitCode: 127,
  },
  // A redirection that fails: the same origins.
  {
    script: "eval 'nosuch8 2>/dev/null'; eval 'nosuch9' 2>/dev/null; echo $?; eval 'exec 3< /nosuch'; echo $?",
    stdout: '127\n',
    stderr: "sh: eval: line 0: can't open /nosuch: no such file\n",
    exitCode: 1,
  },
  {
    script: "echo 'cat < /nosuch' > s; . ./s; echo 'echo > /nd/x' > s; . ./s; echo 'exec 3< /nosuch' > s; . ./s",
    stdout: '',
    stderr:
      "sh: ./s: line 1: can't open /nosuch: no such file\nsh: ./s: line 1: can't create /nd/x: nonexistent directory\nsh: ./s: line 1: can't open /nosuch: no such file\n",
    exitCode: 1,
  },
  {
    script: "echo\neval 'cat < /nosuch\necho > /nd/x'\nf() { cat < /nosuch; }\neval f",
    stdout: '\n',
    stderr:
      "sh: eval: line 1: can't open /nosuch: no such file\nsh: eval: line 2: can't create /nd/x: nonexistent directory\nsh: eval: line 3: can't open /nosuch: no such file\n",
    exitCode: 1,
  },
  {
    script: "printf 'echo\\ncat < /nosuch\\necho > /nd/x\\n' > s; sh s; sh -c 'cat < /nosuch' NAME; sh -c 'eval \"cat < /nosuch\"; eval nosuch' NAME",
    stdout: '\n',
    stderr:
      "s: line 2: can't open /nosuch: no such file\ns: line 3: can't create /nd/x: nonexistent directory\nNAME: line 0: can't open /nosuch: no such file\nNAME: eval: line 0: can't open /nosuch: no such file\nNAME: eval: line 0: nosuch: not found\n",
    exitCode: 127,
  },
  {
    script: "x=$(cat < /nosuch); y=$(eval 'cat < /nosuch'); eval 'echo $(cat < /nosuch)'",
    stdout: '\n',
    stderr:
      "sh: can't open /nosuch: no such file\nsh: eval: line 0: can't open /nosuch: no such file\nsh: eval: line 0: can't open /nosuch: no such file\n",
    exitCode: 0,
  },
  {
    script: "eval 'for i in 1; do cat < /nosuch; done'; eval '{ echo; } > /nd/x'; eval 'cat < /nosuch &'; wait",
    stdout: '',
    stderr:
      "sh: eval: line 0: can't open /nosuch: no such file\nsh: eval: line 0: can't create /nd/x: nonexistent directory\nsh: eval: line 0: can't open /nosuch: no such file\n",
    exitCode: 0,
  },
  // An alias that expands to more than a command, and a trap's action, are not eval: their messages say no origin but their own.
  {
    script: "echo\nalias q='echo one; cd /z;'\nq x\neval 'q nosuchw'",
    stdout: '\none\none\n',
    stderr:
      "sh: cd: line 2: can't cd to /z: No such file or directory\nsh: x: not found\nsh: cd: line 3: can't cd to /z: No such file or directory\nsh: eval: line 3: nosuchw: not found\n",
    exitCode: 127,
  },
  {
    script: "echo\ntrap 'cd /y; nosuch' USR1\nkill -USR1 $$\necho",
    stdout: '\n\n',
    stderr: "sh: cd: line 2: can't cd to /y: No such file or directory\nsh: nosuch: not found\n",
    exitCode: 0,
  },
  // $LINENO inside eval's text counts on from the line eval is on, as its syntax errors do.
  {
    script: "echo\neval 'echo $LINENO\necho $LINENO'\neval 'if then'\neval 'echo a\nfi'",
    stdout: '\n1\n2\n',
    stderr: 'sh: eval: line 3: syntax error: unexpected "then"\n',
    exitCode: 2,
  },
];

await conformance("the guest shell's own messages name where they come from: eval's line, a sourced file, a named script", (target) => {
  shScripts(target, launchPerSuite(target), cases);
});
