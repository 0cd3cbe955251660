import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * busybox's uniq (coreutils/uniq.c), its options glued or apart (issue #41 item 5). Each case was
 * run on the test beds' busybox 1.35 on LXD 5.0.2 and Incus 6.0.4, held to the simulator's
 * (`src/simulator/guest/busybox-uniq.ts`).
 */
const cases: ShScript[] = [
  // Its usage, as --help prints it.
  {
    script: 'uniq --help; echo $?',
    stdout: '0\n',
    stderr:
      'BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: uniq [-cduiz] [-f,s,w N] [FILE [OUTFILE]]\n\nDiscard duplicate lines\n\n\t-c\tPrefix lines by the number of occurrences\n\t-d\tOnly print duplicate lines\n\t-u\tOnly print unique lines\n\t-i\tIgnore case\n\t-z\tNUL terminated output\n\t-f N\tSkip first N fields\n\t-s N\tSkip first N chars (after any skipped fields)\n\t-w N\tCompare N characters in line\n',
    exitCode: 0,
  },
  // -i (A to Z), -c, -z (NUL-ended output), -f and -s and -w (glued or apart, any number; 0 compares nothing); -D is not busybox's.
  {
    script:
      "cd /tmp; printf 'a b\\nA b\\nb c\\nb c\\nd e\\n' > u; uniq -i u; uniq -ci u; uniq -D u; echo $?; uniq -z u | od -c | head -2; uniq -f1 -c u; uniq -s2 -w1 u; uniq -f 5 u; uniq -w0 u; uniq -fx u; echo $?",
    stdout:
      'a b\nb c\nd e\n      2 a b\n      2 b c\n      1 d e\n1\n0000000   a       b  \\0   A       b  \\0   b       c  \\0   d       e  \\0\n0000020\n      2 a b\n      2 b c\n      1 d e\na b\nb c\nd e\na b\na b\n1\n',
    stderr:
      "uniq: invalid option -- 'D'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: uniq [-cduiz] [-f,s,w N] [FILE [OUTFILE]]\n\nDiscard duplicate lines\n\n\t-c\tPrefix lines by the number of occurrences\n\t-d\tOnly print duplicate lines\n\t-u\tOnly print unique lines\n\t-i\tIgnore case\n\t-z\tNUL terminated output\n\t-f N\tSkip first N fields\n\t-s N\tSkip first N chars (after any skipped fields)\n\t-w N\tCompare N characters in line\nuniq: invalid number 'x'\n",
    exitCode: 0,
  },
  // FILE and OUTFILE, a missing file, three operands; a last line without its newline; -c with -d or -u, and -d with -u.
  {
    script:
      "cd /tmp; printf 'a\\na\\nb\\n' > u2; uniq u2 out; cat out; uniq nosuch; echo $?; uniq u2 u2 u2; echo $?; printf 'x\\nx' | uniq; printf 'x\\nx' | uniq -c; uniq -cd u2; uniq -cu u2; uniq -du u2; echo $?",
    stdout: 'a\nb\n1\n1\nx\n      2 x\n      2 a\n      1 b\n0\n',
    stderr:
      "uniq: can't open 'nosuch': No such file or directory\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: uniq [-cduiz] [-f,s,w N] [FILE [OUTFILE]]\n\nDiscard duplicate lines\n\n\t-c\tPrefix lines by the number of occurrences\n\t-d\tOnly print duplicate lines\n\t-u\tOnly print unique lines\n\t-i\tIgnore case\n\t-z\tNUL terminated output\n\t-f N\tSkip first N fields\n\t-s N\tSkip first N chars (after any skipped fields)\n\t-w N\tCompare N characters in line\n",
    exitCode: 0,
  },
  // A field is blanks then what is not blank; the blanks after count.
  {
    script:
      "cd /tmp; printf '  a x\\n b x\\nc y\\n' > w; uniq -f1 w; uniq -s1 w; printf 'a\\tb\\na  b\\n' | uniq -f1; printf 'ab\\nac\\n' | uniq -w1 -c",
    stdout: '  a x\nc y\n  a x\n b x\nc y\na\tb\na  b\n      2 ab\n',
    stderr: '',
    exitCode: 0,
  },
  // `uniq f f` truncates f before reading it; an OUTFILE that does not open; a directory read fails; a refused write to stdout fails at stdio's flush.
  {
    script:
      "cd /tmp; printf 'a\\na\\n' > ff; uniq ff ff; wc -c < ff; uniq -c < /dev/null; echo $?; printf 'q\\nq\\n' | uniq - o3; cat o3; uniq ff /nd/x; echo $?; mkdir -p dq; uniq dq; echo $?; printf 'x\\ny\\n' | uniq -c > /dev/full; echo $?",
    stdout: '0\n0\nq\n1\n1\n0\n',
    stderr: "uniq: can't open '/nd/x': No such file or directory\nuniq: dq: I/O error\nuniq: standard output: No space left on device\n",
    exitCode: 0,
  },
];

await conformance("busybox's uniq, its fields, characters and files", (target) => {
  shScripts(target, launchPerSuite(target), cases);
});
