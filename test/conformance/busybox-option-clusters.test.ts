import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * Options clustered in one word as busybox's getopt32 reads them (`-qn1`, `-ud @0`), for the
 * programs whose command lines the simulator reads itself or hands to just-bash's (issue #41 item
 * 5). Each case was run on the test beds' busybox 1.35 on LXD 5.0.2 and Incus 6.0.4, held to the
 * simulator's.
 */
const cases: ShScript[] = [
  // tail and head: -qn1, -vn1, -qc1 in one word; a count xatol_sfx refuses.
  {
    script:
      "cd /tmp; printf 'a\\nb\\n' > u; printf 'c\\nd\\n' > c; tail -qn1 u c; tail -n1 -q u c; tail -vn1 u; head -vn1 u; head -qn1 u c; tail -c2 u; tail -nc1 u; echo $?",
    stdout: 'b\nd\nb\nd\n==> u <==\nb\n==> u <==\na\na\nc\nb\n1\n',
    stderr: "tail: invalid number 'c1'\n",
    exitCode: 0,
  },
  // date: -ud, -Rud, -ud@0, -uId, -uIseconds, -ur in one word; -I's SPEC cut short (`d`), or its usage.
  {
    script:
      "date -ud @0 '+%H:%M'; date -u -d @60 +%M; date -Rud @0; date -Iud @0; echo $?; date -ud@0 +%s; date -uId -d @0; date -uIseconds -d @0; date -ur /tmp/nosuch; echo $?",
    stdout: '00:00\n01\nThu, 01 Jan 1970 00:00:00 +0000\n1\n0\n1970-01-01\n1970-01-01T00:00:00+00:00\n1\n',
    stderr:
      "BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: date [OPTIONS] [+FMT] [[-s] TIME]\n\nDisplay time (using +FMT), or set time\n\n\t-u\t\tWork in UTC (don't convert to local time)\n\t[-s] TIME\tSet time to TIME\n\t-d TIME\t\tDisplay TIME, not 'now'\n\t-D FMT\t\tFMT (strptime format) for -s/-d TIME conversion\n\t-r FILE\t\tDisplay last modification time of FILE\n\t-R\t\tOutput RFC-2822 date\n\t-I[SPEC]\tOutput ISO-8601 date\n\t\t\tSPEC=date (default), hours, minutes, seconds or ns\n\nRecognized TIME formats:\n\t@seconds_since_1970\n\thh:mm[:ss]\n\t[YYYY.]MM.DD-hh:mm[:ss]\n\tYYYY-MM-DD hh:mm[:ss]\n\t[[[[[YY]YY]MM]DD]hh]mm[.ss]\n\t'date TIME' form accepts MMDDhhmm[[YY]YY][.ss] instead\ndate: can't stat '/tmp/nosuch': No such file or directory\n",
    exitCode: 0,
  },
  // tail: suffixes, -c+N and -n+N glued, an option busybox's tail lacks.
  {
    script: 'cd /tmp; tail -n 2k u | wc -l; tail -c+2 u; tail -n+2 u; tail -qc1 u; echo; tail -fx u; echo $?',
    stdout: '2\n\nb\nb\n\n\n1\n',
    stderr:
      "tail: invalid option -- 'x'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: tail [OPTIONS] [FILE]...\n\nPrint last 10 lines of FILEs (or stdin) to.\nWith more than one FILE, precede each with a filename header.\n\n\t-c [+]N[bkm]\tPrint last N bytes\n\t-n N[bkm]\tPrint last N lines\n\t-n +N[bkm]\tStart on Nth line and print the rest\n\t\t\t(b:*512 k:*1024 m:*1024^2)\n\t-q\t\tNever print headers\n\t-v\t\tAlways print headers\n\t-f\t\tPrint data as file grows\n\t-F\t\tSame as -f, but keep retrying\n\t-s SECONDS\tWait SECONDS between reads with -f\n",
    exitCode: 0,
  },
  // grep -r names the files it finds in a directory, not a file operand alone.
  {
    script:
      "cd /tmp; rm -rf gr; mkdir -p gr/d; printf 'a\\nb\\n' > gr/s; printf 'xa\\n' > gr/d/t; cd gr; grep -rn a s; grep -r a s d; grep -r a d; grep -rh a d s; grep -rH a s; grep -rc a s; grep -rl a s d; grep -r a; echo $?",
    stdout: '1:a\ns:a\nd/t:xa\nd/t:xa\nxa\na\ns:a\n1\ns\nd/t\n1\n',
    stderr: '',
    exitCode: 0,
  },
  // seq, nl, expand, fold and unexpand: their usages, as --help prints them.
  {
    script: 'seq --help; nl --help; expand --help; fold --help; unexpand --help; echo $?',
    stdout: '0\n',
    stderr:
      "BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: seq [-w] [-s SEP] [FIRST [INC]] LAST\n\nPrint numbers from FIRST to LAST, in steps of INC.\nFIRST, INC default to 1.\n\n\t-w\tPad to last with leading zeros\n\t-s SEP\tString separator\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: nl [OPTIONS] [FILE]...\n\nWrite FILEs to standard output with line numbers added\n\n\t-b STYLE\tWhich lines to number - a: all, t: nonempty, n: none\n\t-i N\t\tLine number increment\n\t-s STRING\tUse STRING as line number separator\n\t-v N\t\tStart from N\n\t-w N\t\tWidth of line numbers\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: expand [-i] [-t N] [FILE]...\n\nConvert tabs to spaces, writing to stdout\n\n\t-i\tDon't convert tabs after non blanks\n\t-t\tTabstops every N chars\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: fold [-bs] [-w WIDTH] [FILE]...\n\nWrap input lines in FILEs (or stdin), writing to stdout\n\n\t-b\tCount bytes rather than columns\n\t-s\tBreak at spaces\n\t-w\tUse WIDTH columns instead of 80\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: unexpand [-fa][-t N] [FILE]...\n\nConvert spaces to tabs, writing to stdout\n\n\t-a\tConvert all blanks\n\t-f\tConvert only leading blanks\n\t-t N\tTabstops every N chars\n",
    exitCode: 0,
  },
  // Their options clustered and glued (`-it2`, `-sw4`, `-ws,`); nl writes a line it does not number as spaces; nl has no -n.
  {
    script:
      "cd /tmp; printf 'a\\tb c d e f\\n\\nx\\n' > e; expand -it2 e; expand -t2 -i e; expand -t 3 e; fold -sw4 e; fold -bw3 e; nl -ba -w2 -s: e; nl -bt -v5 -i2 e; nl -ba -nrz e; echo $?; seq -ws, 8 10; seq -s: -w 2; unexpand -at4 e | od -c | head -2",
    stdout:
      'a\tb c d e f\n\nx\na\tb c d e f\n\nx\na  b c d e f\n\nx\na\n\t\nb c \nd e \nf\n\nx\na\tb\n c \nd e\n f\n\nx\n 1:a\tb c d e f\n 2:\n 3:x\n     5\ta\tb c d e f\n       \n     7\tx\n1\n08,09,10\n1:2\n0000000   a  \\t   b       c  \\t   d       e  \\t   f  \\n  \\n   x  \\n\n0000017\n',
    stderr:
      "nl: invalid option -- 'n'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: nl [OPTIONS] [FILE]...\n\nWrite FILEs to standard output with line numbers added\n\n\t-b STYLE\tWhich lines to number - a: all, t: nonempty, n: none\n\t-i N\t\tLine number increment\n\t-s STRING\tUse STRING as line number separator\n\t-v N\t\tStart from N\n\t-w N\t\tWidth of line numbers\n",
    exitCode: 0,
  },
  // What they refuse, in busybox's words: an option they lack, a missing value, a count that is not a number.
  {
    script:
      'seq -x 1; echo $?; nl -x e; echo $?; fold -x e; echo $?; expand -x e; echo $?; seq -s; echo $?; fold -w; echo $?; fold -wx e; echo $?; nl -w x /tmp/e; echo $?',
    stdout: '1\n1\n1\n1\n1\n1\n1\n1\n',
    stderr:
      "seq: invalid option -- 'x'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: seq [-w] [-s SEP] [FIRST [INC]] LAST\n\nPrint numbers from FIRST to LAST, in steps of INC.\nFIRST, INC default to 1.\n\n\t-w\tPad to last with leading zeros\n\t-s SEP\tString separator\nnl: invalid option -- 'x'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: nl [OPTIONS] [FILE]...\n\nWrite FILEs to standard output with line numbers added\n\n\t-b STYLE\tWhich lines to number - a: all, t: nonempty, n: none\n\t-i N\t\tLine number increment\n\t-s STRING\tUse STRING as line number separator\n\t-v N\t\tStart from N\n\t-w N\t\tWidth of line numbers\nfold: invalid option -- 'x'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: fold [-bs] [-w WIDTH] [FILE]...\n\nWrap input lines in FILEs (or stdin), writing to stdout\n\n\t-b\tCount bytes rather than columns\n\t-s\tBreak at spaces\n\t-w\tUse WIDTH columns instead of 80\nexpand: invalid option -- 'x'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: expand [-i] [-t N] [FILE]...\n\nConvert tabs to spaces, writing to stdout\n\n\t-i\tDon't convert tabs after non blanks\n\t-t\tTabstops every N chars\nseq: option requires an argument -- 's'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: seq [-w] [-s SEP] [FIRST [INC]] LAST\n\nPrint numbers from FIRST to LAST, in steps of INC.\nFIRST, INC default to 1.\n\n\t-w\tPad to last with leading zeros\n\t-s SEP\tString separator\nfold: option requires an argument -- 'w'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: fold [-bs] [-w WIDTH] [FILE]...\n\nWrap input lines in FILEs (or stdin), writing to stdout\n\n\t-b\tCount bytes rather than columns\n\t-s\tBreak at spaces\n\t-w\tUse WIDTH columns instead of 80\nfold: invalid number 'x'\nnl: invalid number 'x'\n",
    exitCode: 0,
  },
  // sort, wc, cut and sed clusters; seq has no -f.
  {
    script:
      "cd /tmp; rm -rf cl; mkdir cl; cd cl; printf 'b 2\\na 10\\nc 1\\n' > f; sort -rnk2 f; sort -nk2,2 f; sort -t' ' -rk1 f; wc -lwc f; cut -d' ' -sf2 f; sed -ne 2p f; sed -n -e '1p;3p' f; nl -nln f | head -1; seq -f%g 2",
    stdout: 'a 10\nb 2\nc 1\nc 1\nb 2\na 10\nc 1\nb 2\na 10\n        3         6        13 f\n2\n10\n1\na 10\nb 2\nc 1\n',
    stderr:
      "nl: invalid option -- 'n'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: nl [OPTIONS] [FILE]...\n\nWrite FILEs to standard output with line numbers added\n\n\t-b STYLE\tWhich lines to number - a: all, t: nonempty, n: none\n\t-i N\t\tLine number increment\n\t-s STRING\tUse STRING as line number separator\n\t-v N\t\tStart from N\n\t-w N\t\tWidth of line numbers\nseq: invalid option -- 'f'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: seq [-w] [-s SEP] [FIRST [INC]] LAST\n\nPrint numbers from FIRST to LAST, in steps of INC.\nFIRST, INC default to 1.\n\n\t-w\tPad to last with leading zeros\n\t-s SEP\tString separator\n",
    exitCode: 1,
  },
  // head and tail with `-n-1` and `-c1k`, expand, fold and paste clusters.
  {
    script:
      'cd /tmp/cl; head -c1k /etc/passwd | wc -c; head -n-1 f; tail -n-1 f; head -c -2 f | od -c | head -1; wc -m f; expand -it2 f | head -1; fold -sw5 f | head -2; paste -sd: f',
    stdout: '30\nb 2\na 10\nc 1\n0000000   b       2  \\n   a       1   0  \\n   c    \n13 f\nb 2\nb 2\na 10\nb 2:a 10:c 1\n',
    stderr: '',
    exitCode: 0,
  },
  // tac and rev: their usages, an option they lack, `--` ending the options.
  {
    script:
      "rev --help; tac --help; rev -x /dev/null; echo $?; tac -r /dev/null; echo $?; printf 'ab\\ncd\\n' > /tmp/rt; tac /tmp/rt /tmp/rt; rev /tmp/rt -- /tmp/rt",
    stdout: '1\n1\ncd\nab\ncd\nab\nba\ndc\nba\ndc\n',
    stderr:
      "BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: rev [FILE]...\n\nReverse lines of FILE\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: tac [FILE]...\n\nConcatenate FILEs and print them in reverse\nrev: invalid option -- 'x'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: rev [FILE]...\n\nReverse lines of FILE\ntac: invalid option -- 'r'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: tac [FILE]...\n\nConcatenate FILEs and print them in reverse\n",
    exitCode: 0,
  },
  // tac is busybox's: the lines of all its operands last first, a last line without its newline joined to the one before, a file that fails said.
  {
    script:
      "printf 'ab\\ncd\\n' > /tmp/rt; printf 'a\\nb' | tac | od -c; tac nosuch /tmp/rt; echo $?; mkdir -p /tmp/tdd; tac /tmp/tdd; echo $?; printf 'x\\0y\\n' | tac | od -c; tac < /dev/null; echo $?",
    stdout: '0000000   b   a  \\n\n0000003\ncd\nab\n1\n1\n0000000   x  \\0   y  \\n\n0000004\n0\n',
    stderr: 'tac: nosuch: No such file or directory\ntac: /tmp/tdd: Is a directory\n',
    exitCode: 0,
  },
  // sort, cut, head, wc, grep and sed clusters; xargs -rn1 (its options end at its command).
  {
    script:
      "cd /tmp; printf 'b,2\\na,1\\nb,2\\n' > cs; sort -ut, -k1,1 cs; cut -sd, -f2 cs; head -qc2 cs cs; echo; wc -lc cs; echo x | xargs -rn1 echo; printf '' | xargs -r echo no; grep -inE 'B' cs; sed -nE '/^a/p' cs; xargs -a cs -n1 | head -1",
    stdout: 'a,1\nb,2\n2\n1\n2\nb,b,\n        3        12 cs\nx\n1:b,2\n3:b,2\na,1\nb,2\n',
    stderr: '',
    exitCode: 0,
  },
  // xargs -a FILE: the file is its input, stdin left; a file that does not open.
  {
    script:
      "cd /tmp; xargs -a nosuch echo; echo $?; printf 'p q\\nr\\n' > xa; xargs -a xa echo; xargs -a xa -n1 echo; xargs -axa echo; echo in | xargs -a xa echo",
    stdout: '1\np q r\np\nq\nr\np q r\np q r\n',
    stderr: "xargs: can't open 'nosuch': No such file or directory\n",
    exitCode: 0,
  },
];

await conformance("options clustered in one word, as busybox's getopt reads them", (target) => {
  shScripts(target, launchPerSuite(target), cases);
});
