import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * busybox 1.35's diff, whose output is unified only: its options (`-b -w -i -B -U N -L -N -q -s -t
 * -T -r -S`), a file against a directory, two directories with and without `-r` (`Only in`,
 * `Common subdirectories`, a regular file against a directory, a directory the other side lacks
 * skipped under `-r`), binary files, a missing newline at the end, the same file twice. Each answer
 * was recorded on LXD 5.0.2 and Incus 6.0.4, which agree; each case works in a directory of its own.
 */
const cases: ShScript[] = [
  {
    script: 'diff 2>&1; echo $?; diff --help 2>&1; echo $?',
    stdout:
      'BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: diff [-abBdiNqrTstw] [-L LABEL] [-S FILE] [-U LINES] FILE1 FILE2\n\nCompare files line by line and output the differences between them.\nThis implementation supports unified diffs only.\n\n\t-a\tTreat all files as text\n\t-b\tIgnore changes in the amount of whitespace\n\t-B\tIgnore changes whose lines are all blank\n\t-d\tTry hard to find a smaller set of changes\n\t-i\tIgnore case differences\n\t-L\tUse LABEL instead of the filename in the unified header\n\t-N\tTreat absent files as empty\n\t-q\tOutput only whether files differ\n\t-r\tRecurse\n\t-S\tStart with FILE when comparing directories\n\t-T\tMake tabs line up by prefixing a tab when necessary\n\t-s\tReport when two files are the same\n\t-t\tExpand tabs to spaces in output\n\t-U\tOutput LINES lines of context\n\t-w\tIgnore all whitespace\n1\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: diff [-abBdiNqrTstw] [-L LABEL] [-S FILE] [-U LINES] FILE1 FILE2\n\nCompare files line by line and output the differences between them.\nThis implementation supports unified diffs only.\n\n\t-a\tTreat all files as text\n\t-b\tIgnore changes in the amount of whitespace\n\t-B\tIgnore changes whose lines are all blank\n\t-d\tTry hard to find a smaller set of changes\n\t-i\tIgnore case differences\n\t-L\tUse LABEL instead of the filename in the unified header\n\t-N\tTreat absent files as empty\n\t-q\tOutput only whether files differ\n\t-r\tRecurse\n\t-S\tStart with FILE when comparing directories\n\t-T\tMake tabs line up by prefixing a tab when necessary\n\t-s\tReport when two files are the same\n\t-t\tExpand tabs to spaces in output\n\t-U\tOutput LINES lines of context\n\t-w\tIgnore all whitespace\n0\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp && rm -rf dx && mkdir dx && cd dx && printf 'a\\nb\\nc\\n' > f1 && printf 'a\\nB\\nc\\n' > f2 && diff f1 f2; diff -u f1 f2; diff -i f1 f2; echo $?; diff -s f1 f1; echo $?; diff -q f1 f2; echo $?; diff -sq f1 f1",
    stdout: '--- f1\n+++ f2\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n--- f1\n+++ f2\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n0\n0\nFiles f1 and f2 differ\n1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp && rm -rf dx && mkdir dx && cd dx && printf 'a b\\n' > e1 && printf 'a  b \\n' > e2 && printf 'ab\\n' > e3 && diff -b e1 e2; echo $?; diff -w e1 e3; echo $?; diff -b e1 e3; echo $?",
    stdout: '0\n0\n--- e1\n+++ e3\n@@ -1 +1 @@\n-a b\n+ab\n1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp && rm -rf dx && mkdir dx && cd dx && seq 1 20 > f1 && seq 1 20 | sed 's/^10$/X/; s/^3$/Y/' > f2 && diff f1 f2; diff -U1 f1 f2; diff -U 0 f1 f2; diff -U5 f1 f2",
    stdout:
      '--- f1\n+++ f2\n@@ -1,13 +1,13 @@\n 1\n 2\n-3\n+Y\n 4\n 5\n 6\n 7\n 8\n 9\n-10\n+X\n 11\n 12\n 13\n--- f1\n+++ f2\n@@ -2,3 +2,3 @@\n 2\n-3\n+Y\n 4\n@@ -9,3 +9,3 @@\n 9\n-10\n+X\n 11\n--- f1\n+++ f2\n@@ -3 +3 @@\n-3\n+Y\n@@ -10 +10 @@\n-10\n+X\n--- f1\n+++ f2\n@@ -1,15 +1,15 @@\n 1\n 2\n-3\n+Y\n 4\n 5\n 6\n 7\n 8\n 9\n-10\n+X\n 11\n 12\n 13\n 14\n 15\n',
    stderr: '',
    exitCode: 1,
  },
  {
    script:
      'cd /tmp && rm -rf dx && mkdir -p dx/r1/s dx/r2/s dx/r1/d1 && cd dx && echo x > r1/a && echo y > r2/a && echo z > r1/only && echo w > r2/s/k && echo v > r1/s/k && echo same > r1/s/same && echo same > r2/s/same && diff -r r1 r2; echo $?; diff -rq r1 r2; echo $?; diff r1 r2; echo $?; diff -rs r1 r2 | grep identical',
    stdout:
      '--- r1/a\n+++ r2/a\n@@ -1 +1 @@\n-x\n+y\nOnly in r1: only\n--- r1/s/k\n+++ r2/s/k\n@@ -1 +1 @@\n-v\n+w\n1\nFiles r1/a and r2/a differ\nOnly in r1: only\nFiles r1/s/k and r2/s/k differ\n1\n--- r1/a\n+++ r2/a\n@@ -1 +1 @@\n-x\n+y\nOnly in r1: d1\nOnly in r1: only\nCommon subdirectories: r1/s and r2/s\n1\nFiles r1/s/same and r2/s/same are identical\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp && rm -rf dx && mkdir -p dx && cd dx && printf 'a\\n' > g1 && diff -N g1 none; echo $?; diff -N none g1; echo $?; diff -rN g1 g1; echo $?",
    stdout: '--- g1\n+++ none\n@@ -1 +0,0 @@\n-a\n1\n--- none\n+++ g1\n@@ -0,0 +1 @@\n+a\n1\n0\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp && rm -rf dx && mkdir -p dx && cd dx && printf 'a\\n\\nb\\n' > h1 && printf 'a\\nb\\n' > h2 && diff -B h1 h2; echo $?; printf 'a\\n\\n\\nb\\nc\\n' > h3; printf 'a\\nb\\nd\\n' > h4; diff -B h3 h4; echo $?",
    stdout: '0\n--- h3\n+++ h4\n@@ -1,5 +1,3 @@\n a\n-\n-\n b\n-c\n+d\n1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp && rm -rf dx && mkdir -p dx && cd dx && printf 'a\\tb\\nq\\n' > t1 && printf 'a\\tc\\nq\\n' > t2 && diff -t t1 t2; diff -T t1 t2; diff -L left -L right t1 t2; diff -L only t1 t2",
    stdout:
      '--- t1\n+++ t2\n@@ -1,2 +1,2 @@\n-a       b\n+a       c\n q\n--- t1\n+++ t2\n@@ -1,2 +1,2 @@\n-\ta\tb\n+\ta\tc\n \tq\n--- left\n+++ right\n@@ -1,2 +1,2 @@\n-a\tb\n+a\tc\n q\n--- only\n+++ t2\n@@ -1,2 +1,2 @@\n-a\tb\n+a\tc\n q\n',
    stderr: '',
    exitCode: 1,
  },
  {
    script:
      "cd /tmp && rm -rf dx && mkdir -p dx && cd dx && printf 'a\\nb' > n1 && printf 'a\\nc' > n2 && printf 'a\\nc\\n' > n3 && diff n1 n2; diff n2 n3; echo $?",
    stdout:
      '--- n1\n+++ n2\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n--- n2\n+++ n3\n@@ -1,2 +1,2 @@\n a\n-c\n\\ No newline at end of file\n+c\n1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'cd /tmp && rm -rf dx && mkdir -p dx/d && cd dx && echo a > f && echo b > d/f && diff f d; echo $?; diff d f; echo $?; diff d d; echo $?',
    stdout: '--- f\n+++ d/f\n@@ -1 +1 @@\n-a\n+b\n1\n--- d/f\n+++ f\n@@ -1 +1 @@\n-b\n+a\n1\n0\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp && rm -rf dx && mkdir -p dx && cd dx && printf '\\0\\1bin' > b1 && printf '\\0\\2bin' > b2 && diff b1 b2; echo $?; diff -a b1 b2 | tail -n +3 | od -c | head -2",
    stdout:
      'Files b1 and b2 differ\n1\n0000000   @   @       -   1       +   1       @   @  \\n   -  \\0 001   b\n0000020   i   n  \\n   \\       N   o       n   e   w   l   i   n   e    \n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp && rm -rf dx && mkdir -p dx && cd dx && printf '1\\n2\\n3\\n' > p && printf '0\\n1\\n2\\n3\\n4\\n' > q && diff p q; diff q p; printf '' > e; diff e p; diff p e",
    stdout:
      '--- p\n+++ q\n@@ -1,3 +1,5 @@\n+0\n 1\n 2\n 3\n+4\n--- q\n+++ p\n@@ -1,5 +1,3 @@\n-0\n 1\n 2\n 3\n-4\n--- e\n+++ p\n@@ -0,0 +1,3 @@\n+1\n+2\n+3\n--- p\n+++ e\n@@ -1,3 +0,0 @@\n-1\n-2\n-3\n',
    stderr: '',
    exitCode: 1,
  },
  {
    script:
      'cd /tmp && rm -rf dx && mkdir -p dx/r1/d1/e dx/r2/m && cd dx && echo a > r1/d1/x && echo b > r1/d1/e/y && echo m > r1/m && echo q > r2/m/q && echo t > r2/t && diff -r r1 r2; echo $?; diff r1/ r2/; echo $?',
    stdout: 'Only in r1: m\nOnly in r2: t\n1\nOnly in r1/: d1\nFile r1/m is a regular file while file r2/m is a directory\nOnly in r2/: t\n1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'cd /tmp && rm -rf dx && mkdir -p dx/r1 dx/r2 && cd dx && echo a > r1/f && echo a > r2/f && echo z > r2/g && diff -rN r1 r2; echo $?; diff -N r1 r2; echo $?; diff -S g r1 r2; echo $?',
    stdout: '--- /dev/null\n+++ r2/g\n@@ -0,0 +1 @@\n+z\n1\n--- /dev/null\n+++ r2/g\n@@ -0,0 +1 @@\n+z\n1\nOnly in r2: g\n1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp && rm -rf dx && mkdir -p dx && cd dx && printf 'x\\n' > f && diff f nope; echo $?; diff nope f; echo $?; printf 'y\\n' | diff f -; echo $?; diff -q f f; echo $?\ncd /tmp && rm -rf dx && mkdir -p dx && cd dx && printf 'a\\n' > f1 && cp f1 f2 && diff -s f1 f2; echo $?; diff -s f1 f1; echo $?; ln -s f1 l1; diff -s f1 l1; echo $?",
    stdout: '2\n2\n--- f\n+++ -\n@@ -1 +1 @@\n-x\n+y\n1\n0\nFiles f1 and f2 are identical\n0\n0\n0\n',
    stderr: "diff: can't stat 'nope': No such file or directory\ndiff: can't stat 'nope': No such file or directory\n",
    exitCode: 0,
  },
  {
    script:
      "cd /tmp && rm -rf dx && mkdir -p dx && cd dx && printf '1\\n\\n2\\n3\\n4\\n5\\n6\\n7\\n8\\n\\n9\\n' > h1 && printf '1\\n2\\n3\\n4\\n5\\nX\\n7\\n8\\n9\\n' > h2 && diff -B h1 h2; echo $?",
    stdout: '--- h1\n+++ h2\n@@ -1,11 +1,9 @@\n 1\n-\n 2\n 3\n 4\n 5\n-6\n+X\n 7\n 8\n-\n 9\n1\n',
    stderr: '',
    exitCode: 0,
  },
];

await conformance("the guest's diff is busybox's: its options, directories and binary files", (target) => {
  shScripts(target, launchPerSuite(target), cases);
});
