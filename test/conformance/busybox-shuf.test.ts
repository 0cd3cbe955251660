import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * busybox's shuf, and the `-o FILE` it shares with sort (issue #41 item 5: the commands scripts
 * use). Each case was run on the test beds' busybox 1.35 on LXD 5.0.2 and Incus 6.0.4 (the same
 * answers on both; what is random is counted or sorted), held to the simulator's
 * (`src/simulator/guest/busybox-shuf.ts`).
 */
const usage =
  'BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: shuf [-n NUM] [-o FILE] [-z] [FILE | -e [ARG...] | -i L-H]\n\nRandomly permute lines\n\n' +
  '\t-n NUM\tOutput at most NUM lines\n\t-o FILE\tWrite to FILE, not standard output\n\t-z\tNUL terminated output\n\t-e\tTreat ARGs as lines\n\t-i L-H\tTreat numbers L-H as lines\n';

const cases: ShScript[] = [
  { script: 'shuf --help; echo $?', stdout: '0\n', stderr: usage, exitCode: 0 },
  {
    script: 'shuf -x; echo $?; shuf -n; echo $?; shuf --nosuch; echo $?',
    stdout: '1\n1\n1\n',
    stderr: `shuf: invalid option -- 'x'\n${usage}shuf: option requires an argument -- 'n'\n${usage}shuf: unrecognized option '--nosuch'\n${usage}`,
    exitCode: 0,
  },
  // -n's number glued to it or apart; the last -n counts; a number is digits only.
  {
    script:
      "printf 'a\\nb\\nc\\n' > f; shuf -n1 f | wc -l; shuf -n 2 f | wc -l; shuf -n0 f | wc -l; shuf -nx f; echo $?; shuf -n -1 f; echo $?; shuf -n 1 -n 2 -e a b c | wc -l",
    stdout: '1\n2\n0\n1\n1\n2\n',
    stderr: "shuf: invalid number 'x'\nshuf: invalid number '-1'\n",
    exitCode: 0,
  },
  {
    script: "shuf -e a b c -n 99 | wc -l; shuf -n 4294967296 -e a; echo $?; shuf -n +2 -e a b c | wc -l; echo $?; shuf -n ' 2' -e a b; echo $?",
    stdout: '3\n1\n0\n0\n1\n',
    stderr: "shuf: invalid number '4294967296'\nshuf: invalid number '+2'\nshuf: invalid number ' 2'\n",
    exitCode: 0,
  },
  {
    script: 'shuf -i1-5 | sort; shuf -i 3-3; shuf -i5-1; echo $?; shuf -i1-x; echo $?; shuf -i 7; echo $?',
    stdout: '1\n2\n3\n4\n5\n3\n1\n1\n1\n',
    stderr: "shuf: bad range '5-1'\nshuf: invalid number 'x'\nshuf: bad range '7'\n",
    exitCode: 0,
  },
  {
    script:
      'shuf -i 0-0; shuf -i 1--2; echo $?; shuf -i -1-2; echo $?; shuf -i 4294967295-4294967295; shuf -i 1-2x; echo $?; shuf -i 00-01 | sort; shuf -i 1-2 -i 5-5',
    stdout: '0\n1\n1\n4294967295\n1\n0\n1\n5\n',
    stderr: "shuf: invalid number '-2'\nshuf: invalid number ''\nshuf: invalid number '2x'\n",
    exitCode: 0,
  },
  // -e takes every operand as a line, options among them too; it and -i exclude each other.
  { script: 'shuf -e a b c | sort; shuf -e; echo $?; shuf -e a -n1 b | wc -l', stdout: 'a\nb\nc\n0\n1\n', stderr: '', exitCode: 0 },
  {
    script: 'shuf f nosuch; echo $?; shuf nosuch; echo $?; shuf -i1-3 -e a; echo $?; shuf -e -i1-2; echo $?',
    stdout: '1\n1\n1\n1\n',
    stderr: `${usage}shuf: nosuch: No such file or directory\n${usage}${usage}`,
    exitCode: 0,
  },
  // A NUL ends a line as a newline does; the last line may lack its end; a directory reads as nothing.
  {
    script:
      "printf 'a\\0b\\0c\\0d\\n' | shuf | sort | od -c | sed 's/  */ /g'; printf 'a\\nb' | shuf | sort; printf '' | shuf | wc -c; shuf -e 'a\nb' | wc -l; mkdir -p d; shuf d; echo $?",
    stdout: '0000000 a \\n b \\n c \\n d \\n\n0000010\na\nb\n0\n2\n0\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "printf 'a\\nb\\n' | shuf -o out; sort out; shuf -z -e a b | tr '\\0' '\\n' | sort; shuf -z -e a | od -An -c; ls -l out | cut -c1-10; shuf -z < /dev/null | wc -c",
    stdout: 'a\nb\na\nb\n   a  \\0\n-rw-r--r--\n0\n',
    stderr: '',
    exitCode: 0,
  },
  // -o is opened after the input is read (`-o f f` shuffles f in place) and -n is read; a refused write fails at stdio's flush, status 0.
  {
    script:
      "printf 'a\\nb\\n' > f; shuf -o f f; sort f; shuf -e a -o /nd/x; echo $?; shuf -e a -o /tmp; echo $?; shuf -nx -o /nd/x nosuch; echo $?; shuf -nx -o /nd/x -e a; echo $?; shuf -nx -e a > /dev/full; echo $?",
    stdout: 'a\nb\n1\n1\n1\n1\n1\n',
    stderr:
      "shuf: can't open '/nd/x': No such file or directory\nshuf: can't open '/tmp': Is a directory\nshuf: nosuch: No such file or directory\nshuf: invalid number 'x'\nshuf: invalid number 'x'\n",
    exitCode: 0,
  },
  {
    script:
      "shuf -e a -o /dev/full; echo $?; shuf -e -o /dev/full; echo $?; printf 'b\\n' | sort -o /dev/full; echo $?; printf '' | sort -o /dev/full; echo $?",
    stdout: '0\n0\n0\n0\n',
    stderr: 'shuf: standard output: No space left on device\nsort: standard output: No space left on device\n',
    exitCode: 0,
  },
];

await conformance("busybox's shuf, and the -o FILE it shares with sort", (target) => {
  shScripts(target, launchPerSuite(target), cases);
});
