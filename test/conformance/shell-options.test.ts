import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * ash's options and what reading a script does, as busybox 1.35 has them (each answer recorded on
 * LXD 5.0.2 and Incus 6.0.4, which agree): `sh`'s command line takes `set`'s letters and names for
 * a script from a file or stdin as for `-c`; `set` takes ash's letters (`-b -I -E` among them, `-i
 * -h` illegal and ending the shell), its names (an unknown one is status 1), and `$-` shows them
 * in ash's order; `set -v` echoes the lines the shell reads from a file, stdin or a sourced file
 * (whole lines, here-document bodies and comments too, before the commands they end), never a `-c`
 * string or `eval`'s text; a command substitution's status is the command's when nothing else
 * gives one (an assignment, a redirection alone), and `$?` stays the last command's while the
 * command's words are expanded; a file's syntax error at its end comes after its earlier lines
 * ran; and an empty redirection target is a missing file.
 */
const cases: ShScript[] = [
  {
    script:
      "cd /tmp && rm -rf so1 && mkdir so1 && cd so1 && printf 'x=1\\necho $x $1\\n' > g && sh -x g p; sh -ex g 2>&1; echo 'echo s' | sh -x; sh -n g; echo rc=$?; cd /tmp && rm -r so1",
    stdout: '1 p\n+ x=1\n+ echo 1\n1\ns\nrc=0\n',
    stderr: '+ x=1\n+ echo 1 p\n+ echo s\n',
    exitCode: 0,
  },
  {
    script:
      "sh -C -c 'echo a > /tmp/so2; echo b > /tmp/so2'; echo rc=$?; cat /tmp/so2; rm /tmp/so2; v=1 sh -a -c 'w=2; sh -c \"echo \\$w\"'; sh -b -I -E -c 'echo $-'; sh -o errtrace -o vi -c 'echo $-'; sh +e -e -x +x -c 'echo $-'",
    stdout: 'rc=1\na\n2\nEbcI\nEc\nce\n',
    stderr: "sh: can't create /tmp/so2: File exists\n",
    exitCode: 0,
  },
  {
    script: "sh -o nosuch -c 'echo not-run'; echo rc=$?; sh -V -c 'echo not-run'; echo rc=$?",
    stdout: 'rc=0\nrc=2\n',
    stderr: 'sh: illegal option -o nosuch\nsh: illegal option -V\n',
    exitCode: 0,
  },
  {
    script: "set -b; set -I; set -E; set -C; set -a; echo $-; set -o | grep -E 'ignoreeof|notify|errtrace|noclobber|allexport'; set +bIECa; echo $-",
    stdout: 'EbaCcI\nignoreeof       on\nnoclobber       on\nallexport       on\nnotify          on\nerrtrace        on\nc\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "set -m 2>&1; echo rc=$? $-; set -o nosuch; echo rc=$?; set +o nosuch -e; echo rc=$? $-; set -o vi; echo rc=$? $-; set -o monitor 2>&1; set -o | grep -E '^(vi|monitor) '",
    stdout:
      "sh: set: line 0: can't access tty; job control turned off\nrc=0 c\nrc=1\nrc=1 c\nrc=0 c\nsh: set: line 0: can't access tty; job control turned off\nmonitor         off\nvi              off\n",
    stderr: 'sh: set: line 0: illegal option -o nosuch\nsh: set: line 0: illegal option +o nosuch\n',
    exitCode: 0,
  },
  { script: 'set -Z; echo not-run', stdout: '', stderr: 'sh: set: line 0: illegal option -Z\n', exitCode: 2 },
  {
    script: "sh -c 'set -i; echo not-run'; echo rc=$?; sh -c 'set -h'; echo rc=$?; sh -c 'set -o emacs; echo run $?'; echo rc=$?",
    stdout: 'rc=2\nrc=2\nrun 1\nrc=0\n',
    stderr: 'sh: set: line 0: illegal option -i\nsh: set: line 0: illegal option -h\nsh: set: line 0: illegal option -o emacs\n',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp && rm -rf sv1 && mkdir sv1 && cd sv1 && printf 'echo a\\ncat <<E\\n  x\\nE\\n  echo b # c\\nf() {\\n echo in\\n}\\nf; f\\n\\n# tail\\n' > f && sh -v f 2>&1; cd /tmp && rm -r sv1",
    stdout: 'echo a\na\ncat <<E\n  x\nE\n  x\n  echo b # c\nb\nf() {\n echo in\n}\nf; f\nin\nin\n\n# tail\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp && rm -rf sv2 && mkdir sv2 && cd sv2 && printf 'set -v\\nx=$(echo q)\\neval \"echo e\"\\nsh -c \"echo n\"\\n. ./g\\necho a; echo b\\n' > f && printf 'echo g1\\n# g2\\n' > g && sh f 2>&1; printf 'echo a &&\\n  echo b\\n' | sh -v 2>&1; sh -v -c 'echo c-string' 2>&1; cd /tmp && rm -r sv2",
    stdout: 'x=$(echo q)\neval "echo e"\ne\nsh -c "echo n"\nn\n. ./g\necho g1\ng1\n# g2\necho a; echo b\na\nb\necho a &&\n  echo b\na\nb\nc-string\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp && rm -rf sv3 && mkdir sv3 && cd sv3 && printf 'echo a\\nif\\n' > f; sh -v f 2>&1; echo rc=$?; printf 'echo z\\n' > h; sh -nv h 2>&1; printf 'echo q\\necho \"b\\n' > k; sh k; echo rc=$?; cd /tmp && rm -r sv3",
    stdout: 'echo a\na\nif\nf: line 3: syntax error: unexpected end of file (expecting "then")\nrc=2\necho z\nq\nrc=2\n',
    stderr: 'k: line 3: syntax error: unterminated quoted string\n',
    exitCode: 0,
  },
  {
    script: 'echo "$(false)" $?; x=$(false); echo $?; x=$(false) y=1; echo $?; echo $(exit 4) $?; false; echo "$(true)" $?',
    stdout: ' 0\n1\n1\n0\n 1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'false; x=1; echo $?; false; x=$(true); echo $?; true; x=$(exit 3) y=$?; echo "$? $y"; false; case $(exit 3) in *) echo in=$?;; esac',
    stdout: '0\n0\n3 0\nin=1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'false; > /dev/null $(exit 4); echo $?; x=$(exit 2) > /dev/null; echo $?; false; echo $(echo $?) $?; if x=$(exit 3); then :; else echo else $?; fi',
    stdout: '4\n2\n1 1\nelse 3\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'echo > ""; echo rc=$?; cat < ""; echo rc=$?; echo hi >> ""; echo $?; cat <> ""; echo $?',
    stdout: 'rc=1\nrc=1\n1\n1\n',
    stderr:
      "sh: can't create : nonexistent directory\nsh: can't open : no such file\nsh: can't create : nonexistent directory\nsh: can't create : nonexistent directory\n",
    exitCode: 0,
  },
  {
    script: "sh -m -c 'echo $-'; echo rc=$?; sh -m -c 'echo out; exit 3' 2>&1; echo rc=$?",
    stdout: "c\nrc=0\nsh: can't access tty; job control turned off\nout\nrc=3\n",
    stderr: "sh: can't access tty; job control turned off\n",
    exitCode: 0,
  },
];

await conformance('the guest shell takes ash options, echoes the lines it reads under set -v and keeps $? through expansions', (target) => {
  shScripts(target, launchPerSuite(target), cases);
});
