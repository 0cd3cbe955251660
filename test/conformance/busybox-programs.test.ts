import { expect, it } from 'vitest';
import { conformance, launchPerSuite, printing, shScripts, type ShScript } from './targets.js';

/**
 * The busybox programs and /proc files scripts reach for first (issue #41 item 5): each case is
 * the test beds' busybox on LXD 5.0.2 and Incus 6.0.4, held to the simulator's guest. What differs
 * by nature (pids, sizes of the host's disk and memory, random names) is reduced to its shape.
 */
const cases: ShScript[] = [
  { script: `printf '\\xff' | wc -c`, stdout: '1\n' },
  { script: `printf 'a\\377\\n' > /tmp/rt-b; wc -c < /tmp/rt-b`, stdout: '3\n' },
  { script: `printf 'é\\n' | wc -c`, stdout: '3\n' },
  // paste reads stdin without a file operand; timeout's PROG dies of its signal (128 + SIG, ash's word for it), not GNU's 124.
  {
    script: "seq 3 | paste -sd+; seq 4 | paste -s; seq 3 | paste -s -d '+-'; printf 'a\\nb\\n' | paste -d: - -; paste; echo $?",
    stdout: '1+2+3\n1\t2\t3\t4\n1+2-3\na:b\n0\n',
    stderr: '',
    exitCode: 0,
  },
  { script: 'timeout 1 sleep 3; echo $?', stdout: '143\n', stderr: 'Terminated\n', exitCode: 0 },
  {
    script: 'timeout -s KILL 1 sleep 3 || echo "killed $?"; timeout -s INT 1 sleep 3; echo $?',
    stdout: 'killed 137\n130\n',
    stderr: 'Killed\n',
    exitCode: 0,
  },
  {
    script: 'x=$(timeout 1 sh -c \'sleep 3\'); echo "x=$x $?"; timeout 0.5 sleep 3 2>/dev/null; echo $?',
    stdout: 'x= 143\n143\n',
    stderr: 'Terminated\n',
    exitCode: 0,
  },
  { script: 'timeout 5 true; echo $?; timeout 5 false; echo $?; echo in | timeout 2 cat', stdout: '0\n1\nin\n', stderr: '', exitCode: 0 },
  {
    script: 'timeout 1 nosuch; echo $?; timeout x sleep 1; echo $?; timeout -s FOO 1 true; echo $?',
    stdout: '127\n1\n1\n',
    stderr: "timeout: can't execute 'nosuch': No such file or directory\ntimeout: invalid number 'x'\ntimeout: unknown signal 'FOO'\n",
    exitCode: 0,
  },
  // diff's unified form as busybox prints it: no `====` line, no tab after the names, a one-line range without `,1`.
  {
    script: "printf 'a\\nb\\nc\\n' > /tmp/rt-d1; printf 'a\\nc\\nd\\n' > /tmp/rt-d2; diff /tmp/rt-d1 /tmp/rt-d2; echo $?",
    stdout: '--- /tmp/rt-d1\n+++ /tmp/rt-d2\n@@ -1,3 +1,3 @@\n a\n-b\n c\n+d\n1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: "printf '' > /tmp/rt-d1; printf 'x\\ny\\n' > /tmp/rt-d2; diff /tmp/rt-d1 /tmp/rt-d2; diff /tmp/rt-d2 /tmp/rt-d1; echo $?",
    stdout: '--- /tmp/rt-d1\n+++ /tmp/rt-d2\n@@ -0,0 +1,2 @@\n+x\n+y\n--- /tmp/rt-d2\n+++ /tmp/rt-d1\n@@ -1,2 +0,0 @@\n-x\n-y\n1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: "seq 1 20 > /tmp/rt-d1; seq 1 20 | sed 's/^3$/X/; s/^17$/Y/' > /tmp/rt-d2; diff /tmp/rt-d1 /tmp/rt-d2",
    stdout: '--- /tmp/rt-d1\n+++ /tmp/rt-d2\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+X\n 4\n 5\n 6\n@@ -14,7 +14,7 @@\n 14\n 15\n 16\n-17\n+Y\n 18\n 19\n 20\n',
    stderr: '',
    exitCode: 1,
  },
  {
    script: "printf 'a\\nb' > /tmp/rt-d1; printf 'a\\nc' > /tmp/rt-d2; diff /tmp/rt-d1 /tmp/rt-d2",
    stdout: '--- /tmp/rt-d1\n+++ /tmp/rt-d2\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n',
    stderr: '',
    exitCode: 1,
  },
  {
    script: "printf 'a\\n' > /tmp/rt-d1; diff /tmp/rt-d1 /tmp/rt-d1; echo $?; diff -q /tmp/rt-d1 /tmp/nosuch; echo $?",
    stdout: '0\n2\n',
    stderr: "diff: can't stat '/tmp/nosuch': No such file or directory\n",
    exitCode: 0,
  },
  {
    script: "printf 'a\\n' > /tmp/rt-d1; printf 'b\\n' > /tmp/rt-d2; diff -q /tmp/rt-d1 /tmp/rt-d2; echo $?",
    stdout: 'Files /tmp/rt-d1 and /tmp/rt-d2 differ\n1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: "printf 'a\\n' > /tmp/rt-d1; printf 'b\\n' > /tmp/rt-d2; diff -u /tmp/rt-d1 /tmp/rt-d2 | head -2",
    stdout: '--- /tmp/rt-d1\n+++ /tmp/rt-d2\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: "printf 'a\\n' > /tmp/rt-d1; printf 'b\\n' | diff /tmp/rt-d1 -",
    stdout: '--- /tmp/rt-d1\n+++ -\n@@ -1 +1 @@\n-a\n+b\n',
    stderr: '',
    exitCode: 1,
  },
  // awk: a one-character FS other than a space is that character (not a regular expression), and -v sets OFS, FS and the like.
  {
    script: "echo \"a.b.c\" | awk -F. -v OFS=- '{$1=$1; print}'; echo \"a.b.c\" | awk -F. '{print $2, NF}'; echo \"a|b\" | awk -F'|' '{print $2}'",
    stdout: 'a-b-c\nb 3\nb\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'echo "a b c" | awk -v OFS=- \'{$1=$1; print}\'; echo "a.b.c" | awk -F. \'BEGIN{OFS="-"} {$1=$1; print}\'; echo "x:y" | awk -v FS=: \'{print $2}\'',
    stdout: 'a-b-c\na-b-c\ny\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "echo \"a.b,c\" | awk -F'[.,]' '{print $3}'; echo \"a1b22c\" | awk -F'[0-9]+' '{print $2 $3}'; echo \"x.y\" | awk 'BEGIN{FS=\".\"} {print $2}'",
    stdout: 'c\nbc\ny\n',
    stderr: '',
    exitCode: 0,
  },
  // Floating conversions as C's printf does them, in printf and in awk (its printf and its numbers made strings): the exact
  // value rounded half to even, two-digit exponents, %g's choice and trailing zeros, the flags.
  {
    script: 'printf "%e %g %E %G|%.3e|%#.0f|%+08.2f|%-8.1e|\\n" 12345.678 0.00001234 1e10 1e-10 5 3 -2.5 0.000123',
    stdout: '1.234568e+04 1.234e-05 1.000000E+10 1E-10|5.000e+00|3.|-0002.50|1.2e-04 |\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'printf "%.0f %.0f %.1f %.2f %g %g %g %g %.10g\\n" 0.5 2.5 0.25 1.005 100000.5 1e100 0.0001 1234567.8 0.1',
    stdout: '0 2 0.2 1.00 100000 1e+100 0.0001 1.23457e+06 0.1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'awk \'BEGIN{printf "%e %g %E %G|%.3e|%5.1f|%-6.2g|\\n", 12345.678, 0.00001234, 1e10, 1e-10, 5, 2.25, 0.5; printf "%.0f %.0f %g %g\\n", 0.5, 2.5, 100000.5, 1e100}\'',
    stdout: '1.234568e+04 1.234e-05 1.000000E+10 1E-10|5.000e+00|  2.2|0.5   |\n0 2 100000 1e+100\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'awk \'BEGIN{x=1/3; print x ""; print 0.1+0.2 ""; y=1234567.8; print y "", y; OFMT="%.2f"; print 1/3}\'',
    stdout: '0.333333\n0.3\n1.23457e+06 1.23457e+06\n0.33\n',
    stderr: '',
    exitCode: 0,
  },
  // awk's numbers as busybox 1.35's: a whole number that fits a long long is printed as one (others by OFMT or %.6g), printf's
  // integer conversions take the number cast to a C int (out of range: INT_MIN), %c a number's low byte, int() truncates.
  {
    script: 'echo 9007199254740993 | awk \'{print $1+0, $1*2, $1/2, $1}\'; awk \'BEGIN{print 1e18, 1e19, 1e20, 1e18 "", 1e20 "", 100000 * 100000}\'',
    stdout:
      '9007199254740992 18014398509481984 4503599627370496 9007199254740993\n1000000000000000000 1e+19 1e+20 1000000000000000000 1e+20 10000000000\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'awk \'BEGIN{printf "%d %d %i|%d|%d %d\\n", 1e18, -5.7, 7.9, "12abc", 1e19, -1e19}\'',
    stdout: '-2147483648 -5 7|12|-2147483648 -2147483648\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'awk \'BEGIN{printf "%u %u %x %X %o %#x %5.3d|\\n", -1, 5000000000, -1, 5000000000, -1, 255, 7}\'',
    stdout: '4294967295 2147483648 ffffffff 80000000 37777777777 0xff   007|\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'awk \'BEGIN{printf "%c%c%c|%c|%c\\n", 65, 256+66, "hello", "", 0}\' | od -An -c',
    stdout: '   A   B   h   |  \\0   |  \\0  \\n\n',
    stderr: '',
    exitCode: 0,
  },
  { script: 'awk \'BEGIN{print int(-3.7), int(3.7), int("4.9x"), -7 % 3}\'', stdout: '-3 3 4 -1\n', stderr: '', exitCode: 0 },
  // awk's output to commands and streams: `print | CMD` feeds CMD, run at close() (its wait status returned) or at the end after
  // awk's own output; system() after awk's output so far; /dev/stderr and /dev/stdout; close() of a getline source reopens it;
  // `length` alone is length($0).
  {
    script: 'awk \'BEGIN{print "c" | "sort"; print "a" | "sort"; print "mid"; print "b" | "sort -r"}\'; echo end',
    stdout: 'mid\na\nc\nb\nend\n',
    stderr: '',
    exitCode: 0,
  },
  // The command awk writes to reads what it is sent: one that exits first would kill awk with SIGPIPE, a race (a run on Incus: 141).
  {
    script:
      'awk \'BEGIN{print "3\\n1\\n2" | "sort"; x = close("sort"); print "after", x; print "y" | "cat >/dev/null; exit 5"; print close("cat >/dev/null; exit 5"), close("nonopen")}\'',
    stdout: '1\n2\n3\nafter 0\n1280 0\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'awk \'BEGIN{print "x"; system("echo y"); r = system("exit 3"); print "z", r; system("")}\' | cat',
    stdout: 'x\ny\nz 3\n',
    stderr: '',
    exitCode: 0,
  },
  // (Two pipes open at once write as their commands finish on the beds, a race: the second is opened after close().)
  {
    script: 'echo hi | awk \'{ print | "tr a-z A-Z"; close("tr a-z A-Z"); printf "%s!\\n", $0 | "cat" }\'',
    stdout: 'HI\nhi!\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'awk \'BEGIN{print "e1" > "/dev/stderr"; print "o1"; printf "e2\\n" > "/dev/stderr"; print "o2" > "/dev/stdout"}\' 2>/tmp/rt-err; echo ---; cat /tmp/rt-err; rm /tmp/rt-err',
    stdout: 'o1\no2\n---\ne1\ne2\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'awk \'BEGIN{ "echo a; echo b" | getline x; print x; close("echo a; echo b"); "echo a; echo b" | getline y; print y }\'',
    stdout: 'a\na\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'printf \'a\\nb\\n\' > /tmp/rt-f; awk \'BEGIN{ getline l < "/tmp/rt-f"; close("/tmp/rt-f"); getline m < "/tmp/rt-f"; print l, m; print "new" > "/tmp/rt-f"; close("/tmp/rt-f"); print "again" > "/tmp/rt-f" }\'; cat /tmp/rt-f; rm /tmp/rt-f',
    stdout: 'a a\nagain\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: "echo abc | awk '{ print length, length($0), length() }'; echo \"a b\" | awk '{ n = length; print n }'; echo xyz | awk 'length > 2'",
    stdout: '3 3 3\n3\nxyz\n',
    stderr: '',
    exitCode: 0,
  },
  // basename and dirname as busybox's (glibc's dirname keeps a leading `//`; dirname reads no options), date -I[SPEC], mktemp's refusal.
  {
    script:
      "basename /; basename //; basename /a/; basename ''; basename a.txt .txt; basename .txt .txt; basename /a/b.c.c .c; basename a/b/ b; basename ///x///",
    stdout: '/\n/\na\n\na\n.txt\nb.c\nb\nx\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'basename -a /a/b /c/d/; basename -s .c x.c y.c z; basename -as .c q.c; basename -- -x; basename -z 2>&1 | head -1; basename a b c 2>&1 | head -1; echo $?',
    stdout: "b\nd\nx\ny\nz\nq\n-x\nbasename: invalid option -- 'z'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n0\n",
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "dirname /; dirname //a; dirname ''; dirname a; dirname /a/b/; dirname ///a; dirname /a//b; dirname a/; dirname //; dirname ///; dirname a//b//; dirname -x; dirname a b 2>&1 | tail -1",
    stdout: '/\n//\n.\n.\n/a\n/\n/a\n.\n//\n/\na\n.\nStrip non-directory suffix from FILENAME\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'date -u -I -d @1700000000; date -u -Iseconds -d @1700000000; date -u -Ihours -d @1700000000; date -u -Iminutes -d @1700000000; date -u -Idate -d @1700000000',
    stdout: '2023-11-14\n2023-11-14T22:13:20+00:00\n2023-11-14T22+00:00\n2023-11-14T22:13+00:00\n2023-11-14\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'mktemp /tmp/f.XXXX; echo $?; mktemp -d /tmp/g.XXXXX; echo $?',
    stdout: '1\n1\n',
    stderr: 'mktemp: (null): Invalid argument\nmktemp: (null): Invalid argument\n',
    exitCode: 0,
  },
  // A file's blocks as ext4 gives them: truncate grows a file by a hole (no blocks) and takes back the blocks past a shorter end; an append gives the blocks it covers, a write of the whole content every block; the file keeps its mode.
  {
    script:
      "cd \"$(mktemp -d)\"; truncate -s 1M a; stat -c '%s %b' a; echo x >> a; stat -c '%s %b' a; echo y > a; stat -c '%s %b' a; head -c 10000 /dev/zero > b; truncate -s 8191 b; stat -c '%s %b' b; truncate -s 0 b; truncate -s 4097 b; stat -c '%s %b' b; touch m; chmod 600 m; truncate -s 10 m; stat -c '%a %s %b' m",
    stdout: '1048576 0\n1048578 8\n2 8\n8191 16\n4097 0\n600 10 0\n',
    stderr: '',
    exitCode: 0,
  },
  // dd opens its output without O_TRUNC and, without notrunc, cuts it at seek's offset (what is before stays, a hole after), then writes there: only the blocks written are given.
  {
    script:
      "cd \"$(mktemp -d)\"; printf abcdef > a; dd if=/dev/zero of=a bs=1 count=1 seek=2 2>/dev/null; od -c a; truncate -s 5000 b; printf x | dd of=b bs=1 seek=4999 conv=notrunc 2>/dev/null; stat -c '%s %b' b; printf y | dd of=b bs=1 seek=100 2>/dev/null; stat -c '%s %b' b; dd if=/dev/zero of=c bs=1k seek=100 count=3 2>/dev/null; stat -c '%s %b' c; printf 'abcdefgh' > d; chmod 640 d; dd if=/dev/zero of=d bs=2 seek=3 count=0 2>/dev/null; od -c d; stat -c '%a %s %b' d",
    stdout: '0000000   a   b  \\0\n0000003\n5000 8\n101 8\n105472 8\n0000000   a   b   c   d   e   f\n0000006\n640 6 8\n',
    stderr: '',
    exitCode: 0,
  },
  // fallocate gives the blocks of its range (and keeps the file's mode); a file's blocks stay with it through mv and ln, and cat > and cp write every block; du and ls -s count blocks.
  {
    script:
      "cd \"$(mktemp -d)\"; fallocate -l 1M a; stat -c '%s %b' a; fallocate -o 2M -l 4k a; stat -c '%s %b' a; truncate -s 3M b; fallocate -o 1M -l 10000 b; stat -c '%s %b' b; chmod 600 b; fallocate -l 1 b; stat -c '%a %s %b' b; truncate -s 100k c; printf a >> c; mv c d; ln d e; stat -c '%s %b %h' e; cat d > f; cp d g; du -a . | grep -v '/[de]$' | sort -k2; ls -s; du -sh .",
    stdout:
      '1048576 2048\n2101248 2056\n3145728 24\n600 3145728 32\n102401 8 2\n1260\t.\n1028\t./a\n16\t./b\n104\t./f\n104\t./g\ntotal 1260\n  1028 a\n    16 b\n     4 d\n     4 e\n   104 f\n   104 g\n1.2M\t.\n',
    stderr: '',
    exitCode: 0,
  },
  // truncate's sizes (xatoull_sfx: k K KB kB M MB G GB), realpath without options, md5sum -c and its -s -w as busybox checks a list.
  {
    script:
      'cd /tmp && rm -rf tz && mkdir tz && cd tz; for s in 1K 1k 1KB 1kB 1KiB 1M 1MB 1m 1T 1x -1 +5 \'\' 010 0x10; do truncate -s "$s" trx 2>&1; echo "$s $? $(stat -c %s trx 2>/dev/null)"; rm -f trx; done',
    stdout:
      "1K 0 1024\n1k 0 1024\n1KB 0 1000\n1kB 0 1000\ntruncate: invalid number '1KiB'\n1KiB 1 \n1M 0 1048576\n1MB 0 1000000\ntruncate: invalid number '1m'\n1m 1 \ntruncate: invalid number '1T'\n1T 1 \ntruncate: invalid number '1x'\n1x 1 \ntruncate: invalid number '-1'\n-1 1 \ntruncate: invalid number '+5'\n+5 1 \ntruncate: invalid number ''\n 1 \n010 0 10\ntruncate: invalid number '0x10'\n0x10 1 \n",
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'cd /root; realpath -e /nonexist; echo $?; realpath nosuch; echo $?; realpath ./nosuch; echo $?; realpath /etc/nosuch/x; echo $?; realpath; echo $?; realpath /etc /etc/passwd',
    stdout: '/nonexist\n1\n1\n/root/nosuch\n0\n1\n1\n/etc\n/etc/passwd\n',
    stderr:
      'realpath: -e: No such file or directory\nrealpath: nosuch: No such file or directory\nrealpath: /etc/nosuch/x: No such file or directory\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: realpath FILE...\n\nPrint absolute pathnames of FILEs\n',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp && rm -rf ck && mkdir ck && cd ck; printf 'x' > m1; : > empty; printf '00000000000000000000000000000000  m1\\nd41d8cd98f00b204e9800998ecf8427e  empty\\nd41d8cd98f00b204e9800998ecf8427e  /nonexist\\n' > s3; md5sum -c s3; echo $?; md5sum -c -s s3; echo $?; md5sum -cw s3; echo $?",
    stdout: 'm1: FAILED\nempty: OK\n/nonexist: FAILED\n1\n1\nm1: FAILED\nempty: OK\n/nonexist: FAILED\n1\n',
    stderr:
      "md5sum: can't open '/nonexist': No such file or directory\nmd5sum: WARNING: 2 of 3 computed checksums did NOT match\nmd5sum: can't open '/nonexist': No such file or directory\nmd5sum: can't open '/nonexist': No such file or directory\nmd5sum: WARNING: 2 of 3 computed checksums did NOT match\n",
    exitCode: 0,
  },
  {
    script:
      "cd /tmp && rm -rf ck && mkdir ck && cd ck; printf 'x' > m1; : > empty; printf 'garbage\\n\\n9dd4e461268c8034f5c8564e155c67a6  m1\\n' > s4; md5sum -c s4; echo $?; md5sum -cw s4; echo $?; printf 'd41d8cd98f00b204e9800998ecf8427e *empty\\n' | md5sum -c; echo $?; sha256sum -c /dev/null; echo $?; md5sum -c nosuch; echo $?",
    stdout: 'm1: OK\n1\nm1: OK\n1\nempty: OK\n0\n1\n1\n',
    stderr:
      'md5sum: WARNING: 2 of 3 computed checksums did NOT match\nmd5sum: invalid format\nmd5sum: invalid format\nmd5sum: WARNING: 2 of 3 computed checksums did NOT match\nsha256sum: /dev/null: no checksum lines found\nmd5sum: nosuch: No such file or directory\n',
    exitCode: 0,
  },
  {
    script:
      'cd /tmp && rm -rf ck && mkdir ck && cd ck; echo hi > f; sha256sum f > f.sha256; sha256sum -c f.sha256; echo $?; echo bye > f; sha256sum -c f.sha256; echo $?; sha1sum f | sha1sum -c; md5sum -b f | md5sum -c -t',
    stdout: 'f: OK\n0\nf: FAILED\n1\nf: OK\nf: OK\n',
    stderr: 'sha256sum: WARNING: 1 of 1 computed checksums did NOT match\n',
    exitCode: 0,
  },
  // xargs -I takes an item per line (per NUL under -0), its leading blanks dropped and its trailing ones kept; busybox 1.35 has no -d.
  {
    script:
      'printf \' a \\0b\\0\\0c\' | xargs -0 -I{} echo "[{}]"; printf \'x,y ,z\\n\' | xargs -d, -I{} echo "[{}]"; printf \'  p  \\nq\\n\' | xargs -I{} echo "[{}]"',
    stdout: '[a ]\n[b]\n[c]\n[p  ]\n[q]\n',
    stderr:
      "xargs: invalid option -- 'd'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: xargs [OPTIONS] [PROG ARGS]\n\nRun PROG on every item given by stdin\n\n\t-0\tNUL terminated input\n\t-a FILE\tRead from FILE instead of stdin\n\t-r\tDon't run command if input is empty\n\t-t\tPrint the command on stderr before execution\n\t-p\tAsk user whether to run each command\n\t-E STR,-e[STR]\tSTR stops input processing\n\t-I STR\tReplace STR within PROG ARGS with input line\n\t-n N\tPass no more than N args to PROG\n\t-s N\tPass command line of no more than N bytes\n\t-P N\tRun up to N PROGs in parallel\n\t-x\tExit if size is exceeded\n",
    exitCode: 0,
  },
  {
    script: "printf 'a b\\0c\\0' | xargs -0 -n1 echo; printf 'a\\0b\\0' | xargs -0 echo; printf 'a,b\\n' | xargs -d, echo",
    stdout: 'a b\nc\na b\n',
    stderr:
      "xargs: invalid option -- 'd'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: xargs [OPTIONS] [PROG ARGS]\n\nRun PROG on every item given by stdin\n\n\t-0\tNUL terminated input\n\t-a FILE\tRead from FILE instead of stdin\n\t-r\tDon't run command if input is empty\n\t-t\tPrint the command on stderr before execution\n\t-p\tAsk user whether to run each command\n\t-E STR,-e[STR]\tSTR stops input processing\n\t-I STR\tReplace STR within PROG ARGS with input line\n\t-n N\tPass no more than N args to PROG\n\t-s N\tPass command line of no more than N bytes\n\t-P N\tRun up to N PROGs in parallel\n\t-x\tExit if size is exceeded\n",
    exitCode: 1,
  },
  // date's format takes glibc's strftime flags and widths (%-d, %_H, %03d, %^a, %#Z).
  {
    script: "date -u -d @1700000000 '+%-d %-m %_H %03d %^a %#Z'; date -u -d @1700000000 '+%-H:%-M|%_d|%5Y|%-j|%e|%-e|%_m|%010s|%^B|%#p|%-I'",
    stdout: '14 11 22 014 TUE utc\n22:13|14|02023|318|14|14|11|1700000000|NOVEMBER|pm|10\n',
    stderr: '',
    exitCode: 0,
  },
  { script: "date -u -d @1699920000 '+%-d|%_d|%0e|%-k|%3e|%-l %P'", stdout: '14|14|14|0| 14|12 am\n', stderr: '', exitCode: 0 },
  // `@SECONDS` takes digits alone: a sign or a blank is an invalid date, for date and touch.
  {
    script:
      "date -u -d @-1 +%F; echo $?; date -u -d @0 +%F; date -u -d @+5 +%s; echo $?; date -u -d '@ 5' +%s; echo $?; touch -d @-1 /tmp/tn; echo $?",
    stdout: '1\n1970-01-01\n1\n1\n1\n',
    stderr: "date: invalid date '@-1'\ndate: invalid date '@+5'\ndate: invalid date '@ 5'\ntouch: invalid date '@-1'\n",
    exitCode: 0,
  },
  // awk makes a number a string by CONVFMT (concatenation, subscripts); concatenation binds tighter than comparison and match.
  { script: 'awk \'BEGIN{CONVFMT="%.2g"; a=3.14159; b=a ""; print b; x[a]=1; for(k in x) print k}\'', stdout: '3.1\n3.1\n', stderr: '', exitCode: 0 },
  {
    script: 'awk \'BEGIN{OFMT="%.2f"; print 3.14159, 10, 1e18; CONVFMT="%.3f"; x=3.14159 ""; print x; y[0.5]=1; for (k in y) print k}\'',
    stdout: '3.14 10 1000000000000000000\n3.142\n0.500\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'awk -v CONVFMT=%.1f \'BEGIN{x=0.25; print x ""; print (x "" == "0.2"); z[x]++; for (k in z) print k, z[k]}\'',
    stdout: '0.2\n1\n0.2 1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'awk \'BEGIN{print ("a" "b" == "ab"); print ("a" "b" != "ab"); x="a"; print (x "b" == "ab"); print 1 " " 2 < 3}\'',
    stdout: '1\n0\n1\n1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'echo "k v" | awk \'{ if ($1 " " $2 == "k v") print "eq"; else print "ne" }\'; awk \'BEGIN{ print "x" > "/dev/stdout" }\'',
    stdout: 'eq\nx\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'awk \'BEGIN{ a = "1" "0"; print a + 1; print "a" "b" ~ /ab/; print 2 " " 3 * 4; print -1 " " -2 }\'',
    stdout: '11\n1\n2 12\n-1-2\n',
    stderr: '',
    exitCode: 0,
  },
  // date -d reads the date as busybox's parse_datestr does (and nothing else: `now`, `01/02/2024`, ISO's `T`), -D FORMAT
  // as strptime, -r FILE; comm, split and printenv are not in the beds' busybox.
  {
    script:
      "date -u -d '10:00' +%H:%M:%S; date -u -d '10:00:30' +%T; date -u -d '2024-01-01 10:00' +%F_%T; date -u -d '2024-01-01' +%F_%T; date -u -d '2024-01-01 7' +%F_%T",
    stdout: '10:00:00\n10:00:30\n2024-01-01_10:00:00\n2024-01-01_00:00:00\n2024-01-01_07:00:00\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "date -u -d '202401021030' +%F_%T; date -u -d '2024.01.02-10:30' +%F_%T; date -u -d '01.02-10:30:05' +%m-%d_%T; date -u -d 'Jan 2 10:00:00 2024' +%F_%T; date -u -d @1700000000 +%s",
    stdout: '2024-01-02_10:30:00\n2024-01-02_10:30:00\n01-02_10:30:05\n2024-01-02_10:00:00\n1700000000\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: "for d in 01/02/2024 now yesterday '+1 day' @1700000000.5 'Jan 2 2024' 2024-01-01T10:00:00; do date -u -d \"$d\" +%F 2>&1; done; echo $?",
    stdout:
      "date: invalid date '01/02/2024'\ndate: invalid date 'now'\ndate: invalid date 'yesterday'\ndate: invalid date '+1 day'\ndate: invalid date '@1700000000.5'\ndate: invalid date 'Jan 2 2024'\ndate: invalid date '2024-01-01T10:00:00'\n1\n",
    stderr: '',
    exitCode: 0,
  },
  {
    script: "date -D '%Y%m%d' -d 20240102 -u +%F; date -D '%d/%m/%Y %H:%M' -d '02/01/2024 10:30' -u +%F_%T; date -u -D '%Y' -d x +%F; echo $?",
    stdout: '2024-01-02\n2024-01-02_10:30:00\n1\n',
    stderr: "date: invalid date 'x'\n",
    exitCode: 0,
  },
  {
    script: "touch -d '2024-01-02 03:04:05' /tmp/rt-td; date -u -r /tmp/rt-td +%F_%T; rm /tmp/rt-td; date -r /nosuch; echo $?",
    stdout: '2024-01-02_03:04:05\n1\n',
    stderr: "date: can't stat '/nosuch': No such file or directory\n",
    exitCode: 0,
  },
  {
    script: 'comm; split; printenv; echo $?',
    stdout: '127\n',
    stderr: 'sh: comm: not found\nsh: split: not found\nsh: printenv: not found\n',
    exitCode: 0,
  },
  // wc -m counts characters as busybox's Unicode count does: each byte that does not continue a UTF-8 sequence.
  {
    script: `printf 'héllo\\nwörld\\n' > /tmp/rt-w; wc -m /tmp/rt-w; printf '日本語\\n' | wc -m; printf 'h\\377llo\\n' | wc -m`,
    stdout: '12 /tmp/rt-w\n4\n6\n',
  },
  // printf's numbers as busybox reads them: 64 bits, all of the argument a number (else 0, `invalid number`, exit 1),
  // a quoted character's byte, a `*` that is no number (said, not failed), the format reused; C's inf and %c's NUL.
  {
    script: `printf '[%d]' abc '3 ' ' 3' +-3 "'a" 99999999999999999999 0x1f 010; echo " rc=$?"; printf '[%u][%x][%o]' -1 -1 -1; echo`,
    stdout: '[0][0][3][-3][97][0][31][8] rc=1\n[18446744073709551615][ffffffffffffffff][1777777777777777777777]\n',
    stderr: "sh: invalid number 'abc'\nsh: invalid number '3 '\nsh: invalid number '99999999999999999999'\n",
  },
  {
    script: `printf '[%*d][%.*f]' x 5 y 1.5; echo " rc=$?"; printf '%d %d|' 1 2 3; printf '[%#o][%#x][%.0d][%08.3d][%-5d]\\n' 8 0 0 7 3`,
    stdout: '[5][2] rc=0\n1 2|3 0|[010][0][][     007][3    ]\n',
    stderr: "sh: invalid number 'x'\nsh: invalid number 'y'\nsh: invalid number ''\n",
    exitCode: 0,
  },
  {
    script: `printf '[%f][%5.1f][%G][%f][%e]' inf -inf inf '1.5 ' 0x1p3; echo " rc=$?"; printf '[%c%c][%3c]' abc '' '' | od -An -c`,
    stdout: '[inf][ -inf][INF][0.000000][8.000000e+00] rc=1\n   [   a  \\0   ]   [          \\0   ]\n',
    stderr: "sh: invalid number '1.5 '\n",
  },
  { script: 'yes | head -3', stdout: 'y\ny\ny\n' },
  { script: 'yes ab cd | head -2', stdout: 'ab cd\nab cd\n' },
  { script: `ash -c 'echo $0 ok; exit 4'`, stdout: 'ash ok\n', exitCode: 4 },
  { script: `mktemp | grep -c '^/tmp/tmp\\.[A-Za-z0-9]\\{6\\}$'`, stdout: '1\n' },
  { script: 'f=$(mktemp); d=$(mktemp -d); stat -c %a "$f" "$d"; rm -r "$f" "$d"', stdout: '600\n700\n' },
  { script: `mktemp -d /tmp/rt-x.XXXXXX | sed 's/......$/XXXXXX/'`, stdout: '/tmp/rt-x.XXXXXX\n' },
  { script: 'echo hi > /tmp/rt-o; chown 33:34 /tmp/rt-o; stat -c "%u %g" /tmp/rt-o', stdout: '33 34\n' },
  { script: 'chown root: /tmp/rt-o; stat -c "%u %g" /tmp/rt-o', stdout: '0 0\n' },
  { script: 'chown nobody /tmp/rt-o; echo $?', stdout: '1\n', stderr: 'chown: unknown user nobody\n' },
  { script: 'chown 0 /nosuch; echo $?', stdout: '1\n', stderr: 'chown: /nosuch: No such file or directory\n' },
  { script: 'dd if=/dev/zero of=/tmp/rt-z bs=1k count=3; stat -c %s /tmp/rt-z', stdout: '3072\n', stderr: '3+0 records in\n3+0 records out\n' },
  { script: 'echo abcdef | dd bs=1 skip=2 count=3 2>/dev/null', stdout: 'cde' },
  { script: 'echo abcdef | dd bs=4', stdout: 'abcdef\n', stderr: '1+1 records in\n1+1 records out\n' },
  { script: 'dd if=/nosuch', stdout: '', stderr: "dd: can't open '/nosuch': No such file or directory\n", exitCode: 1 },
  // dd as busybox 1.35's dd.c: status=none/noxfer, ibs/obs and the records they count, skip and seek past the ends, oflag=append and seek_bytes, iflag=skip_bytes/count_bytes, conv=sync and swab, its refusals and usage.
  {
    script:
      'cd "$(mktemp -d)"; rm -f rt-ddf; dd if=/dev/zero of=rt-ddf bs=1M count=2 status=none; echo $?; stat -c \'%s %b\' rt-ddf; dd if=/dev/zero of=rt-ddf bs=1k count=1 status=noxfer; echo $?',
    stdout: '0\n2097152 4096\n0\n',
    stderr: '1+0 records in\n1+0 records out\n',
    exitCode: 0,
  },
  {
    script:
      'cd "$(mktemp -d)"; printf \'abcdefghij\' > rt-ddf; dd if=rt-ddf of=rt-ddg bs=3 skip=1 2>&1; cat rt-ddg; echo; dd if=rt-ddf bs=4 count=1 2>/dev/null; echo; dd if=rt-ddf ibs=2 obs=5 count=3 2>&1',
    stdout: '2+1 records in\n2+1 records out\ndefghij\nabcd\nabcdef3+0 records in\n1+1 records out\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd \"$(mktemp -d)\"; printf 'abc' > rt-ddf; printf 'XYZ' | dd of=rt-ddf oflag=append conv=notrunc 2>/dev/null; cat rt-ddf; echo; printf 'ab' | dd conv=ucase 2>/dev/null; echo; printf 'ab' | dd bs=4 conv=sync 2>/dev/null | od -c",
    stdout: 'abcXYZ\n\n0000000   a   b  \\0  \\0\n0000004\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'cd /tmp; dd if=/dev/zero of=rt-ddf bs=1k count=1 conv=fsync 2>&1; dd if=/nonexist of=rt-ddf 2>&1; echo $?; dd bs=0 2>&1 </dev/null; echo $?; dd foo=1 2>&1; echo $?',
    stdout:
      "1+0 records in\n1+0 records out\ndd: can't open '/nonexist': No such file or directory\n1\ndd: number 0 is not in 1..9223372036854775807 range\n1\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: dd [if=FILE] [of=FILE] [ibs=N obs=N/bs=N] [count=N] [skip=N] [seek=N]\n\t[conv=notrunc|noerror|sync|fsync]\n\t[iflag=skip_bytes|count_bytes|fullblock|direct] [oflag=seek_bytes|append|direct]\n\nCopy a file with converting and formatting\n\n\tif=FILE\t\tRead from FILE instead of stdin\n\tof=FILE\t\tWrite to FILE instead of stdout\n\tbs=N\t\tRead and write N bytes at a time\n\tibs=N\t\tRead N bytes at a time\n\tobs=N\t\tWrite N bytes at a time\n\tcount=N\t\tCopy only N input blocks\n\tskip=N\t\tSkip N input blocks\n\tseek=N\t\tSkip N output blocks\n\tconv=notrunc\tDon't truncate output file\n\tconv=noerror\tContinue after read errors\n\tconv=sync\tPad blocks with zeros\n\tconv=fsync\tPhysically write data out before finishing\n\tconv=swab\tSwap every pair of bytes\n\tiflag=skip_bytes\tskip=N is in bytes\n\tiflag=count_bytes\tcount=N is in bytes\n\toflag=seek_bytes\tseek=N is in bytes\n\tiflag=direct\tO_DIRECT input\n\toflag=direct\tO_DIRECT output\n\tiflag=fullblock\tRead full blocks\n\toflag=append\tOpen output in append mode\n\tstatus=noxfer\tSuppress rate output\n\tstatus=none\tSuppress all output\n\nN may be suffixed by c (1), w (2), b (512), kB (1000), k (1024), MB, M, GB, G\n1\n",
    stderr: '',
    exitCode: 0,
  },
  {
    script: "cd \"$(mktemp -d)\"; printf 'hello' | dd of=rt-ddf seek=1 bs=2 2>&1; od -c rt-ddf; printf 'hello' | dd 2>&1 | od -c | head -3",
    stdout:
      '2+1 records in\n2+1 records out\n0000000  \\0  \\0   h   e   l   l   o\n0000007\n0000000   h   e   l   l   o   0   +   1       r   e   c   o   r   d   s\n0000020       i   n  \\n   0   +   1       r   e   c   o   r   d   s    \n0000040   o   u   t  \\n\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd \"$(mktemp -d)\"; printf 'abcdefghij' > rt-dd; dd if=rt-dd bs=4 skip=3 count=2 iflag=skip_bytes,count_bytes 2>&1; echo; printf 'qwe' | dd conv=swab 2>/dev/null; echo; printf 'abcdef' | dd bs=4 conv=swab 2>&1; echo \" $?\"",
    stdout: 'de0+1 records in\n0+1 records out\n\nwqe\nbadcfe1+1 records in\n1+1 records out\n 0\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd \"$(mktemp -d)\"; printf '12345' > rt-dd; printf 'xy' | dd of=rt-dd seek=3 oflag=seek_bytes conv=notrunc 2>/dev/null; echo \"$(cat rt-dd)\"; printf 'xy' | dd of=rt-dd seek=1 oflag=seek_bytes 2>/dev/null; cat rt-dd; echo; dd if=rt-dd skip=9 2>&1",
    stdout: '123xy\n1xy\n0+0 records in\n0+0 records out\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'cd /tmp; dd status=x 2>&1; echo $?; dd conv=notrunc,bad 2>&1; echo $?; dd count=-1 2>&1; echo $?; dd bs=1kB count=0 2>&1; echo $?; dd seek=1 2>&1 </dev/null; echo $?',
    stdout:
      "dd: invalid argument 'x' to 'status'\n1\ndd: invalid argument 'bad' to 'conv'\n1\ndd: invalid number '-1'\n1\n0+0 records in\n0+0 records out\n0\ndd: standard output: Illegal seek\n1\n",
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'cd /tmp; dd if=/tmp 2>&1; echo $?; dd if=/dev/null of=/tmp 2>&1; echo $?; dd if=/dev/null of=/nonexist/x 2>&1; echo $?; dd if=/dev/zero bs=3 count=2 2>/dev/null | od -An -c; dd if=/dev/null 2>&1',
    stdout:
      "dd: /tmp: Is a directory\n1\ndd: can't open '/tmp': Is a directory\n1\ndd: can't open '/nonexist/x': No such file or directory\n1\n  \\0  \\0  \\0  \\0  \\0  \\0\n0+0 records in\n0+0 records out\n",
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      "cd \"$(mktemp -d)\"; printf 'abcdefgh' | dd ibs=3 obs=2 2>&1; echo; printf 'abcdefgh' | dd ibs=3 obs=2 conv=sync 2>&1 | od -An -c; printf 'abc' | dd bs=2 count=1 iflag=fullblock 2>&1",
    stdout:
      'abcdefgh2+1 records in\n4+0 records out\n\n   a   b   c   d   e   f   g   h  \\0   2   +   1       r   e   c\n   o   r   d   s       i   n  \\n   4   +   1       r   e   c   o\n   r   d   s       o   u   t  \\n\nab1+0 records in\n1+0 records out\n',
    stderr: '',
    exitCode: 0,
  },
  // cmp as busybox 1.35's cmp.c: -l's octal list, -s and -l refusing each other, -n, SKIP1 and SKIP2, `EOF on` on stderr, no long options.
  {
    script:
      "cd \"$(mktemp -d)\"; printf 'abcx\\ndef' > rt-m1; printf 'abcy\\ndeg' > rt-m2; printf 'abc' > rt-m3; cmp -l rt-m1 rt-m2; echo $?; cmp -l rt-m1 rt-m3; echo $?; cmp rt-m1 rt-m3; echo $?; cmp rt-m3 rt-m1; echo $?",
    stdout: '4 170 171\n8 146 147\n1\n1\n1\n1\n',
    stderr: 'cmp: EOF on rt-m3\ncmp: EOF on rt-m3\ncmp: EOF on rt-m3\n',
    exitCode: 0,
  },
  {
    script:
      "cd \"$(mktemp -d)\"; printf 'abcx\\ndef' > rt-m1; printf 'abcy\\ndeg' > rt-m2; cmp -n 3 rt-m1 rt-m2; echo $?; cmp -n 4 rt-m1 rt-m2; echo $?; cmp -ls rt-m1 rt-m2; echo $?; cmp -sl rt-m1 rt-m2; echo $?",
    stdout: '0\nrt-m1 rt-m2 differ: char 4, line 1\n1\n1\n1\n',
    stderr:
      'BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: cmp [-ls] [-n NUM] FILE1 [FILE2 [SKIP1 [SKIP2]]]\n\nCompare FILE1 with FILE2 (or stdin)\n\n\t-l\tWrite the byte numbers (decimal) and values (octal)\n\t\tfor all differing bytes\n\t-s\tQuiet\n\t-n NUM\tCompare at most NUM bytes\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: cmp [-ls] [-n NUM] FILE1 [FILE2 [SKIP1 [SKIP2]]]\n\nCompare FILE1 with FILE2 (or stdin)\n\n\t-l\tWrite the byte numbers (decimal) and values (octal)\n\t\tfor all differing bytes\n\t-s\tQuiet\n\t-n NUM\tCompare at most NUM bytes\n',
    exitCode: 0,
  },
  {
    script:
      "cd \"$(mktemp -d)\"; printf 'abcx\\ndef' > rt-m1; printf 'Xabcy\\ndeg' > rt-m2; cmp rt-m1 rt-m2 0 1; echo $?; cmp rt-m1 rt-m2 5 6; echo $?; cmp -s /nonexist rt-m1; echo $?; cmp /nonexist rt-m1; echo $?; cmp; echo $?",
    stdout: 'rt-m1 rt-m2 differ: char 4, line 1\n1\nrt-m1 rt-m2 differ: char 3, line 1\n1\n2\n2\n1\n',
    stderr:
      'cmp: /nonexist: No such file or directory\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: cmp [-ls] [-n NUM] FILE1 [FILE2 [SKIP1 [SKIP2]]]\n\nCompare FILE1 with FILE2 (or stdin)\n\n\t-l\tWrite the byte numbers (decimal) and values (octal)\n\t\tfor all differing bytes\n\t-s\tQuiet\n\t-n NUM\tCompare at most NUM bytes\n',
    exitCode: 0,
  },
  {
    script:
      "cd \"$(mktemp -d)\"; printf 'a\\nb\\nc' > rt-m1; printf 'a\\nb\\nd' | cmp rt-m1; echo $?; printf 'a\\nb\\nd' | cmp - rt-m1; echo $?; cmp rt-m1 rt-m1 rt-m1 1 1 2>&1 | head -3; echo $?; cmp -n x rt-m1 rt-m1; echo $?",
    stdout:
      'rt-m1 - differ: char 5, line 3\n1\n- rt-m1 differ: char 5, line 3\n1\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: cmp [-ls] [-n NUM] FILE1 [FILE2 [SKIP1 [SKIP2]]]\n0\n1\n',
    stderr: "cmp: invalid number 'x'\n",
    exitCode: 0,
  },
  {
    script:
      "cd \"$(mktemp -d)\"; printf '\\200\\377' > rt-m1; printf '\\201\\376' > rt-m2; cmp -l rt-m1 rt-m2; cmp --verbose rt-m1 rt-m2; cmp --bytes=1 rt-m1 rt-m2; echo $?",
    stdout: '1 200 201\n2 377 376\n1\n',
    stderr:
      "cmp: unrecognized option '--verbose'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: cmp [-ls] [-n NUM] FILE1 [FILE2 [SKIP1 [SKIP2]]]\n\nCompare FILE1 with FILE2 (or stdin)\n\n\t-l\tWrite the byte numbers (decimal) and values (octal)\n\t\tfor all differing bytes\n\t-s\tQuiet\n\t-n NUM\tCompare at most NUM bytes\ncmp: unrecognized option '--bytes=1'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: cmp [-ls] [-n NUM] FILE1 [FILE2 [SKIP1 [SKIP2]]]\n\nCompare FILE1 with FILE2 (or stdin)\n\n\t-l\tWrite the byte numbers (decimal) and values (octal)\n\t\tfor all differing bytes\n\t-s\tQuiet\n\t-n NUM\tCompare at most NUM bytes\n",
    exitCode: 0,
  },
  // /dev/null keeps nothing written to it, by a redirection, tee or dd.
  {
    script:
      'echo abc | tee /dev/null >/dev/null; wc -c < /dev/null; echo q > /dev/null; echo r >> /dev/null; dd if=/dev/zero of=/dev/null bs=1k count=3 2>&1; cat /dev/null | wc -c; dd if=/dev/null 2>/dev/null | wc -c',
    stdout: '0\n3+0 records in\n3+0 records out\n0\n0\n',
    stderr: '',
    exitCode: 0,
  },
  // truncate, dd and fallocate follow a final symlink, as open(2) does (a dangling one makes its target).
  {
    script:
      'cd "$(mktemp -d)"; echo hello > t; ln -s t l; truncate -s 3 l; ls -l l | cut -c1-10; echo "$(cat t)"; printf \'XY\' | dd of=l seek=1 bs=1 2>/dev/null; echo "$(cat t)"; fallocate -l 8 l; stat -c \'%F %s\' l t; ln -s missing d; truncate -s 2 d; ls -l missing | cut -c1-10; stat -c \'%F %s\' d missing',
    stdout: 'lrwxrwxrwx\nhel\nhXY\nsymbolic link 1\nregular file 8\n-rw-r--r--\nsymbolic link 7\nregular file 2\n',
    stderr: '',
    exitCode: 0,
  },
  { script: 'df / | head -1; df / | wc -l', stdout: 'Filesystem           1K-blocks      Used Available Use% Mounted on\n2\n' },
  { script: 'df -h / | head -1', stdout: 'Filesystem                Size      Used Available Use% Mounted on\n' },
  { script: 'ps | head -1; ps -o pid | sed -n 2p', stdout: 'PID   USER     COMMAND\n    1\n' },
  { script: 'ps -o pid,user | sed -n 1,2p', stdout: 'PID   USER\n    1 root\n' },
  { script: 'wc -l < /proc/1/comm; tr "\\0" "\\n" < /proc/1/cmdline | grep -c ^/sbin/', stdout: '1\n1\n' },
  { script: 'cut -f1 /proc/cpuinfo | head -1; grep -c "^MemTotal: .* kB$" /proc/meminfo', stdout: 'processor\n1\n' },
  { script: `wc -w < /proc/uptime; grep -c '^[0-9.]* [0-9.]*$' /proc/uptime`, stdout: '2\n1\n' },
  { script: 'grep -c ^Pid: /proc/self/status; grep "^Name:" /proc/1/status | wc -l', stdout: '1\n1\n' },
  { script: 'grep -c " / " /proc/mounts; grep -c "^proc /proc proc" /proc/mounts', stdout: '1\n1\n' },
  { script: 'id; id -un; hostname | wc -l', stdout: 'uid=0(root) gid=0(root)\nroot\n1\n' },
  // expr as busybox's: 64-bit integers that wrap, strtoll's numbers, anchored basic expressions
  // (a group's text, else the match's length), its keywords and its messages.
  { script: `expr abc : 'a\\(.\\)'; expr abc : 'x\\(.\\)'; echo $?; expr aaa : 'a\\+'; expr abc : '.\\{2\\}'`, stdout: 'b\n\n1\n3\n2\n' },
  {
    script: 'expr 9223372036854775807 + 1; expr 99999999999999999999 + 0; expr -7 / 2; expr -7 % 2',
    stdout: '-9223372036854775808\n9223372036854775807\n-3\n-1\n',
  },
  {
    script: `expr 5 '<' 1a; expr 10 '>' 9; expr '(' 2 + 3 ')' '*' 2 - 1; expr 2 + 3 : 1; expr -0; expr substr abc 2 9; expr index abc xc`,
    stdout: '0\n1\n9\n2\n-0\nbc\n3\n',
  },
  {
    script: 'expr a + 1; echo $?; expr; echo $?; expr quote match; expr length length; echo $?',
    stdout: '2\n2\nmatch\n2\n',
    stderr: 'expr: non-numeric argument\nexpr: too few arguments\nexpr: syntax error\n',
  },
  {
    script: `expr abc : '^a'; expr abc : 'a\\('; echo $?`,
    stdout: '1\n2\n',
    stderr:
      "expr: warning: '^a': using '^' as the first character\nof a basic regular expression is not portable; it is ignored\n" +
      "expr: bad regex 'a\\(': Unmatched ( or \\(\n",
  },
  // hostname looks the name up for -i, -f and -d: the containers have no hosts file and nothing to
  // ask, so only a numeric name resolves (as inet_aton reads it). root sets the node name in the
  // container's own UTS namespace (each case sets the instance's back).
  {
    script: `{ hostname -i; hostname -f; hostname -d; echo $?; } 2>&1 | sed "s/$(hostname)/NAME/"`,
    stdout: 'hostname: NAME: Host name lookup failure\nhostname: NAME: Host name lookup failure\nhostname: NAME: Host name lookup failure\n1\n',
  },
  {
    script: `old=$(hostname); hostname foo.bar; hostname; hostname -s; uname -n; sh -c 'echo $HOSTNAME'; hostname -d 2>&1; hostname 1.2; hostname -i; hostname -f; hostname -- a..b; hostname -i; hostname "$old"; [ "$(hostname)" = "$old" ] && echo back`,
    stdout: 'foo.bar\nfoo\nfoo.bar\nfoo.bar\nhostname: foo.bar: Host name lookup failure\n1.0.0.2\n1.2\nback\n',
    stderr: 'hostname: a..b: Unknown host\n',
  },
  {
    script: `printf "# c\\n  n1 x\\nn2\\n" > /tmp/rt-h; old=$(hostname); hostname -F /tmp/rt-h; hostname; hostname "$old"; hostname -F /nosuch; hostname $(printf "%065d" 0); echo $?`,
    stdout: 'n2\n1\n',
    stderr: "hostname: can't open '/nosuch': No such file or directory\nhostname: sethostname: Invalid argument\n",
  },
  // su as busybox's setup_environment and run_shell: a login shell's cleared environment, home and `-sh`, the shell's argv.
  {
    script: `cd /tmp; export FOO=1; su - -c 'echo "$0 $PWD $SHLVL"; env | grep -v ^TERM= | sort'`,
    stdout: '-sh /root 1\nHOME=/root\nLOGNAME=root\nPATH=/sbin:/usr/sbin:/bin:/usr/bin\nPWD=/root\nSHELL=/bin/sh\nSHLVL=1\nUSER=root\n',
  },
  { script: `export FOO=1; cd /tmp; su -c 'echo "$0 $PWD $FOO $HOME $SHELL $SHLVL"'`, stdout: 'sh /tmp 1 /root /bin/sh 2\n' },
  {
    script: `cd /tmp; su -s /bin/ash - -c 'echo $0 $SHELL $PWD'; SHELL=/bin/ash su -m -c 'echo $0 $SHELL'`,
    stdout: '-ash /bin/ash /root\nash /bin/ash\n',
  },
  { script: `echo 'echo "$0 $1 $PWD"' | su - root; su root -c 'echo "$0 $1"' zero one`, stdout: '-sh  /root\nzero one\n' },
  {
    script: `printf 'echo "$0 $*"\\n' > /tmp/rt-s; su root /tmp/rt-s a b; su - root /tmp/rt-s c; rm /tmp/rt-s`,
    stdout: '/tmp/rt-s a b\n/tmp/rt-s c\n',
  },
  {
    script: `printf 'echo in-profile; P=1\\n' > /etc/profile; printf 'echo home $P\\n' > /root/.profile; su - -c 'echo P=$P'; su -c 'echo x$P'; rm /etc/profile /root/.profile`,
    stdout: 'in-profile\nhome 1\nP=1\nx\n',
  },
  { script: `su - -c foo; echo $?; echo foo | su`, stdout: '127\n', stderr: '-sh: foo: not found\nsh: foo: not found\n', exitCode: 127 },
  { script: `printf 'echo prof\\n' > /etc/profile; sh -l -c 'echo $0'; sh -c 'echo $0'; rm /etc/profile`, stdout: 'prof\nsh\nsh\n' },
  {
    script: `su -s /bin/nosuch -c 'echo hi'; echo $?; su -l -c 'echo $0' arg0; echo $?`,
    stdout: '1\n1\n',
    stderr: "su: can't execute '/bin/nosuch': No such file or directory\nsu: unknown user arg0\n",
  },
  // awk: referring to an array element makes it (`a["k"]` alone, as a function's argument, in a comparison), `in` does not; length() of an array counts its elements.
  {
    script: 'awk \'BEGIN { a["x"]=1; delete a["x"]; b["k"]; print length(a), length(b); for (k in c) n++; print length(c) }\'',
    stdout: '0 1\n0\n',
    stderr: '',
    exitCode: 0,
  },
  { script: 'awk \'function f(arr) { return arr["q"] } BEGIN { f(a); print length(a) }\'', stdout: '1\n', stderr: '', exitCode: 0 },
  {
    script:
      'awk \'BEGIN { a[1]; a[2]=5; print length(a); if (a[3] == "") print "empty"; print (3 in a), length(a); x = a[9] + 1; print length(a), x }\'',
    stdout: '2\nempty\n1 3\n4 1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'awk \'BEGIN { n = split("a b c", p); print n, length(p); delete p; print length(p); print length("abc"), length() }\' </dev/null',
    stdout: '3 3\n0\n3 0\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'echo "a b" | awk \'{ c[$1]++; c[$2]; print length(c); for (k in c) s = s k; print length(s) }\'',
    stdout: '2\n2\n',
    stderr: '',
    exitCode: 0,
  },
  // awk compares as busybox 1.35 does: numbers when both sides are numbers, numeric input (a field, getline's, split's, -v's,
  // all a number) or uninitialized, else strings (a string constant "10", a concatenation, substr(), for-in's key, sub()'s
  // target); truth by the same kind ("0" is true, a field 0.0 false); numbers read as its my_strtod (0x1A, an octal 010);
  // split() of an empty or blank string makes nothing.
  {
    script:
      'awk \'BEGIN{ if (x == 0) print "uninit==0"; if (x == "") print "uninit==empty"; if (a["k"] == 0) print "elem==0"; if ("0") print "str0-true"; y = "0"; if (y) print "y-true"; if (!z) print "z-false" }\'',
    stdout: 'uninit==0\nuninit==empty\nelem==0\nstr0-true\ny-true\nz-false\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'echo "a  0 " | awk \'{ if ($2 == 0) print "f2==0"; if ($3 == 0) print "f3==0"; if ($3 == "") print "f3 empty"; if ($2) print "f2 true"; else print "f2 false"; if ($2 == "0") print "f2 eq str" }\'',
    stdout: 'f2==0\nf3==0\nf3 empty\nf2 false\nf2 eq str\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'echo "10 9 abc 1e1 0x1A +5 .5 " | awk \'{ print ($1 > $2), ($4 == 10), ($5 == 26), ($6 == 5), ($7 == 0.5), ($3 > 5) }\'',
    stdout: '1 1 1 1 1 1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'awk \'BEGIN{ x = "10"; y = x; print (y < 9); z = y + 0; print (z < 9); for (k in ENVIRON) if (k == "HOME") print "home"; split("10 9", s); print (s[1] < s[2]); n = substr("100", 1); print (n < 99), (n+0 < 99) }\'',
    stdout: '1\n0\nhome\n0\n1 0\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'awk -v v=10 \'BEGIN{ w = v; print (w < 9), (v < "9"); a["x"] = "10"; print (a["x"] < 9); b["y"] = 10; print (b["y"] < 9) }\'',
    stdout: '0 1\n1\n0\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'awk \'function f(p) { return p < 9 } function g() { return "10" } BEGIN{ print f("10"), f(10), (g() < 9); x = "10"; x = x; print (x < 9); x++; print (x < 9) }\'',
    stdout: '1 0 1\n1\n0\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: "printf '10\\n9\\n' | awk '{ v[NR] = $1 } END { print (v[1] < v[2]); t = $0; print (t < 9); getline q < \"/dev/null\"; print (q == 0) }'",
    stdout: '0\n0\n1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'awk \'BEGIN{ x = "3x"; print (x == 3), (x < 4); x = " 3 "; print (x == 3); "echo 10" | getline g; print (g < 9); sub(/1/, "1", g); print (g < 9) }\'',
    stdout: '0 1\n0\n0\n1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'awk \'BEGIN{ a["10"]; a["9"]; for (k in a) { if (k < 5) print "lt5", k; } x = "5"; sub(/5/, "50", x); print (x < 6); y = 5; sub(/5/, "50", y); print (y < 6) }\'',
    stdout: 'lt5 10\n1\n1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'awk \'function f(p) { return (p == 0) } BEGIN{ print f(), f(""), f(0); y = x; print (y == 0), (x == 0) }\'',
    stdout: '1 0 1\n0 1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'echo "0x1A 010 0.0 inf" | awk \'{ print ($1 == 26), ($2 == 8), ($2 == 10), ($3 ? "t" : "f"), ($4 > 5), $1 + 0, $2 + 0 }\'',
    stdout: '1 1 0 f 1 26 8\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'awk \'BEGIN{ x = 1 ? "10" : 5; print (x < 9); print ("" ? "t" : "f"), ("a" ? "t" : "f"), (0 ? "t" : "f"), ("0.0" ? "t" : "f") }\'',
    stdout: '1\nf t f t\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'awk \'BEGIN{ for (k in ENVIRON) if (k == "HOME") print "home", ENVIRON[k]; for (i in ARGV) n++; print n, ARGC }\' p q',
    stdout: 'home /root\n3 3\n',
    stderr: '',
    exitCode: 0,
  },
  { script: "awk 'function f(arr, k) { for (k in arr) c++; return c } BEGIN { a[1]; a[2]; print f(a) }'", stdout: '2\n', stderr: '', exitCode: 0 },
  {
    script:
      "printf '5\\n10\\n' | awk '$1 > 7'; printf 'b 2\\na 10\\n' | awk '$2 >= 3 { print $1 }'; echo \"x\" | awk '{ n = split(\"\", e); print n, length(e), (e[1] == 0) }'",
    stdout: '10\na\n0 0 1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'awk \'BEGIN { x["a"] = "07"; y = x["a"]; print (y < 10), (y == 7), y + 0, "010" + 0, 010 + 0, 0x10 + 0, "1e2" + 0, " 12 " + 0, "0x" + 0, "-0x10" + 0 }\'',
    stdout: '1 0 7 8 8 16 100 12 0 -16\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'echo "007 08 0.5e1 -3 +4" | awk \'{ print $1 + 0, $2 + 0, $3 + 0, ($4 < 0), ($5 == 4), ($1 == 7) }\'',
    stdout: '7 8 5 1 1 1\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script:
      'awk \'BEGIN { if (substr("0", 1)) print "t1"; if (0 "") print "t2"; if (1 - 1) print "t3"; x = sprintf("%d", 0); if (x) print "t4"; if (!x) print "t5" }\'',
    stdout: 't1\nt2\nt4\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'awk \'BEGIN { print split("  ", a), split(" a b ", b), b[1], split("a:b:", c, ":"), split(":", d, ":"), split("", f, ":") }\'',
    stdout: '0 2 a 3 2 0\n',
    stderr: '',
    exitCode: 0,
  },
  { script: 'echo "  lead" | awk \'{ print NF, $1; n = split($0, w); print n, w[1] }\'', stdout: '1 lead\n1 lead\n', stderr: '', exitCode: 0 },
  // What a shell timeout kills wrote before it died is kept (its own commands, a group's, a function's, through `$(…)`).
  { script: "timeout 1 sh -c 'echo a; sleep 5'; echo rc=$?", stdout: 'a\nrc=143\n', stderr: 'Terminated\n', exitCode: 0 },
  {
    script:
      "timeout 1 sh -c 'echo a; echo e >&2; sleep 5; echo b'; echo rc=$?; timeout 1 sh -c 'for i in 1 2; do echo $i; done; sleep 3'; echo rc=$?",
    stdout: 'a\nrc=143\n1\n2\nrc=143\n',
    stderr: 'e\nTerminated\nTerminated\n',
    exitCode: 0,
  },
  {
    script:
      "timeout 1 sh -c '{ echo g; sleep 5; }'; echo rc=$?; timeout 1 sh -c 'f() { echo fn; sleep 5; }; f'; echo rc=$?; x=$(timeout 1 sh -c 'echo cs; sleep 4'); echo \"[$x] $?\"",
    stdout: 'g\nrc=143\nfn\nrc=143\n[cs] 143\n',
    stderr: 'Terminated\nTerminated\nTerminated\n',
    exitCode: 0,
  },
  // A shell timeout signals takes the signal by its trap (after the command it came during) and ends as that says; `-k`'s KILL after ends it.
  {
    script:
      'timeout -s TERM 1 sh -c \'trap "echo got TERM; exit 7" TERM; sleep 2; echo after\'; echo rc=$?; timeout 1 sh -c \'trap "echo got TERM" TERM; sleep 2; echo after\'; echo rc=$?; timeout -k 1 1 sh -c \'trap "echo got TERM" TERM; sleep 5; echo after\'; echo rc=$?',
    stdout: 'got TERM\nrc=7\ngot TERM\nafter\nrc=0\nrc=137\n',
    stderr: 'Killed\n',
    exitCode: 0,
  },
  // grep's basic expressions take glibc's `\+`, `\?`, `\w`, `\s` (through regcomp); it refuses `-P` with its usage, 2, and takes `-a`.
  {
    script:
      "echo \"aa ab\" | grep -o 'a\\+'; echo \"color colour\" | grep -o 'colou\\?r'; echo \"a1 b2\" | grep -o '\\w\\+'; echo \"x  y\" | grep -c 'x\\s\\+y'; echo \"AB12\" | grep -o '[[:digit:]]\\{2\\}'; echo \"aXb\" | grep -o '[[:alpha:]]\\+'; echo 'a{2}' | grep -o 'a{2}'",
    stdout: 'aa\na\ncolor\ncolour\na1\nb2\n1\n12\naXb\na{2}\n',
    stderr: '',
    exitCode: 0,
  },
  // TZ is a POSIX string read as glibc reads it (the image has no zoneinfo): offsets, names, quoted names, a name too short, TZ= and :NAME, a file name that is not there.
  {
    script:
      "date -d @0; TZ= date -d @0; TZ=:UTC date -d @0 +%Z; TZ=EST5 date -d @0 '+%z %Z'; TZ='<+0330>-3:30' date -d @0 '+%H:%M %z %Z'; TZ=AB5 date -d @0 '+%H %Z|'; TZ=IST-5:30 date -d @0 '+%H:%M %Z'; TZ=Europe/Paris date -d @0 '+%H %Z'; TZ=XYZ date -d @0 '+%H %Z'; TZ='ABC-24:70' date -d @0 '+%H:%M %Z'",
    stdout:
      'Thu Jan  1 00:00:00 UTC 1970\nThu Jan  1 00:00:00 Universal 1970\nUTC\n-0500 EST\n03:30 +0330 +0330\n00 |\n05:30 IST\n00 Europe\n00 XYZ\n00:59 ABC\n',
    stderr: '',
    exitCode: 0,
  },
  // Daylight time: glibc's default rules (M3.2.0,M11.1.0), M, J and n rules with times of day; only an exported TZ counts.
  {
    script:
      "TZ=EST5EDT date -d @1600000000; TZ=EST5EDT date -d @1610000000; TZ=CET-1CEST date -d @0 '+%H:%M %Z'; TZ=NZST-12NZDT,M9.5.0,M4.1.0/3 date -d @1700000000 '+%F %T %Z'; TZ=NZST-12NZDT,M9.5.0,M4.1.0/3 date -d @1690000000 '+%F %T %Z'; TZ=XYZ-2ABC,J60/0,300 date -d @1590000000 '+%T %Z'; TZ=EST5; date -d @0; export TZ; date -d @0 '+%s %Z'; date -u -d @0",
    stdout:
      'Sun Sep 13 08:26:40 EDT 2020\nThu Jan  7 01:13:20 EST 2021\n01:00 CET\n2023-11-15 11:13:20 NZDT\n2023-07-22 16:26:40 NZST\n21:40:00 ABC\nThu Jan  1 00:00:00 UTC 1970\n0 EST\nThu Jan  1 00:00:00 UTC 1970\n',
    stderr: '',
    exitCode: 0,
  },
  // A date read in local time (mktime): a gap, an ambiguous hour, -D; -R, -I and %z's flags in the zone.
  {
    script:
      "TZ=EST5 date -d '1970-01-01 00:00:00' +%s; TZ=CET-1CEST date -d '2020-07-01 12:00' '+%s %Z'; TZ=EST5EDT date -d '2021-03-14 02:30:00' '+%F %T %Z'; TZ=EST5EDT date -d '2021-11-07 01:30:00' '+%s %Z'; TZ=NZST-12NZDT,M9.5.0,M4.1.0/3 date -d '2021-04-04 02:30:00' '+%s %Z'; TZ=EST5EDT date -D '%d.%m.%Y %H:%M' -d '01.07.2021 12:00' '+%s %Z'; TZ=EST5 date -d @0 -R; TZ=EST5 date -d @0 -Iseconds; TZ=EST5 date -d @0 '+%#Z %-H %_z|%-z|%6z|%%Z'",
    stdout:
      '18000\n1593597600 CEST\n2021-03-14 03:30:00 EDT\n1636263000 EDT\n1617460200 NZST\n1625155200 EDT\nWed, 31 Dec 1969 19:00:00 -0500\n1969-12-31T19:00:00-05:00\nest 19 - 500|-500|     -000500|%Z\n',
    stderr: '',
    exitCode: 0,
  },
  // Listings in the zone (ls, stat, tar tv, cpio -tv), touch -d read in local time, uptime's clock.
  {
    script:
      "cd /tmp; touch -d '2020-01-01 00:00:00' f; TZ=EST5 ls -l --full-time f | cut -c40-; TZ=EST5 ls -l f | cut -c40-; TZ=EST5 stat -c '%y' f; tar cf a.tar f; TZ=EST5 tar tvf a.tar; echo f | cpio -o -H newc 2>/dev/null > a.cpio; TZ=EST5 cpio -tv < a.cpio 2>/dev/null | cut -c30-; TZ=EST5 touch -d '2021-06-01 10:00:00' f; stat -c %y f; u=$(TZ=EST5 uptime | cut -c2-3); h=$(uptime | cut -c2-3); echo $(( (1${h} - 1${u} + 24) % 24 ))",
    stdout:
      '   0 2019-12-31 19:00:00 -0500 f\n   0 Dec 31  2019 f\n2019-12-31 19:00:00.000000000 -0500\n-rw-r--r-- root/root         0 2019-12-31 19:00:00 f\n-12-31 19:00:00 f\n2021-06-01 15:00:00.000000000 +0000\n5\n',
    stderr: '',
    exitCode: 0,
  },
  // grep's word edges `\<` and `\>` (glibc's, through regcomp), in basic and extended expressions, with -o, -c and -w.
  {
    script:
      "printf 'foo bar\\nfoobar\\nbarfoo x\\n' | grep '\\<foo\\>'; printf 'foo bar\\nfoobar\\nbarfoo x\\n' | grep -o '\\<foo'; printf 'foo bar\\nfoobar\\n' | grep 'bar\\>'; printf 'foo bar\\nbarfoo x\\n' | grep -E '\\<(foo|bar)\\>'; printf 'a.b\\n-x-\\n' | grep -c '\\<x\\>'; printf 'foo bar\\n' | grep -w -o '\\<bar'",
    stdout: 'foo bar\nfoo\nfoo\nfoo bar\nfoobar\nfoo bar\n1\nbar\n',
    stderr: '',
    exitCode: 0,
  },
  // grep on bytes (the C locale): `.` is a byte, a bracket holds the bytes of a character of UTF-8, `-i` folds ASCII only.
  {
    script:
      "printf 'é\\n' | grep -c '^.$'; printf 'é\\n' | grep -c '^..$'; printf 'é\\n' | grep -o . | od -An -tx1; printf 'é\\n' | grep -c '^[é]$'; printf 'é\\n' | grep -c '^[é][é]$'",
    stdout: '0\n1\n c3 0a a9 0a\n0\n1\n',
    stderr: '',
    exitCode: 0,
  },
  // grep on bytes in the same way.
  {
    script:
      "printf 'héllo\\nhello\\n' | grep 'h.llo'; printf 'héllo\\n' | grep -o 'h.' | od -An -tx1; printf 'é\\nÉ\\n' | grep -i 'é'; printf 'Ça\\n' | grep -E '^.{3}$'",
    stdout: 'hello\n 68 c3 0a\né\nÇa\n',
    stderr: '',
    exitCode: 0,
  },
  // grep on bytes read from files and from -f's patterns; a file name as it is.
  {
    script:
      "cd /tmp; printf 'héllo wörld\\nabc\\n' > rt-g; grep -c . rt-g; grep -o 'w.' rt-g | od -An -tx1; printf 'é\\n' > rt-p; printf 'xé\\nb\\n' | grep -f rt-p; grep -l 'h.llo' rt-g; grep -n 'ö' rt-g /dev/null; rm rt-g rt-p",
    stdout: '2\n 77 c3 0a\nxé\nrt-g:1:héllo wörld\n',
    stderr: '',
    exitCode: 0,
  },
  // grep passes bytes that are not UTF-8 on as they are, and `.` matches one.
  {
    script: "printf '\\377abc\\n' | grep abc | od -An -tx1; printf 'x\\377\\n' | grep -c 'x.$'",
    stdout: ' ff 61 62 63 0a\n1\n',
    stderr: '',
    exitCode: 0,
  },
  // grep's -i folds ASCII only, and its classes and ranges are the C locale's (bytes past ASCII in none of them but a range of bytes).
  {
    script:
      "printf '\\343\\251\\n' | grep -ci \"$(printf '\\303\\251')\"; printf 'aé\\n' | grep -c '[[:alpha:]][[:alpha:]]'; printf 'aéb\\n' | grep -o '[à-ü]' | od -An -tx1",
    stdout: '0\n0\n c3 0a a9 0a\n',
    stderr: '',
    exitCode: 0,
  },
  // grep -w as busybox checks a word: no letter, digit or underscore just before or after the match (a pattern that starts or ends with another character, a byte past ASCII), the next match tried when one is not.
  {
    script:
      "echo 'é' | grep -w -c 'é'; echo 'a-b' | grep -w -c -- '-b'; echo 'x -b y' | grep -wo -- '-b'; echo 'foo. bar' | grep -wo 'foo.'; echo 'foobar foo' | grep -wo 'foo'; echo 'afoo foo_ foo' | grep -w -c 'foo'",
    stdout: '1\n0\n-b\nfoo.\nfoo\n1\n',
    stderr: '',
    exitCode: 0,
  },
  // grep -w with -F, an empty pattern and alternatives.
  {
    script:
      "echo 'a.b' | grep -wF -c '.'; echo 'a . b' | grep -wF -o '.'; echo 'foofoo foo' | grep -wFo foo; echo 'ab' | grep -w -c ''; echo 'foo-bar' | grep -wo 'foo\\|bar'",
    stdout: '0\n.\nfoo\n0\nfoo\nbar\n',
    stderr: '',
    exitCode: 0,
  },
  // grep -o prints no empty match, and an empty match does not step over the next one.
  {
    script:
      "printf 'ab\\n' | grep -o '[^a]*'; echo rc=$?; printf 'ba\\n' | grep -o 'b*'; echo test | grep -o ''; echo rc=$?; printf 'aXbX\\n' | grep -o 'X*'",
    stdout: 'b\nrc=0\nb\nrc=0\nX\nX\n',
    stderr: '',
    exitCode: 0,
  },
  // grep -o with context lines, a valued option clustered after a flag (-oB1), and a pattern or file after -- or -e that starts with -.
  {
    script:
      "printf 'a\\nxb\\nc\\n' | grep -o -C1 x; printf 'a\\nxb\\nc\\n' | grep -oB1 x; printf 'a\\n-x\\n' | grep -e -x; printf -- '-x\\n' > /tmp/rt-m; grep -n -- -x /tmp/rt-m; rm /tmp/rt-m",
    stdout: 'a\nx\nc\na\nx\n-x\n1:-x\n',
    stderr: '',
    exitCode: 0,
  },
  {
    script: 'echo "ab" | grep -P \'a\' 2>&1; echo rc=$?; echo "ab" | grep -a b 2>&1 | head -1; echo "ab" | grep -ic \'A\\+\'',
    stdout:
      "grep: invalid option -- 'P'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: grep [-HhnlLoqvsrRiwFEz] [-m N] [-A|B|C N] { PATTERN | -e PATTERN... | -f FILE... } [FILE]...\n\nSearch for PATTERN in FILEs (or stdin)\n\n\t-H\tAdd 'filename:' prefix\n\t-h\tDo not add 'filename:' prefix\n\t-n\tAdd 'line_no:' prefix\n\t-l\tShow only names of files that match\n\t-L\tShow only names of files that don't match\n\t-c\tShow only count of matching lines\n\t-o\tShow only the matching part of line\n\t-q\tQuiet. Return 0 if PATTERN is found, 1 otherwise\n\t-v\tSelect non-matching lines\n\t-s\tSuppress open and read errors\n\t-r\tRecurse\n\t-R\tRecurse and dereference symlinks\n\t-i\tIgnore case\n\t-w\tMatch whole words only\n\t-x\tMatch whole lines only\n\t-F\tPATTERN is a literal (not regexp)\n\t-E\tPATTERN is an extended regexp\n\t-z\tNUL terminated input\n\t-m N\tMatch up to N times per file\n\t-A N\tPrint N lines of trailing context\n\t-B N\tPrint N lines of leading context\n\t-C N\tSame as '-A N -B N'\n\t-e PTRN\tPattern to match\n\t-f FILE\tRead pattern from file\nrc=2\nab\n1\n",
    stderr: '',
    exitCode: 0,
  },
  // grep says `bad regex 'X'` of a pattern glibc refuses, as busybox does (not just-bash's words).
  {
    script:
      "echo ab | grep 'a\\{1'; echo $?; echo ab | grep -E 'a('; echo $?; echo ab | grep '[[:foo:]]'; echo $?; echo ab | grep -E 'a{2,1}'; echo $?",
    stdout: '2\n2\n2\n2\n',
    stderr: "grep: bad regex 'a\\{1'\ngrep: bad regex 'a('\ngrep: bad regex '[[:foo:]]'\ngrep: bad regex 'a{2,1}'\n",
    exitCode: 0,
  },
  // grep's syntax is glibc's RE_SYNTAX_EGREP and RE_SYNTAX_GREP, not regcomp's: an ERE operator with nothing to repeat is skipped, a malformed ERE interval is its characters, a BRE's leading `\{` is a `{`, and a BRE may repeat a repetition.
  {
    script:
      "printf 'ab\\n*a\\nb\\n' | grep -E 'b|*a'; printf 'a{1\\n' | grep -E 'a{1'; printf '1}a\\n' | grep -o -E '{1}'; printf '{1}a\\n' | grep -o '\\{1\\}'; printf 'aa\\n' | grep -o 'a**'; printf 'ab\\n' | grep -E 'a\\b*b'; echo $?",
    stdout: 'ab\n*a\nb\na{1\n1}\n{1}\naa\n1\n',
    stderr: '',
    exitCode: 0,
  },
  // After an operator grep's ERE skips, glibc reads `)` as a character: `(*)` leaves its group open, and is refused; `*)` matches a `)`.
  {
    script:
      "for p in '(*)' '(a|*)' '(|+)' 'x(?)y' '({)' '(**)' '*)' '(*|a)' '(*a)'; do printf 'a\\n)\\nxy\\n' | grep -E \"$p\"; echo \"$p $?\"; done 2>&1",
    stdout:
      "grep: bad regex '(*)'\n(*) 2\ngrep: bad regex '(a|*)'\n(a|*) 2\ngrep: bad regex '(|+)'\n(|+) 2\ngrep: bad regex 'x(?)y'\nx(?)y 2\ngrep: bad regex '({)'\n({) 2\ngrep: bad regex '(**)'\n(**) 2\n)\n*) 0\na\n)\nxy\n(*|a) 0\na\n(*a) 0\n",
    stderr: '',
    exitCode: 0,
  },
  // sed compiles with regcomp: a BRE may not repeat a repetition with `*` or `\{`, nor an ERE an anchor.
  {
    script:
      "echo aa | sed 's/a**/X/'; echo aa | sed 's/a*\\+/X/'; echo aa | sed 's/a\\+*/X/'; echo a | sed -E 's/a$*/X/'; echo '{1}' | sed 's/\\{1\\}/X/'",
    stdout: 'X\n',
    stderr:
      "sed: bad regex 'a**': Invalid preceding regular expression\nsed: bad regex 'a\\+*': Invalid preceding regular expression\nsed: bad regex 'a$*': Invalid preceding regular expression\nsed: bad regex '\\{1\\}': Invalid preceding regular expression\n",
    exitCode: 1,
  },
  // grep compiles each pattern when a line first reaches it: nothing read, nothing refused; a line an earlier pattern takes never reaches a bad one (the last -e is tried first).
  {
    script:
      "grep -E 'a(' /dev/null; echo $?; printf 'x\\ny\\n' | grep -E -e 'a(' -e x; echo $?; printf 'x\\ny\\n' | grep -E -q -e 'a(' -e x; echo $?; printf 'x\\ny\\n' | grep -E -c -e x -e 'a('; echo $?",
    stdout: '1\nx\n2\n0\n2\n',
    stderr: "grep: bad regex 'a('\ngrep: bad regex 'a('\n",
    exitCode: 0,
  },
  // A bad pattern met in the second file: the first's lines printed, no more files; a file -l has named is not read on; -s does not hide it.
  {
    script:
      "printf 'x\\ny\\n' > /tmp/rt-g1; printf 'x\\n' > /tmp/rt-g2; grep -E -e 'a(' -e x /tmp/rt-g2 /tmp/rt-g1 /tmp/rt-g2; echo $?; grep -E -l -e 'a(' -e x /tmp/rt-g1 /tmp/rt-g1; echo $?; grep -s -e '\\(' -e x /tmp/rt-g1 /tmp/rt-nope; echo $?",
    stdout: '/tmp/rt-g2:x\n/tmp/rt-g1:x\n2\n/tmp/rt-g1\n/tmp/rt-g1\n0\n/tmp/rt-g1:x\n2\n',
    stderr: "grep: bad regex 'a('\ngrep: bad regex '\\('\n",
    exitCode: 0,
  },
  // Each pattern's groups are its own; -f of an empty file is busybox's empty pattern with the search inverted.
  {
    script:
      "printf 'abb\\nxaa\\n' | grep -E -e 'x(a)\\1' -e '(a)b\\1'; printf 'a\\nb\\n' | grep -v -f /dev/null; printf 'a\\nb\\n' | grep -c -f /dev/null; echo $?",
    stdout: 'xaa\na\nb\n0\n1\n',
    stderr: '',
    exitCode: 0,
  },
  // Context as busybox prints it: a line that matches is a match, not another's context; -o's empty matches print nothing; -m stops after the context of its last match.
  {
    script:
      "printf 'x\\nx\\ny\\n' | grep -n -A1 x; printf 'ab\\nxb\\nc\\nd\\nxe\\n' | grep -n -o -A1 'x*'; printf 'x\\na\\nx\\nb\\nc\\nx\\n' | grep -m2 -A1 x",
    stdout: '1:x\n2:x\n3-y\n2:x\n--\n5:x\nx\na\nx\nb\n',
    stderr: '',
    exitCode: 0,
  },
  // The `--` between groups of lines counts across files: it is left out only when a file's first line printed follows the last one's number.
  {
    script:
      "printf 'x\\na\\nb\\n' > /tmp/rt-c1; printf 'b\\nc\\nd\\nx\\n' > /tmp/rt-c2; grep -A1 x /tmp/rt-c1 /tmp/rt-c2; grep -B1 x /tmp/rt-c2 /tmp/rt-c1; grep -s -h -A1 x /tmp/rt-c1 /tmp/rt-nope /tmp/rt-c1",
    stdout: '/tmp/rt-c1:x\n/tmp/rt-c1-a\n--\n/tmp/rt-c2:x\n/tmp/rt-c2-d\n/tmp/rt-c2:x\n--\n/tmp/rt-c1:x\nx\na\n--\nx\na\n',
    stderr: '',
    exitCode: 2,
  },
  // grep -o prints, on a line, the matches of the first pattern in busybox's order (the last -e first) that takes it; under -F, that pattern itself, once.
  {
    script:
      "printf 'ab\\nxcd\\n' | grep -n -o -A1 -E -e 'a|c' -e 'd'; printf 'abcabc\\n' | grep -o -e b -e c -e a; printf 'aa\\n' | grep -o -F a; printf 'A\\n' | grep -oiF a; printf 'xay\\n' | grep -o -F -e y -e a; printf 'xaxa\\na a\\n' | grep -o -F -w a",
    stdout: '1:a\n2:d\na\na\na\na\na\na\n',
    stderr: '',
    exitCode: 0,
  },
  // awk runs in the C locale: length, substr and index count bytes, printf's widths and %c are bytes (a character of UTF-8 can be cut).
  {
    script:
      'echo h\u00e9llo | awk \'{print length($0), substr($0,2,2), index($0,"l")}\' | od -An -c; awk \'BEGIN{printf "%5s|%.2s|%c|%c\\n", "\u00e9", "h\u00e9llo", 233, "\u00e9"}\' | od -An -tx1',
    stdout: '   6     303 251       4  \\n\n 20 20 20 c3 a9 7c 68 c3 7c e9 7c c3 0a\n',
    stderr: '',
    exitCode: 0,
  },
  // awk's `.` and split's empty separator take a byte, no class takes one past ASCII; -v and ENVIRON values are bytes too.
  {
    script:
      'echo \'\u00e9\' | awk \'/^..$/{print "two"} /[[:alpha:]]/{print "alpha"} {n=split($0,a,""); print n}\'; awk -v x=\u00e9 \'BEGIN{print length(x); print length("\u00e9")}\'; x=\u00e9 awk \'BEGIN{print length(ENVIRON["x"])}\'',
    stdout: 'two\n2\n2\n2\n2\n',
    stderr: '',
    exitCode: 0,
  },
  // awk passes bytes that are not UTF-8 through as they are; a separator past ASCII and gsub's `.` work on bytes.
  {
    script:
      "printf '\\377\\n' | awk '{print length($0); print}' | od -An -tx1; echo 'a\u00e9b' | awk -F '\u00e9' '{print $2, NF}'; echo 'h\u00e9llo' | awk '{gsub(/./,\"x\"); print}'",
    stdout: ' 31 0a ff 0a\nb 2\nxxxxxx\n',
    stderr: '',
    exitCode: 0,
  },
  // awk's files are bytes: a name past ASCII, getline from a file, print > and >> (what it writes is those bytes).
  {
    script:
      'printf \'\u00e9\\n\' > /tmp/rt-\u00e9; awk \'{print FILENAME, length($0)}\' /tmp/rt-\u00e9; awk \'BEGIN{while ((getline l < "/tmp/rt-\u00e9") > 0) print length(l)}\'; awk \'BEGIN{print "\u00e9\\377" > "/tmp/rt-o"; close("/tmp/rt-o"); print "x" >> "/tmp/rt-o"}\'; od -An -tx1 /tmp/rt-o',
    stdout: '/tmp/rt-\u00e9 2\n2\n c3 a9 ff 0a 78 0a\n',
    stderr: '',
    exitCode: 0,
  },
  // awk's commands: what getline reads from one is bytes, and what it prints into one goes as its bytes.
  {
    script:
      'awk \'BEGIN{"echo h\u00e9llo" | getline x; print length(x), x; system("printf \\"\\\\377\\\\n\\""); print "\u00e9" | "od -An -tx1"}\' | od -An -c',
    stdout: '   6       h 303 251   l   l   o  \\n 377  \\n       c   3       a\n   9       0   a  \\n\n',
    stderr: '',
    exitCode: 0,
  },
  // Fields past ASCII count bytes, and so do printf's %-4s, index and match.
  {
    script:
      'printf \'a \u00e9 b\\n\' | awk \'{print $2, length($2); $2="X"; print; print NF}\'; echo \'\u00e9\' | awk \'{printf "%-4s|%4s|\\n", $0, $0}\'; awk \'BEGIN{print index("h\u00e9llo","llo"), match("h\u00e9llo", /l+/), RSTART, RLENGTH}\'',
    stdout: '\u00e9 2\na X b\n3\n\u00e9  |  \u00e9|\n4 4 4 2\n',
    stderr: '',
    exitCode: 0,
  },
  // busybox's awk flushes its stdout after each print: under 2>&1 its stderr and a command's come where they are written.
  {
    script:
      'echo a | awk \'{print > "/dev/stderr"; print "b"; printf "c\\n" > "/dev/stderr"; print "d"}\' 2>&1; awk \'BEGIN{print "x"; system("echo y >&2"); print "z"; print "e" | "cat 1>&2"; close("cat 1>&2"); print "w"}\' 2>&1',
    stdout: 'a\nb\nc\nd\nx\ny\nz\ne\nw\n',
    stderr: '',
    exitCode: 0,
  },
  // What a closed command wrote comes after all awk printed before the close; an open one's at awk's end.
  // Nothing is printed after the open one's line: busybox flushes it to cat at once, and cat's write
  // races awk's next ones (a CI run on Incus failed on the case that printed after it).
  {
    script:
      'awk \'BEGIN{print "x"; system(""); print "z"; print "e" | "cat"; close("cat"); print "w"; print "o1"; print "e1" > "/dev/stderr"; print "e2" > "/dev/stderr"; print "o2"; print "p" | "cat"}\' 2>&1',
    stdout: 'x\nz\ne\nw\no1\ne1\ne2\no2\np\n',
    stderr: '',
    exitCode: 0,
  },
  // awk's division by zero ends it, as busybox's: `awk: cmd. line:N: Division by zero`, status 1, what it printed before kept.
  {
    script:
      "awk 'BEGIN{print \"a\"; print 1/0; print \"b\"}'; echo $?; awk 'BEGIN{x=5; x%=0; print x}'; echo $?; awk 'BEGIN{x=5; x/=0; print x}'; echo $?; echo 1 | awk '{print $1/0}'; echo $?; awk 'BEGIN{print 1/\"a\"}'; awk 'BEGIN{print 1 % (2-2)}'; awk 'BEGIN{print 7%0.5, 1/0.5}'",
    stdout: 'a\n1\n1\n1\n1\n0 2\n',
    stderr:
      'awk: cmd. line:1: Division by zero\nawk: cmd. line:1: Division by zero\nawk: cmd. line:1: Division by zero\nawk: cmd. line:1: Division by zero\nawk: cmd. line:1: Division by zero\nawk: cmd. line:1: Division by zero\n',
    exitCode: 0,
  },
  // The line busybox names is the one where the divisor's last token is (a newline after an operator, or a backslash's, continues the expression).
  {
    script:
      "awk 'BEGIN{\nx=1\ny = x /\n0\nprint y}'; awk 'BEGIN {\n  a = 0\n  print 3 / a\n}'; awk 'BEGIN {\n  a = 0\n  print 3 /\n  a\n}'; awk '\nBEGIN { a = 0 }\n{ print $1 / a }\n' <<X\n1\nX\nawk 'BEGIN { a = 0; b = 3 / \\\n  a }'",
    stdout: '',
    stderr:
      'awk: cmd. line:4: Division by zero\nawk: cmd. line:3: Division by zero\nawk: cmd. line:4: Division by zero\nawk: cmd. line:3: Division by zero\nawk: cmd. line:2: Division by zero\n',
    exitCode: 1,
  },
  // A program from a file names the file (`awk: F:N:`); a function's line is its own.
  {
    script:
      "printf 'BEGIN{\\nprint 1/0\\n}\\n' > /tmp/p.awk; awk -f /tmp/p.awk; echo $?; awk -f /tmp/p.awk 2>&1; rm /tmp/p.awk; awk 'function f(d) {\n  return 1/d\n}\nBEGIN { print \"x\"; print f(0) }' 2>&1",
    stdout: '1\nawk: /tmp/p.awk:2: Division by zero\nx\nawk: cmd. line:2: Division by zero\n',
    stderr: 'awk: /tmp/p.awk:2: Division by zero\n',
    exitCode: 1,
  },
  // RS "" reads paragraphs as busybox does: blank lines end a record, leading ones skipped, the last keeps its newline; a newline also separates fields.
  {
    script:
      'printf \'a b\\n\\nc d\\ne\\n\\n\\nf\\n\' | awk \'BEGIN{RS=""}{print NR": "$0" NF="NF}\'; printf \'\\n\\na\\n\\n\\n\' | awk \'BEGIN{RS=""}{print NR": ["$0"]"}\'; printf \'a:b\\nc:d\\n\\ne\\n\' | awk -F: \'BEGIN{RS=""}{print NF; for(i=1;i<=NF;i++) printf "[%s]", $i; print ""}\'',
    stdout: '1: a b NF=2\n2: c d\ne NF=3\n3: f\n NF=1\n1: [a]\n4\n[a][b][c][d]\n2\n[e][]\n',
    stderr: '',
    exitCode: 0,
  },
  // RS of one character ends records at it (the last keeps what follows, a newline too); a longer RS is a regular expression.
  {
    script:
      "printf 'a,b;c\\n' | awk 'BEGIN{RS=\";\"}{print NR, $0}'; printf 'x;y;' | awk -v RS=';' '{print NR, $0}'; printf 'a12b345c\\n' | awk 'BEGIN{RS=\"[0-9]+\"}{print NR\": \"$0}'; printf 'a;;b' | awk 'BEGIN{RS=\";\"}{print NR\"[\"$0\"]\"}'",
    stdout: '1 a,b\n2 c\n\n1 x\n2 y\n1: a\n2: b\n3: c\n\n1[a]\n2[]\n3[b]\n',
    stderr: '',
    exitCode: 0,
  },
  // FS "" makes each byte a field.
  {
    script: "echo abc | awk -F '' '{print $2, NF}'; echo abc | awk 'BEGIN{FS=\"\"}{$1=$1; print; print NF}'",
    stdout: 'b 3\na b c\n3\n',
    stderr: '',
    exitCode: 0,
  },
  // `for (k in a)` walks busybox's hash: its 61 buckets in order, a bucket's newest name first.
  {
    script:
      'awk \'BEGIN { x["a"]=1; x["b"]=2; x["c"]=3; x["ab"]; x["zz"]; x["10"]; for (k in x) s = s k " "; print s }\'; awk \'BEGIN{for(i=0;i<20;i++) a[i]=i; for(k in a) printf "%s ", k; print ""}\'',
    stdout: 'zz 10 a b c ab \n10 11 12 13 14 15 16 17 18 19 0 1 2 3 4 5 6 7 8 9 \n',
    stderr: '',
    exitCode: 0,
  },
  // Past eight names a bucket the table grows (251, 1021 … buckets); `delete a` keeps its size.
  {
    script:
      'awk \'BEGIN{for(i=0;i<600;i++) a[i]; n=0; for(k in a) { if (n++ < 30) printf "%s ", k }; print ""; delete a; a["x"]; a["y"]; a[1]; for (k in a) printf "%s ", k; print ""}\'',
    stdout: '71 32 420 72 33 460 421 73 34 461 422 74 35 423 75 36 462 424 76 37 463 425 77 38 464 426 78 39 465 427 \n1 x y \n',
    stderr: '',
    exitCode: 0,
  },
  // The order of a word count's and of split's arrays, and of a name deleted and set again.
  {
    script:
      'printf \'the cat\\nthe dog\\na cat\\n\' | awk \'{for(i=1;i<=NF;i++) c[$i]++} END{for(w in c) print w, c[w]}\'; awk \'BEGIN{n=split("z y x w v u t s r q p o", a); for (k in a) printf "%s=%s ", k, a[k]; print ""; delete a[3]; a[3]="n"; for (k in a) printf "%s ", k; print ""}\'',
    stdout: 'cat 2\na 1\nthe 2\ndog 1\n10=q 11=p 12=o 1=z 2=y 3=x 4=w 5=v 6=u 7=t 8=s 9=r \n10 11 12 1 2 3 4 5 6 7 8 9 \n',
    stderr: '',
    exitCode: 0,
  },
  // Names hash by their bytes; ENVIRON and ARGV walk the same way.
  {
    script:
      'awk \'BEGIN{a["\u00e9"]; a["\u00fc"]; a["a"]; a["\\001"]; a["SUBSEP"]; a[1,2]; for (k in a) printf "%s|", k; print ""}\' | od -c | head -3; awk \'BEGIN { for (k in ENVIRON) n++; print (n > 0) }\'; awk \'BEGIN { for (k in ARGV) printf "%s=%s ", k, ARGV[k]; print "" }\' p q r',
    stdout:
      '0000000 001   | 303 251   | 303 274   |   a   |   S   U   B   S   E   P\n0000020   |   1 034   2   |  \\n\n0000026\n1\n0=awk 1=p 2=q 3=r \n',
    stderr: '',
    exitCode: 0,
  },
  // An array filled in a function and emptied while walked, then filled again.
  {
    script:
      'awk \'function fill(arr, n,  i) { for (i = n; i > 0; i--) arr["k" i] = i } BEGIN { fill(A, 15); for (k in A) { printf "%s ", k; delete A[k] } ; print length(A); fill(A, 3); for (k in A) printf "%s ", k; print "" }\'',
    stdout: 'k1 k2 k3 k4 k5 k6 k7 k10 k8 k11 k9 k12 k13 k14 k15 0\nk1 k2 k3 \n',
    stderr: '',
    exitCode: 0,
  },
  // An array deleted after it grew, then filled; split's array.
  {
    script:
      'awk \'BEGIN { for (i = 0; i < 500; i++) a[i]; delete a; for (i = 0; i < 12; i++) a[i]; for (k in a) printf "%s ", k; print ""; n = split("a b c d e f g h i j k l m", b); for (k in b) printf "%s ", k; print "" }\'',
    stdout: '0 1 2 3 4 5 6 7 8 9 10 11 \n10 11 12 13 1 2 3 4 5 6 7 8 9 \n',
    stderr: '',
    exitCode: 0,
  },
  // Sums by key, a first-seen filter, and names added while the array is walked (the walk is of the names it had).
  {
    script:
      "printf 'k1 3\\nk2 5\\nk1 4\\nx 1\\n' | awk '{ s[$1] += $2 } END { for (k in s) print k, s[k] }'; printf 'b\\na\\nc\\nb\\n' | awk '!seen[$0]++'; awk 'BEGIN { a[\"x\"] = 1; for (k in a) { a[\"new\" k] = 1 }; for (k in a) printf \"%s \", k; print \"\" }'",
    stdout: 'k1 7\nk2 5\nx 1\nb\na\nc\nnewx x \n',
    stderr: '',
    exitCode: 0,
  },
  // awk reads its operands from ARGV up to ARGC as it goes (a program may change them); stdin's FILENAME is `-` ("" in BEGIN).
  {
    script:
      'echo a | awk \'{print "[" FILENAME "]"}\'; awk \'BEGIN{print "[" FILENAME "]"}\'; echo a | awk \'END{print "[" FILENAME "]", NR}\'; echo b | awk \'BEGIN { ARGV[1] = "-"; ARGC = 2 } { print FILENAME, $0 }\'; echo c > /tmp/fa; awk \'BEGIN { ARGV[2] = "/tmp/fa"; ARGC = 3 } { print FILENAME, $0 }\' /dev/null; rm /tmp/fa',
    stdout: '[-]\n[]\n[-] 1\n- b\n/tmp/fa c\n',
    stderr: '',
    exitCode: 0,
  },
  // getline before the main loop reads the first input's first record (the main loop goes on after it); after it, none (-1).
  {
    script:
      'printf \'x\\ny\\nz\\n\' | awk \'BEGIN { r = getline; print "first:", r, $0, NR, FNR, FILENAME } { print "main:", $0, NR } END { r = getline; print "end:", r, $0, NR }\'; awk \'BEGIN { r = getline line; print r, "[" line "]", NR }\' < /dev/null; echo q > /tmp/fq; awk \'BEGIN { getline; print "b:", $0, FILENAME } { print "m:", $0 }\' /tmp/fq /tmp/fq; printf \'1\\n2\\n3\\n\' | awk \'NR == 1 { while ((getline l) > 0) s = s l; print "s=" s, NR } END { print NR }\'; rm /tmp/fq',
    stdout: 'first: 1 x 1 1 -\nmain: y 2\nmain: z 3\nend: -1 z 3\n0 [] 0\nb: q /tmp/fq\nm: q\ns=23 3\n3\n',
    stderr: '',
    exitCode: 0,
  },
  // Plain getline reads the current input only: 0 at its end, the next file is the main loop's.
  {
    script:
      "printf 'a\\nb\\n' > /tmp/f1; printf 'c\\nd\\n' > /tmp/f2; awk 'FNR == 2 { r = getline; print \"after\", FILENAME, r, $0, NR, FNR }' /tmp/f1 /tmp/f2; awk 'BEGIN { while ((r = getline) > 0) n++; print n, r, NR, FILENAME }' /tmp/f1 /tmp/f2; rm /tmp/f1 /tmp/f2",
    stdout: 'after /tmp/f1 0 b 2 2\nafter /tmp/f2 0 d 4 2\n2 0 2 /tmp/f1\n',
    stderr: '',
    exitCode: 0,
  },
  // printf reads a spec up to its first letter, as busybox's awk_printf: `%ld` and `%hf` are invalid formats, `*` is refused, a spec with no letter prints as it is; index(s, "") is 0.
  {
    script:
      'awk \'BEGIN{printf "%ld|\\n", 5}\' 2>&1; echo $?; awk \'BEGIN{printf "%5.2hf|\\n", 5}\' 2>&1; echo $?; awk \'BEGIN{x = sprintf("%*d", 3, 4); print "no"}\' 2>&1; echo $?; awk \'BEGIN{printf "a%"}\'; echo; awk \'BEGIN{printf "%-%|\\n"}\'; awk \'BEGIN{printf "%i|%F|%c|\\n", 3.9, 2, ""}\' | od -c | head -2; awk \'BEGIN{print index("abc",""), index("","")}\'',
    stdout:
      'awk: cmd. line:1: Invalid format specifier\n1\nawk: cmd. line:1: Invalid format specifier\n1\nawk: cmd. line:1: %*x formats are not supported\n1\na%\n%-%|\n0000000   3   |   2   .   0   0   0   0   0   0   |  \\0   |  \\n\n0000016\n0 0\n',
    stderr: '',
    exitCode: 0,
  },
  // A missing argument prints as empty; an unknown conversion ends awk; a lone `%` prints.
  {
    script:
      'awk \'BEGIN { printf "%s %s %s\\n", "only" }\' 2>&1; echo $?; awk \'BEGIN { printf "%d %z\\n", 1 }\' 2>&1; echo $?; awk \'BEGIN { printf "%" }\' 2>&1; echo $?',
    stdout: 'only  \n0\nawk: cmd. line:1: Invalid format specifier\n1\n%0\n',
    stderr: '',
    exitCode: 0,
  },
  // An exponent may carry its sign (`2^-1` parses, and ends awk: no math library); the left side of `+=` is read before the right side runs.
  {
    script:
      'awk \'BEGIN { x = 1; x += x++; print x; y = 5; print y++ + ++y, y; print 2^-1 }\' 2>&1; awk \'BEGIN { print 1 - - 1, 1 - -1, - - 2, !0, !"", !"a", !"0" }\'',
    stdout: '2\n12 7\nawk: cmd. line:1: Math support is not compiled in\n2 2 2 1 1 0 0\n',
    stderr: '',
    exitCode: 0,
  },
  // `print (a, b)` prints its list, as `print a, b`.
  {
    script:
      'awk \'BEGIN { print substr("hello", 2) > "/dev/stdout"; printf("%s-%s\\n", "a", "b"); print("p", "q") ; print ("x")("y"); print ("a", "b") > "/dev/stdout"; a["x", "y"] = 1; print (("x", "y") in a), ("x", "z") in a }\'',
    stdout: 'ello\na-b\np q\nxy\na b\n1 0\n',
    stderr: '',
    exitCode: 0,
  },
  // An assignment's target (its subscript, its field number) is evaluated once, before the value.
  {
    script:
      'awk \'BEGIN { i = 1; a[i++] = i; for (k in a) print k, a[k]; j = 1; b[j++] += 5; print j, b[1]; x = 1; x += x++; print x; $0 = "3 4"; i = 1; $(i++) += 10; print $0, i }\'',
    stdout: '1 2\n2 5\n2\n13 4 2\n',
    stderr: '',
    exitCode: 0,
  },
  // printf's `%s` of a number is its string (`%.6g`); print writes each argument as it goes, so what it wrote before a fatal error stays.
  {
    script:
      'awk \'BEGIN { printf "%s|%s|%s|%5s|\\n", 0.1 + 0.2, 1e6, 100, 2.5; print 1e300 * 1e10, -1e300 * 1e10, "x", 2 ^ 2, "never" }\' 2>&1; echo $?; awk \'BEGIN { OFS = "-"; print "a", 1 / 0 }\' 2>&1',
    stdout: '0.3|1000000|100|  2.5|\ninf -inf x awk: cmd. line:1: Math support is not compiled in\n1\na-awk: cmd. line:1: Division by zero\n',
    stderr: '',
    exitCode: 1,
  },
  // `getline < F` and `cmd | getline` read records by RS too.
  {
    script:
      'printf \'l1\\nl2\\n\' > /tmp/gg; awk \'BEGIN { RS = "l"; while ((getline x < "/tmp/gg") > 0) printf "[%s]", x; print ""; RS = ""; while (("printf \\"a\\\\n\\\\nb\\\\n\\"" | getline y) > 0) printf "<%s>", y; print "" }\'; rm /tmp/gg',
    stdout: '[][1\n][2\n]\n<a><b\n>\n',
    stderr: '',
    exitCode: 0,
  },
  // close() of a command awk read from is its pclose status (the exit status times 256), as of one it wrote to; of nothing open, 0.
  {
    script:
      'awk \'BEGIN { r = close("nope"); print r; "exit 3" | getline; print close("exit 3"); "echo a; exit 2" | getline x; print x, close("echo a; exit 2"); "true" | getline; print close("true"); print system("exit 4") }\'',
    stdout: '0\n768\na 512\n0\n4\n',
    stderr: '',
    exitCode: 0,
  },
  // `%c` takes a width, as the C printf's (`%5c`, `%-3c`), a NUL too.
  {
    script:
      'awk \'BEGIN { x = sprintf("%c", 65); y = sprintf("%5c", "z"); printf "%-3c|%3c|%c|%2c|\\n", "q", 66, "", 0; print x y "|" }\' | od -c | head -3',
    stdout: '0000000   q           |           B   |  \\0   |      \\0   |  \\n   A    \n0000020               z   |  \\n\n0000026\n',
    stderr: '',
    exitCode: 0,
  },
  // An assignment to NF rebuilds $0 with OFS, `NF = NF` too.
  {
    script:
      'awk \'BEGIN { OFS = ":"; $0 = "a b c"; NF = NF; print; $5 = "e"; print; print NF; NF = 2; print }\'; echo "x  y" | awk \'{ $2 = $2; print }\'',
    stdout: 'a:b:c\na:b:c::e\n5\na:b\nx y\n',
    stderr: '',
    exitCode: 0,
  },
  // What a command awk reads writes to stderr goes to awk's, where awk's output then stood.
  {
    script: 'awk \'BEGIN { print "a"; "ls /nope" | getline x; print "b [" x "]"; "echo err >&2; echo out" | getline y; print "c", y }\' 2>&1',
    stdout: 'a\nls: /nope: No such file or directory\nb []\nerr\nc out\n',
    stderr: '',
    exitCode: 0,
  },
  // busybox's other fatal errors: a call to no function, a negative field, a builtin given too few or too many arguments.
  {
    script:
      "awk 'BEGIN { print \"a\"; f(1) }' 2>&1; echo $?; echo x | awk '{ print $(-1) }' 2>&1; echo $?; awk 'BEGIN { print substr(\"abc\") }' 2>&1; echo $?; awk 'BEGIN { print length(1, 2) }' 2>&1; echo $?; awk 'BEGIN { print rand(1) }' 2>&1; echo $?; awk 'BEGIN { print sqrt(1, 2) }' 2>&1; echo $?",
    stdout:
      'a\nawk: cmd. line:1: Call to undefined function\n1\nawk: cmd. line:1: Access to negative field\n1\nawk: cmd. line:1: Too few arguments\n1\nawk: cmd. line:1: Too many arguments\n1\nawk: cmd. line:1: Too many arguments\n1\nawk: cmd. line:1: Too many arguments\n1\n',
    stderr: '',
    exitCode: 0,
  },
  // busybox's bit functions, on unsigned longs: and, or, xor, lshift, rshift, compl.
  {
    script:
      "awk 'BEGIN { print and(5, 3), or(5, 3), xor(5, 3), lshift(1, 4), rshift(16, 2), compl(0), and(-1, 255), compl(1), lshift(1, 64) }' 2>&1; echo $?; awk 'BEGIN { print and(5) }' 2>&1; echo $?",
    stdout: '1 7 6 16 4 1.84467e+19 255 1.84467e+19 1\n0\nawk: cmd. line:1: Too few arguments\n1\n',
    stderr: '',
    exitCode: 0,
  },
  // `++`/`--` right after a constant is the prefix operator of what follows (`1 ++x`), so `$1++` alone is a syntax error, where `$i++` and `$(1)++` increment the field.
  {
    script:
      "echo 3 4 | awk '{ $1++; print }' 2>&1; echo $?; echo 3 4 | awk '{ x = 5; print $1 ++x, x; print 1 ++x, \"a\" ++x; print $2 --x, x }'; echo 3 4 | awk '{ i = 1; print $i++; print i, $0; $(1)++; print; print $NF++, $0 }'",
    stdout: 'awk: cmd. line:1: Unexpected token\n1\n36 6\n17 a8\n47 7\n3\n1 4 4\n5 4\n4 5 5\n',
    stderr: '',
    exitCode: 0,
  },
  // printf's %a and %A as glibc prints a double: the fraction's hex digits, zero and subnormals, inf.
  {
    script:
      'awk \'BEGIN { printf "%a %A %.2a|%a|%a|%a|%a\\n", 1, 255.5, 3.14159, 0, -0.5, 0.1, 1e300; printf "%a|%a|%A|%a|%a %A\\n", 1e-310, 5e-324, 1e-320, -1e308, 1e308*10, -1e308*10 }\'',
    stdout:
      '0x1p+0 0X1.FFP+7 0x1.92p+1|0x0p+0|-0x1p-1|0x1.999999999999ap-4|0x1.7e43c8800759cp+996\n0x0.012688b70e62bp-1022|0x0.0000000000001p-1022|0X0.00000000007E8P-1022|-0x1.1ccf385ebc8ap+1023|inf -INF\n',
    stderr: '',
    exitCode: 0,
  },
  // %a's precision (half to even, a carry making the leading digit 2), flags and width.
  {
    script:
      'awk \'BEGIN { printf "%.0a|%.1a|%.1a|%.0a|%.0a|%.3a|%.20a\\n", 1.5, 1.97, 1.96875, 2.5, 1.5, 0.1, 0.1; printf "%10.1a|%-12a|%+a|% a|%#a|%012a|%#.0a|%-+14.2A|%020a\\n", 1.97, 2, 3, 4, 1, -5, 1, 1.1, 123.456 }\'',
    stdout:
      '0x2p+0|0x2.0p+0|0x2.0p+0|0x1p+1|0x2p+0|0x1.99ap-4|0x1.999999999999a0000000p-4\n  0x2.0p+0|0x1p+1      |+0x1.8p+1| 0x1p+2|0x1.p+0|-0x0001.4p+2|0x1.p+0|+0X1.1AP+0    |0x1.edd2f1a9fbe77p+6\n',
    stderr: '',
    exitCode: 0,
  },
  // The float conversions take a string's leading number, as awk reads one.
  {
    script: 'awk \'BEGIN { printf "%f %d %e %g %a|\\n", "3.5xyz", "7abc", "2e3x", " 12 ", "0x10"; printf "%f %g %a %d\\n", "", "abc", "-", "1e2" }\'',
    stdout: '3.500000 7 2.000000e+03 12 0x1p+4|\n0.000000 0 0x0p+0 100\n',
    stderr: '',
    exitCode: 0,
  },
  // `-f FILE` (again and again, `-` is stdin), `-e PROGRAM` after the files' programs, `-W` ignored with a warning; a program file that does not open ends awk.
  {
    script:
      "printf 'BEGIN { print \"one\" }\\n' > /tmp/a.awk; printf '{ print \"two\", $0 }\\nEND { print NR }\\n' > /tmp/b.awk; echo x | awk -f /tmp/a.awk -f /tmp/b.awk; echo $?; echo y | awk -f /tmp/b.awk -f /tmp/a.awk - ; echo $?; echo z | awk -e 'BEGIN{print \"e\"}' -f /tmp/a.awk; echo $?; awk -f /tmp/nope.awk; echo $?; echo 'BEGIN{print \"stdin prog\"}' | awk -f -; echo $?; echo q | awk -f/tmp/b.awk; echo $?; awk -W x 'BEGIN{print 1}'; echo $?; awk -f /tmp/a.awk 'BEGIN{print 2}'; echo $?; rm /tmp/a.awk /tmp/b.awk",
    stdout: 'one\ntwo x\n1\n0\none\ntwo y\n1\n0\none\ne\n0\n1\nstdin prog\n0\ntwo q\n1\n0\n1\n0\none\n0\n',
    stderr: "awk: can't open '/tmp/nope.awk': No such file or directory\nawk: warning: option -W is ignored\n",
    exitCode: 0,
  },
  // A program file is read as the command line's text (its UTF-8 bytes); `-F -v` gives FS the value `-v`.
  {
    script:
      'printf \'BEGIN { print length("\\303\\251"), "\\303\\251" }\\n\' > /tmp/u.awk; awk -f /tmp/u.awk; awk -F -v -f /tmp/u.awk; awk -F: -v a=1 -v b=2 \'BEGIN { print a, b, FS }\'; rm /tmp/u.awk',
    stdout: '2 \u00e9\n2 \u00e9\n1 2 :\n',
    stderr: '',
    exitCode: 0,
  },
  // The beds' busybox has no math library: `^`, `**`, `^=` and sqrt, exp, log, sin, cos, atan2 end awk; int, rand and srand do not.
  {
    script:
      "awk 'BEGIN{print 2^3}'; echo $?; awk 'BEGIN{print 2**3}'; echo $?; awk 'BEGIN{print sqrt(4)}'; echo $?; awk 'BEGIN{print exp(0), log(1)}'; echo $?; awk 'BEGIN{print sin(0), cos(0), atan2(0, 1)}'; echo $?; awk 'BEGIN{x=2; x^=2; print x}'; echo $?; awk 'BEGIN{print int(3.7), rand() < 1, srand(), 10 % 3}'; echo $?",
    stdout: '1\n1\n1\n1\n1\n1\n3 1 1 1\n0\n',
    stderr:
      'awk: cmd. line:1: Math support is not compiled in\nawk: cmd. line:1: Math support is not compiled in\nawk: cmd. line:1: Math support is not compiled in\nawk: cmd. line:1: Math support is not compiled in\nawk: cmd. line:1: Math support is not compiled in\nawk: cmd. line:1: Math support is not compiled in\n',
    exitCode: 0,
  },
  // A missing option value, no program, or a `-v` that is no assignment: the usage, status 1.
  {
    script: "awk -f; echo $?; awk; echo $?; awk -v; echo $?; awk -v x 'BEGIN{}'; echo $?; awk -e; echo $?",
    stdout: '1\n1\n1\n1\n1\n',
    stderr:
      "awk: option requires an argument -- 'f'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: awk [OPTIONS] [AWK_PROGRAM] [FILE]...\n\n\t-v VAR=VAL\tSet variable\n\t-F SEP\t\tUse SEP as field separator\n\t-f FILE\t\tRead program from FILE\n\t-e AWK_PROGRAM\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: awk [OPTIONS] [AWK_PROGRAM] [FILE]...\n\n\t-v VAR=VAL\tSet variable\n\t-F SEP\t\tUse SEP as field separator\n\t-f FILE\t\tRead program from FILE\n\t-e AWK_PROGRAM\nawk: option requires an argument -- 'v'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: awk [OPTIONS] [AWK_PROGRAM] [FILE]...\n\n\t-v VAR=VAL\tSet variable\n\t-F SEP\t\tUse SEP as field separator\n\t-f FILE\t\tRead program from FILE\n\t-e AWK_PROGRAM\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: awk [OPTIONS] [AWK_PROGRAM] [FILE]...\n\n\t-v VAR=VAL\tSet variable\n\t-F SEP\t\tUse SEP as field separator\n\t-f FILE\t\tRead program from FILE\n\t-e AWK_PROGRAM\nawk: option requires an argument -- 'e'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: awk [OPTIONS] [AWK_PROGRAM] [FILE]...\n\n\t-v VAR=VAL\tSet variable\n\t-F SEP\t\tUse SEP as field separator\n\t-f FILE\t\tRead program from FILE\n\t-e AWK_PROGRAM\n",
    exitCode: 0,
  },
  // busybox skips a newline after a binary operator (TS_NOTERM), `in`, `|`, `>`, `;` and `}`: the expression goes on.
  {
    script:
      'awk \'BEGIN { x = 1 +\n2; y = x *\n3; z = y ==\n9; w = "a" ~\n/a/; v = 1 in\nA; q = (1 <\n2); r = 7 %\n4; u = 1 &&\n0; s = 1 /\n2; print x, y, z, w, v, q, r, u, s }\' 2>&1; echo $?',
    stdout: '3 9 1 1 0 1 3 0 0.5\n0\n',
    stderr: '',
    exitCode: 0,
  },
  // After a compound assignment and inside a conditional the same.
  {
    script:
      'awk \'BEGIN { x = 5; x -=\n2; s = "a"\ns = s\n"b"; print x, s }\' 2>&1; echo $?; awk \'BEGIN { y = 1 ? \n2 :\n3; print y }\' 2>&1; echo $?',
    stdout: '3 a\n0\n2\n0\n',
    stderr: '',
    exitCode: 0,
  },
  // After `>` of print and a binary minus the same; not after a unary minus: that newline is an unexpected token.
  {
    script:
      "awk 'BEGIN { print 1 >\n\"/dev/stdout\" }' 2>&1; echo $?; awk 'BEGIN { x = 1; print -\nx }' 2>&1; echo $?; awk 'BEGIN { x = 3; x = x -\n1; print x }' 2>&1; echo $?",
    stdout: '1\n0\nawk: cmd. line:1: Unexpected token\n1\n2\n0\n',
    stderr: '',
    exitCode: 0,
  },
  // After `|` before getline, and `in` in a for loop.
  {
    script:
      'awk \'BEGIN { "echo hi" |\ngetline l; print l }\' 2>&1; echo $?; awk \'BEGIN { for (k in\nA) print k; print "done" }\' 2>&1; echo $?; awk \'BEGIN { x = 2 ** \n2; print x;\n}\nEND { print "e" }\' </dev/null 2>&1; echo $?',
    stdout: 'hi\n0\ndone\n0\nawk: cmd. line:2: Math support is not compiled in\n1\n',
    stderr: '',
    exitCode: 0,
  },
  // After `|` and `>>` of print, `;`, a binary minus; not after a unary one.
  {
    script:
      'awk \'BEGIN { print "x" |\n"cat"; close("cat"); print "y" >>\n"/dev/stdout" }\' 2>&1; echo $?; awk \'BEGIN { x = 1;\n\ny = 2 }\nEND { print x + y }\' </dev/null 2>&1; echo $?; awk \'BEGIN { x = -\n-1; print x }\' 2>&1; echo $?; awk \'BEGIN { x = 1 - -\n1; print x }\' 2>&1; echo $?; awk \'BEGIN { a["k"] = 1; x = a["k"] +\n1; y = (2) *\n3; z = $0 ~\n"" ; print x, y, z }\' 2>&1; echo $?',
    stdout: 'x\ny\n0\n3\n0\nawk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:1: Unexpected token\n1\n2 6 1\n0\n',
    stderr: '',
    exitCode: 0,
  },
  // A pattern whose line ends is a rule of its own (it prints the line), and the braces on the next line another; not after `!`.
  {
    script:
      "printf 'a\\n' | awk '/a/\n{ print \"rule2\" }' 2>&1; echo $?; awk 'BEGIN { x = 1 > \n0 ; print x }' 2>&1; echo $?; awk 'BEGIN { x = 1 !\n= 1 ; print x }' 2>&1; echo $?; awk 'BEGIN { x = !\n1; print x }' 2>&1; echo $?",
    stdout: 'a\nrule2\n0\n1\n0\nawk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:1: Unexpected token\n1\n',
    stderr: '',
    exitCode: 0,
  },
  // BEGIN and END take their action on their own line; a pattern's ends with the line; a function's may start on the next.
  {
    script:
      "awk 'BEGIN\n{ print 1 }' </dev/null 2>&1; echo $?; echo a | awk 'END\n{ print 2 }' 2>&1; echo $?; printf 'a\\nb\\n' | awk 'NR==1\n{ print \"r2\" }' 2>&1; echo $?; printf 'a\\nb\\nc\\n' | awk '/a/,/b/\n' 2>&1; echo $?; printf 'a\\n' | awk 'function f(x)\n{ return x+1 }\n{ print f(1) }' 2>&1; echo $?",
    stdout: 'awk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:1: Unexpected token\n1\na\nr2\nr2\n0\na\nb\n0\n2\n0\n',
    stderr: '',
    exitCode: 0,
  },
  // A program awk cannot read: `awk: cmd. line:N: Unexpected token`, or `Unexpected end of string` in an unterminated string or regex, status 1.
  {
    script:
      "for p in 'BEGIN{' 'BEGIN{print \"a}' 'BEGIN{x=/a}' 'BEGIN{print (}' '{print $}' 'BEGIN{x = 1 +}' 'BEGIN{ if }' 'BEGIN { f( }' 'BEGIN { x = 1\ny = 2 +\n}' 'BEGIN { x = 1 2 3 ) }' 'BEGIN { print 1,, 2 }' '}' 'BEGIN { getline < }' 'BEGIN { a[1 }' 'BEGIN { x = 1 } }' 'BEGIN { for (;;) }' 'BEGIN { while }'; do awk \"$p\" </dev/null; echo \"$?\"; done 2>&1",
    stdout:
      'awk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:1: Unexpected end of string\n1\nawk: cmd. line:1: Unexpected end of string\n1\nawk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:3: Unexpected token\n1\nawk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:1: Unexpected token\n1\nawk: cmd. line:1: Unexpected token\n1\n',
    stderr: '',
    exitCode: 0,
  },
  // rand is glibc's random() under busybox's seed (1 until srand), three draws a number; srand returns the seed before.
  {
    script:
      'awk \'BEGIN{print rand(), rand(); print srand(5); print rand(); print srand(7); x = srand(); print x; srand(0); print rand(); srand(-1); print rand(); srand(2.9); print rand(); srand("abc"); print rand(); printf "%.10f\\n", rand()}\'',
    stdout: '0.783099 0.197551\n1\n0.992755\n5\n7\n0.783099\n0.170491\n0.0887955\n0.783099\n0.1975513693\n',
    stderr: '',
    exitCode: 0,
  },
  // An operand `VAR=VALUE` is set when awk reaches it; `-` is stdin (FILENAME `-`); with assignments only, stdin is read.
  {
    script:
      "echo in | awk '{print FILENAME \": \" $0, x}' x=1 - x=2 /dev/null; echo $?; awk '{print}' /nope; echo $?; echo a > /tmp/f1; echo in | awk '{print FILENAME, $0}' /tmp/f1 - /tmp/f1; echo $?; awk 'END{print NR, x}' x=5; echo $?; rm /tmp/f1",
    stdout: '-: in 1\n0\n1\n/tmp/f1 a\n- in\n/tmp/f1 a\n0\n0 5\n0\n',
    stderr: 'awk: /nope: No such file or directory\n',
    exitCode: 0,
  },
  // A file that does not open ends awk after what it printed; a directory: `awk: cmd. line:N: Is a directory`.
  {
    script: "echo a > /tmp/f1; awk '{print}' /tmp/f1 /nope 2>&1; echo $?; awk 'BEGIN{print \"x\"} {print}' /tmp/f1 /tmp 2>&1; echo $?; rm /tmp/f1",
    stdout: 'a\nawk: /nope: No such file or directory\n1\nx\na\nawk: cmd. line:1: Is a directory\n1\n',
    stderr: '',
    exitCode: 0,
  },
  // busybox runs in the C locale: printf's %c is a byte, and %s's width and precision count bytes (a character of UTF-8 can be cut).
  {
    script:
      "printf '%-4s|%4s|%.1s|%.3s|%5.2s|%c|%-3c|%s|\\n' é é héllo héllo héllo é é ß | od -An -tx1; printf '%.1s%%|%3s\\n' 'é%' 'a\\b' | od -An -c; printf '%05s|%*s|%.*s|\\n' é 4 é 1 é | od -An -tx1",
    stdout:
      ' c3 a9 20 20 7c 20 20 c3 a9 7c 68 7c 68 c3 a9 7c\n 20 20 20 68 c3 7c c3 7c c3 20 20 7c c3 9f 7c 0a\n 303   %   |   a   \\   b  \\n\n 20 20 20 c3 a9 7c 20 20 c3 a9 7c c3 7c 0a\n',
    stderr: '',
    exitCode: 0,
  },
  // expr's substr and `:` cut bytes, and what they give is written as those bytes.
  {
    script: "expr substr héllo 2 1 | od -An -tx1; expr héllo : '\\(..\\)' | od -An -tx1; expr substr héllo 2 2",
    stdout: ' c3 0a\n 68 c3 0a\né\n',
    stderr: '',
    exitCode: 0,
  },
  // awk's toupper and tolower map the ASCII letters only (the C locale).
  {
    script: "echo 'héllo Wörld' | awk '{print toupper($0); print tolower($0)}'; awk 'BEGIN{print toupper(\"àéÉ\"), tolower(\"ÀÉé\")}'",
    stdout: 'HéLLO WöRLD\nhéllo wörld\nàéÉ ÀÉé\n',
    stderr: '',
    exitCode: 0,
  },
  // busybox's tr: its usage, an unknown option, an empty STRING2 and a malformed [=C=] refused.
  {
    script:
      "tr 2>&1; echo rc=$?; tr -x a 2>&1 | head -1; echo ab | tr a '' 2>&1; echo rc=$?; echo abc | tr '[=b' X 2>&1 | head -1; echo abc | tr -s 2>&1 | head -1",
    stdout:
      "BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: tr [-cds] STRING1 [STRING2]\n\nTranslate, squeeze, or delete characters from stdin, writing to stdout\n\n\t-c\tTake complement of STRING1\n\t-d\tDelete input characters coded STRING1\n\t-s\tSqueeze multiple output characters of STRING2 into one character\nrc=1\ntr: invalid option -- 'x'\ntr: STRING2 cannot be empty\nrc=1\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n",
    stderr: '',
    exitCode: 0,
  },
  // tr on bytes (the C locale): a character of UTF-8 is its bytes in the sets and the input.
  {
    script:
      "echo héllo | tr -c 'a-z\\n' '_'; echo héllo | tr 'é' 'xy' | od -An -c; echo héllo | tr -d '\\303' | od -An -tx1; echo é | tr '\\303\\251' 'EE'; echo 'Ça' | tr '[:upper:]' '[:lower:]'",
    stdout: 'h__llo\n   h   x   y   l   l   o  \\n\n 68 a9 6c 6c 6f 0a\nEE\nÇa\n',
    stderr: '',
    exitCode: 0,
  },
  // tr's escapes as libbb reads them (\xHH, octal while a byte, letters; others the backslash itself).
  {
    script:
      "printf 'a\\tb\\\\c\\n' | tr '\\t\\\\' 'TB'; echo abc | tr '\\x61\\142' 'XY'; echo abc | tr 'a\\z' 'XY'; echo 'a\\z' | tr '\\z' 'XY'; echo abc | tr 'c-a' 'X'; echo abc | tr abc '\\x'; echo abc | tr '\\400' Z; echo ab4 | tr '\\4' Z; printf 'a\\0b' | tr '\\000' '-'; echo",
    stdout: 'aTbBc\nXYc\nXbc\naXY\nabc\n\\xx\nabc\nab4\na-b\n',
    stderr: '',
    exitCode: 0,
  },
  // tr's ranges, classes and brackets as coreutils/tr.c expands them (a reversed range is empty; [ is itself but for [:class:] and [=C=]).
  {
    script:
      "echo 'a[b]c' | tr '[b]' 'xyz'; echo 'abc' | tr '[=b=]' 'X'; echo abc | tr '[:foo:]' 'X'; echo 'x[:y' | tr '[:' 'AB'; echo abc | tr 'a-c' 'z-x'; echo 'a-z' | tr 'a\\-z' 'XYZ'; echo abc | tr '\\\\-b' X; echo abc | tr 'a-b-c' 'XYZW'; echo abc | tr 'a-\\x63' 'X'; echo a | tr -c a",
    stdout: 'axyzc\naXc\nabc\nxABy\n000\nZ-Z\nXXc\nXYW\nXXX\na\n',
    stderr: '',
    exitCode: 0,
  },
  // tr -c, -d and -s together, and the C locale's classes (a guard: just-bash's tr gave the same).
  {
    script:
      "echo hello | tr -cs 'a-z' '\\n'; echo 'one two  three' | tr -cs '[:alnum:]' '\\n' | wc -l; echo a | tr -Cd x; echo abc | tr -ds b c; echo abcabc | tr -sc a X; echo; echo 'xyz09AF' | tr '[:xdigit:]' '_'; echo 'a.b,c;' | tr '[:punct:]' '.'; printf 'a\\001b\\n' | tr '[:cntrl:]' 'X'; echo 'a b\tc' | tr '[:blank:]' '_'",
    stdout: 'hello\n3\nac\naXaX\nxyz____\na.b.c.\naXbXa_b_c\n',
    stderr: '',
    exitCode: 0,
  },
  // Bytes one command writes elsewhere (a file, a substitution, /dev/null) leave the next one's text as it is.
  {
    script:
      "printf '\\377' > /tmp/rt-raw; echo é; x=$(printf '\\377'); echo \"é ${#x}\"; printf '\\377' | head -c 1 >/dev/null; printf 'é\\n' | head -c 3; rm /tmp/rt-raw",
    stdout: 'é\né 1\né\n',
    stderr: '',
    exitCode: 0,
  },
  // Written out, bytes stay bytes beside text (a guard of the case above: it held before).
  {
    script: "printf '\\377'; echo é; { printf 'ü'; printf '\\376'; } | od -An -tx1",
    stdout: '\ufffdé\n c3 bc fe\n',
    stderr: '',
    exitCode: 0,
  },
];

await conformance(
  'the guest runs the busybox programs scripts reach for (yes, ash, mktemp, chown, dd, df, ps) and shows /proc as a busybox container does',
  (target) => {
    const name = launchPerSuite(target);
    shScripts(target, name, cases);

    it('a node name set with hostname lasts until the instance stops', async () => {
      const t = target();
      const run = (script: string, whole: string) =>
        printing(t, async () => (await t.client.exec(name(), { command: ['sh', '-c', script] })).wait({ timeoutMs: 20_000 }), ['stdout'], whole);
      expect((await run('hostname rt-renamed; hostname', 'rt-renamed\n')).stdout).toBe('rt-renamed\n');
      expect((await run('hostname; uname -n; echo $HOSTNAME', 'rt-renamed\n'.repeat(3))).stdout).toBe('rt-renamed\n'.repeat(3));
      await (await t.client.changeState(name(), { action: 'restart', force: true })).wait({ timeoutMs: 30_000 });
      expect((await run('hostname', `${name()}\n`)).stdout).toBe(`${name()}\n`);
    });
  },
);
