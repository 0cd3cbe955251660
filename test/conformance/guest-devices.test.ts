import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * The character devices of a container's /dev, as LXC gives an unprivileged busybox container on
 * LXD 5.0.2 and Incus 6.0.4: the host's nodes bound in (owned by the unmapped host root, 65534),
 * the console and devpts's multiplexer, held to the simulator's guest (`guest-devices.ts`).
 */
const cases: ShScript[] = [
  // Each device's type, numbers, size, blocks, mode, owner (the host's root is 65534, unmapped) and block size.
  {
    script:
      "stat -c '%n %F %t %T %s %b %a %u %g %U %G %h %o' /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty /dev/console /dev/ptmx /dev/fuse /dev/net/tun /dev/pts/0 /dev/pts/ptmx",
    stdout:
      '/dev/null character special file 1 3 0 0 666 65534 65534 UNKNOWN UNKNOWN 1 4096\n/dev/zero character special file 1 5 0 0 666 65534 65534 UNKNOWN UNKNOWN 1 4096\n/dev/full character special file 1 7 0 0 666 65534 65534 UNKNOWN UNKNOWN 1 4096\n/dev/random character special file 1 8 0 0 666 65534 65534 UNKNOWN UNKNOWN 1 4096\n/dev/urandom character special file 1 9 0 0 666 65534 65534 UNKNOWN UNKNOWN 1 4096\n/dev/tty character special file 5 0 0 0 666 65534 65534 UNKNOWN UNKNOWN 1 4096\n/dev/console character special file 88 0 0 0 700 0 5 root UNKNOWN 1 1024\n/dev/ptmx character special file 5 2 0 0 666 0 0 root root 1 1024\n/dev/fuse character special file a e5 0 0 600 65534 65534 UNKNOWN UNKNOWN 1 4096\n/dev/net/tun character special file a c8 0 0 600 65534 65534 UNKNOWN UNKNOWN 1 4096\n/dev/pts/0 character special file 88 0 0 0 700 0 5 root UNKNOWN 1 1024\n/dev/pts/ptmx character special file 5 2 0 0 666 0 0 root root 1 1024\n',
    stderr: '',
    exitCode: 0,
  },
  // `ls -l` shows a device's numbers where a file's size goes.
  {
    script:
      "ls -ln /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty /dev/fuse /dev/ptmx /dev/console /dev/net /dev/pts | sed 's/ [A-Z][a-z][a-z] [ 0-9][0-9] [0-9:]* / DATE /'",
    stdout:
      'crwx------    1 0        5         136,   0 DATE /dev/console\ncrw-rw-rw-    1 65534    65534       1,   7 DATE /dev/full\ncrw-------    1 65534    65534      10, 229 DATE /dev/fuse\ncrw-rw-rw-    1 65534    65534       1,   3 DATE /dev/null\ncrw-rw-rw-    1 0        0           5,   2 DATE /dev/ptmx\ncrw-rw-rw-    1 65534    65534       1,   8 DATE /dev/random\ncrw-rw-rw-    1 65534    65534       5,   0 DATE /dev/tty\ncrw-rw-rw-    1 65534    65534       1,   9 DATE /dev/urandom\ncrw-rw-rw-    1 65534    65534       1,   5 DATE /dev/zero\n\n/dev/net:\ntotal 0\ncrw-------    1 65534    65534      10, 200 DATE tun\n\n/dev/pts:\ntotal 0\ncrwx------    1 0        5         136,   0 DATE 0\ncrw-rw-rw-    1 0        0           5,   2 DATE ptmx\n',
    stderr: '',
    exitCode: 0,
  },
  // `-F` marks no device as executable (the console is 0700), and `--color` paints devices bold purple.
  {
    script:
      'ls -l /dev/null /dev/console /dev/ptmx | cut -c1-10,16-42; ls -F /dev/console /dev/null; ls --color=always /dev/console /dev/null | od -An -c',
    stdout:
      'crwx------ root     5         136,   \ncrw-rw-rw- 65534    65534       1,   \ncrw-rw-rw- root     root        5,   \n/dev/console\n/dev/null\n 033   [   1   ;   3   5   m   /   d   e   v   /   c   o   n   s\n   o   l   e 033   [   m  \\n 033   [   1   ;   3   5   m   /   d\n   e   v   /   n   u   l   l 033   [   m  \\n\n',
    stderr: '',
    exitCode: 0,
  },
  // `stat`'s own format for a device: its numbers after the links; devpts's block size is 1 KiB.
  {
    script: "stat /dev/null | sed -n '1,4p' | sed 's/Inode: [0-9]* */Inode: N /'; stat /dev/pts/ptmx | sed -n '2p;4p'",
    stdout:
      '  File: /dev/null\n  Size: 0         \tBlocks: 0          IO Block: 4096   character special file\nDevice: 6h/6d\tInode: N Links: 1     Device type: 1,3\nAccess: (0666/crw-rw-rw-)  Uid: (65534/ UNKNOWN)   Gid: (65534/ UNKNOWN)\n  Size: 0         \tBlocks: 0          IO Block: 1024   character special file\nAccess: (0666/crw-rw-rw-)  Uid: (    0/    root)   Gid: (    0/    root)\n',
    stderr: '',
    exitCode: 0,
  },
  // `test` tells a device from a file (`-c`, not `-f`), and a device has no size (`-s`).
  {
    script:
      'for t in -b -c -d -e -f -p -s -x; do printf \'%s\' "$t:"; for f in /dev/null /dev/zero /dev/full /dev/tty /dev/console /dev/ptmx /dev/net/tun /dev/pts/0; do [ $t $f ] && printf 1 || printf 0; done; echo; done',
    stdout: '-b:00000000\n-c:11111111\n-d:00000000\n-e:11111111\n-f:00000000\n-p:00000000\n-s:00000000\n-x:00001001\n',
    stderr: '',
    exitCode: 0,
  },
  // A device has no blocks and no size: `ls -s`, `du`, `wc -c`; `find -type c`.
  {
    script:
      'ls -s /dev/null /dev/zero; du -s /dev/full /dev/null; wc -c /dev/null; find /dev -maxdepth 1 -type c 2>/dev/null | sort; find /dev -maxdepth 2 -type c -perm 600 2>/dev/null | sort',
    stdout:
      '     0 /dev/null\n     0 /dev/zero\n0\t/dev/full\n0\t/dev/null\n0 /dev/null\n/dev/console\n/dev/full\n/dev/fuse\n/dev/null\n/dev/ptmx\n/dev/random\n/dev/tty\n/dev/urandom\n/dev/zero\n/dev/fuse\n/dev/net/tun\n',
    stderr: '',
    exitCode: 0,
  },
  // What is written to /dev/null, /dev/zero and the random devices is gone; /dev/full reads zeros.
  {
    script:
      'echo x > /dev/random; echo $?; echo x > /dev/urandom; echo $?; echo x >> /dev/null; echo $?; printf abc | tee /dev/null /dev/zero; echo " $?"; head -c 4 /dev/full | od -An -tx1; wc -c < /dev/null',
    stdout: '0\n0\n0\nabc 0\n 00 00 00 00\n0\n',
    stderr: '',
    exitCode: 0,
  },
  // ftruncate(2) of a device is EINVAL, fallocate(2) ENODEV.
  {
    script: 'truncate -s 0 /dev/null; echo $?; fallocate -l 10 /dev/null; echo $?; truncate -s 5 /dev/zero; echo $?',
    stdout: '1\n1\n1\n',
    stderr:
      "truncate: /dev/null: truncate: Invalid argument\nfallocate: fallocate '/dev/null': No such device\ntruncate: /dev/zero: truncate: Invalid argument\n",
    exitCode: 0,
  },
  // The devices LXC binds in are mount points (EBUSY); devpts removes its own nodes (EPERM).
  {
    script:
      'rm /dev/zero 2>&1; echo $?; rm -f /dev/tty /dev/net/tun 2>&1; echo $?; rm /dev/pts/ptmx 2>&1; echo $?; ls /dev/zero /dev/tty /dev/pts/ptmx',
    stdout:
      "rm: can't remove '/dev/zero': Device or resource busy\n1\nrm: can't remove '/dev/tty': Device or resource busy\nrm: can't remove '/dev/net/tun': Device or resource busy\n1\nrm: can't remove '/dev/pts/ptmx': Operation not permitted\n1\n/dev/pts/ptmx\n/dev/tty\n/dev/zero\n",
    stderr: '',
    exitCode: 0,
  },
  // Root may not chmod a device of the host's root (unmapped), nor set its times, but may touch it (it may write it); its own /dev/ptmx it may.
  {
    script:
      "chmod 600 /dev/full 2>&1; echo $?; chmod 644 /dev/ptmx; echo $?; ls -l /dev/ptmx | cut -c1-10; chmod 666 /dev/ptmx; touch /dev/null; echo $?; touch -d '2020-01-01 00:00' /dev/null 2>&1; echo $?",
    stdout: 'chmod: /dev/full: Operation not permitted\n1\n0\ncrw-r--r--\n0\ntouch: /dev/null: Operation not permitted\n1\n',
    stderr: '',
    exitCode: 0,
  },
  // mv of a device: EBUSY within /dev's tmpfs; across filesystems busybox copies, and the copy's mknod(2) is refused.
  {
    script:
      'mv /dev/null /tmp/rt-x 2>&1; echo $?; mv /dev/zero /dev/rt-z 2>&1; echo $?; mv /dev/pts/0 /tmp/rt-y 2>&1; echo $?; ls /dev/null /dev/zero /dev/pts/0 /tmp/rt-x 2>&1',
    stdout:
      "mv: can't create '/tmp/rt-x': Operation not permitted\n1\nmv: can't rename '/dev/zero': Device or resource busy\n1\nmv: can't create '/tmp/rt-y': Operation not permitted\n1\nls: /tmp/rt-x: No such file or directory\n/dev/null\n/dev/pts/0\n/dev/zero\n",
    stderr: '',
    exitCode: 1,
  },
  // cp copies a device's bytes into a file; -a and -R make the device anew, which mknod(2) refuses.
  {
    script:
      'cd "$(mktemp -d)"; cp /dev/null f; echo $?; ls -l f | cut -c1-10; cp -a /dev/null g 2>&1; echo $?; cp -R /dev/zero g 2>&1; echo $?; ls g 2>&1',
    stdout:
      "0\n-rw-r--r--\ncp: can't create 'g': Operation not permitted\n1\ncp: can't create 'g': Operation not permitted\n1\nls: g: No such file or directory\n",
    stderr: '',
    exitCode: 1,
  },
  // A named pipe is painted purple and marked `|`.
  {
    script: 'cd "$(mktemp -d)"; mkfifo p; ls --color=always p | od -An -c; ls -F p',
    stdout: ' 033   [   0   ;   3   5   m   p 033   [   m  \\n\np|\n',
    stderr: '',
    exitCode: 0,
  },
  // dd's ftruncate of a device fails and dd goes on; a write to /dev/full fails at dd's first block, none of it out.
  {
    script:
      'dd if=/dev/zero of=/dev/null bs=1k count=3 2>&1; echo $?; dd if=/dev/zero of=/dev/full bs=1 count=1 2>&1; echo $?; dd if=/dev/zero of=/dev/full bs=512 count=4 2>&1; echo $?; printf abc | dd of=/dev/full 2>&1; echo $?; printf abc | dd of=/dev/full status=none; echo $?',
    stdout:
      "3+0 records in\n3+0 records out\n0\ndd: error writing '/dev/full': No space left on device\n1+0 records in\n0+0 records out\n1\ndd: error writing '/dev/full': No space left on device\n1+0 records in\n0+0 records out\n1\ndd: error writing '/dev/full': No space left on device\n0+1 records in\n0+0 records out\n1\n1\n",
    stderr: "dd: error writing '/dev/full': No space left on device\n",
    exitCode: 0,
  },
  // cp opens /dev/full and its write fails; sed's `w` file does not check its writes; what is written to /dev/zero and /dev/urandom is gone.
  {
    script:
      'cd "$(mktemp -d)"; echo y > f; cp f /dev/full 2>&1; echo $?; echo x | sed \'w /dev/full\' 2>&1; echo $?; dd if=/dev/zero of=/dev/zero bs=4 count=2 2>&1; dd if=/dev/zero of=/dev/urandom count=1 conv=notrunc 2>&1; echo $?',
    stdout: 'cp: write error: No space left on device\n1\nx\n0\n2+0 records in\n2+0 records out\n1+0 records in\n1+0 records out\n0\n',
    stderr: '',
    exitCode: 0,
  },
  // A write to /dev/full fails at the write, not at the open: the shell's `echo` says so, `printf` fails without a word, an empty write succeeds.
  {
    script:
      'echo x > /dev/full; echo "rc=$?"; echo -n x >> /dev/full; echo "rc=$?"; printf x > /dev/full; echo "rc=$?"; printf \'\' > /dev/full; echo "rc=$?"; : > /dev/full; echo "rc=$?"; exec 3>/dev/full; echo x >&3; echo "rc=$?"; echo y 2>/dev/full >&2; echo "rc=$?"',
    stdout: 'rc=1\nrc=1\nrc=1\nrc=0\nrc=0\nrc=1\nrc=1\n',
    stderr: 'sh: write error: No space left on device\nsh: write error: No space left on device\nsh: write error: No space left on device\n',
    exitCode: 0,
  },
  // tee's write to /dev/full fails in its words (stdio leaves EIO), its other outputs written.
  {
    script:
      'echo x | tee /dev/full; echo "rc=$?"; cd "$(mktemp -d)"; echo y | tee -a /dev/full t; echo "rc=$?"; cat t; echo x | tee /dev/null /dev/full > /dev/full; echo "rc=$?"',
    stdout: 'x\nrc=1\ny\nrc=1\ny\nrc=1\n',
    stderr: 'tee: /dev/full: I/O error\ntee: /dev/full: I/O error\ntee: /dev/full: I/O error\n',
    exitCode: 0,
  },
  // Each program's stdout on /dev/full: `write error` and 1 from those that check each write, `standard output` from those whose stdio flush fails at exit, nothing from the others (status 1 or 255 from some).
  {
    script:
      "cd \"$(mktemp -d)\"; echo x > /dev/full 2>/tmp/e; echo 'echo x => rc='$?\" [$(cat /tmp/e)]\"; printf x > /dev/full 2>/tmp/e; echo 'printf x => rc='$?\" [$(cat /tmp/e)]\"; pwd > /dev/full 2>/tmp/e; echo 'pwd => rc='$?\" [$(cat /tmp/e)]\"; cat /etc/passwd > /dev/full 2>/tmp/e; echo 'cat /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; ls / > /dev/full 2>/tmp/e; echo 'ls / => rc='$?\" [$(cat /tmp/e)]\"; sed p /etc/passwd > /dev/full 2>/tmp/e; echo 'sed p /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; awk '{print}' /etc/passwd > /dev/full 2>/tmp/e; echo 'awk '\\''{print}'\\'' /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; grep root /etc/passwd > /dev/full 2>/tmp/e; echo 'grep root /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; wc -l /etc/passwd > /dev/full 2>/tmp/e; echo 'wc -l /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; date > /dev/full 2>/tmp/e; echo 'date => rc='$?\" [$(cat /tmp/e)]\"; seq 3 > /dev/full 2>/tmp/e; echo 'seq 3 => rc='$?\" [$(cat /tmp/e)]\"; head -1 /etc/passwd > /dev/full 2>/tmp/e; echo 'head -1 /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; tail -1 /etc/passwd > /dev/full 2>/tmp/e; echo 'tail -1 /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; sort /etc/passwd > /dev/full 2>/tmp/e; echo 'sort /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; uniq /etc/passwd > /dev/full 2>/tmp/e; echo 'uniq /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; cut -c1 /etc/passwd > /dev/full 2>/tmp/e; echo 'cut -c1 /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; od -c /etc/passwd > /dev/full 2>/tmp/e; echo 'od -c /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; base64 /etc/passwd > /dev/full 2>/tmp/e; echo 'base64 /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; md5sum /etc/passwd > /dev/full 2>/tmp/e; echo 'md5sum /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; find /etc > /dev/full 2>/tmp/e; echo 'find /etc => rc='$?\" [$(cat /tmp/e)]\"; stat /etc > /dev/full 2>/tmp/e; echo 'stat /etc => rc='$?\" [$(cat /tmp/e)]\"; env > /dev/full 2>/tmp/e; echo 'env => rc='$?\" [$(cat /tmp/e)]\"; id > /dev/full 2>/tmp/e; echo 'id => rc='$?\" [$(cat /tmp/e)]\"; uname > /dev/full 2>/tmp/e; echo 'uname => rc='$?\" [$(cat /tmp/e)]\"; hostname > /dev/full 2>/tmp/e; echo 'hostname => rc='$?\" [$(cat /tmp/e)]\"; tr a b < /etc/passwd > /dev/full 2>/tmp/e; echo 'tr a b < /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; expr 1 + 1 > /dev/full 2>/tmp/e; echo 'expr 1 + 1 => rc='$?\" [$(cat /tmp/e)]\"; basename /a/b > /dev/full 2>/tmp/e; echo 'basename /a/b => rc='$?\" [$(cat /tmp/e)]\"; dirname /a/b > /dev/full 2>/tmp/e; echo 'dirname /a/b => rc='$?\" [$(cat /tmp/e)]\"; whoami > /dev/full 2>/tmp/e; echo 'whoami => rc='$?\" [$(cat /tmp/e)]\"; true > /dev/full 2>/tmp/e; echo 'true => rc='$?\" [$(cat /tmp/e)]\"; rev /etc/passwd > /dev/full 2>/tmp/e; echo 'rev /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; nl /etc/passwd > /dev/full 2>/tmp/e; echo 'nl /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; tac /etc/passwd > /dev/full 2>/tmp/e; echo 'tac /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; fold /etc/passwd > /dev/full 2>/tmp/e; echo 'fold /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; xxd /etc/passwd > /dev/full 2>/tmp/e; echo 'xxd /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; hexdump -C /etc/passwd > /dev/full 2>/tmp/e; echo 'hexdump -C /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; sha256sum /etc/passwd > /dev/full 2>/tmp/e; echo 'sha256sum /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; df > /dev/full 2>/tmp/e; echo 'df => rc='$?\" [$(cat /tmp/e)]\"; du -s /etc > /dev/full 2>/tmp/e; echo 'du -s /etc => rc='$?\" [$(cat /tmp/e)]\"; readlink /bin/sh > /dev/full 2>/tmp/e; echo 'readlink /bin/sh => rc='$?\" [$(cat /tmp/e)]\"; realpath /bin > /dev/full 2>/tmp/e; echo 'realpath /bin => rc='$?\" [$(cat /tmp/e)]\"; paste /etc/passwd > /dev/full 2>/tmp/e; echo 'paste /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; strings /bin/busybox > /dev/full 2>/tmp/e; echo 'strings /bin/busybox => rc='$?\" [$(cat /tmp/e)]\"; set > /dev/full 2>/tmp/e; echo 'set => rc='$?\" [$(cat /tmp/e)]\"; export > /dev/full 2>/tmp/e; echo 'export => rc='$?\" [$(cat /tmp/e)]\"; type ls > /dev/full 2>/tmp/e; echo 'type ls => rc='$?\" [$(cat /tmp/e)]\"; command -v ls > /dev/full 2>/tmp/e; echo 'command -v ls => rc='$?\" [$(cat /tmp/e)]\"; umask > /dev/full 2>/tmp/e; echo 'umask => rc='$?\" [$(cat /tmp/e)]\"; ulimit > /dev/full 2>/tmp/e; echo 'ulimit => rc='$?\" [$(cat /tmp/e)]\"; times > /dev/full 2>/tmp/e; echo 'times => rc='$?\" [$(cat /tmp/e)]\"; kill -l > /dev/full 2>/tmp/e; echo 'kill -l => rc='$?\" [$(cat /tmp/e)]\"; echo 1+1 | bc > /dev/full 2>/tmp/e; echo 'echo 1+1 | bc => rc='$?\" [$(cat /tmp/e)]\"; dc -e 1p > /dev/full 2>/tmp/e; echo 'dc -e 1p => rc='$?\" [$(cat /tmp/e)]\"; printf '%s\\n' a b > /dev/full 2>/tmp/e; echo 'printf '\\''%s\\n'\\'' a b => rc='$?\" [$(cat /tmp/e)]\"; echo -n x > /dev/full 2>/tmp/e; echo 'echo -n x => rc='$?\" [$(cat /tmp/e)]\"; cal > /dev/full 2>/tmp/e; echo 'cal => rc='$?\" [$(cat /tmp/e)]\"; tty > /dev/full 2>/tmp/e; echo 'tty => rc='$?\" [$(cat /tmp/e)]\"; expand /etc/passwd > /dev/full 2>/tmp/e; echo 'expand /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; unexpand /etc/passwd > /dev/full 2>/tmp/e; echo 'unexpand /etc/passwd => rc='$?\" [$(cat /tmp/e)]\"; which ls > /dev/full 2>/tmp/e; echo 'which ls => rc='$?\" [$(cat /tmp/e)]\"; alias > /dev/full 2>/tmp/e; echo 'alias => rc='$?\" [$(cat /tmp/e)]\"; trap > /dev/full 2>/tmp/e; echo 'trap => rc='$?\" [$(cat /tmp/e)]\"; mount > /dev/full 2>/tmp/e; echo 'mount => rc='$?\" [$(cat /tmp/e)]\"; uptime > /dev/full 2>/tmp/e; echo 'uptime => rc='$?\" [$(cat /tmp/e)]\"",
    stdout:
      "echo x => rc=1 [sh: write error: No space left on device]\nprintf x => rc=1 []\npwd => rc=1 []\ncat /etc/passwd => rc=1 [cat: write error: No space left on device]\nls / => rc=0 []\nsed p /etc/passwd => rc=0 []\nawk '{print}' /etc/passwd => rc=0 []\ngrep root /etc/passwd => rc=0 []\nwc -l /etc/passwd => rc=0 [wc: standard output: No space left on device]\ndate => rc=0 []\nseq 3 => rc=255 []\nhead -1 /etc/passwd => rc=0 [head: standard output: No space left on device]\ntail -1 /etc/passwd => rc=1 [tail: write error: No space left on device]\nsort /etc/passwd => rc=0 [sort: standard output: No space left on device]\nuniq /etc/passwd => rc=0 [uniq: standard output: No space left on device]\ncut -c1 /etc/passwd => rc=0 [cut: standard output: No space left on device]\nod -c /etc/passwd => rc=0 []\nbase64 /etc/passwd => rc=0 [base64: standard output: No space left on device]\nmd5sum /etc/passwd => rc=0 []\nfind /etc => rc=0 []\nstat /etc => rc=0 []\nenv => rc=0 [env: standard output: No space left on device]\nid => rc=0 [id: standard output: No space left on device]\nuname => rc=0 [uname: standard output: No space left on device]\nhostname => rc=0 []\ntr a b < /etc/passwd => rc=1 [tr: write error: No space left on device]\nexpr 1 + 1 => rc=0 [expr: standard output: No space left on device]\nbasename /a/b => rc=1 []\ndirname /a/b => rc=255 []\nwhoami => rc=255 []\ntrue => rc=0 []\nrev /etc/passwd => rc=0 [rev: standard output: No space left on device]\nnl /etc/passwd => rc=0 [nl: standard output: No space left on device]\ntac /etc/passwd => rc=1 [tac: write error: No space left on device]\nfold /etc/passwd => rc=0 [fold: standard output: No space left on device]\nxxd /etc/passwd => rc=0 []\nhexdump -C /etc/passwd => rc=0 []\nsha256sum /etc/passwd => rc=0 []\ndf => rc=0 []\ndu -s /etc => rc=0 [du: standard output: No space left on device]\nreadlink /bin/sh => rc=0 []\nrealpath /bin => rc=0 [realpath: standard output: No space left on device]\npaste /etc/passwd => rc=0 [paste: standard output: No space left on device]\nstrings /bin/busybox => rc=0 [strings: standard output: No space left on device]\nset => rc=1 []\nexport => rc=1 []\ntype ls => rc=1 []\ncommand -v ls => rc=1 []\numask => rc=1 []\nulimit => rc=1 []\ntimes => rc=1 []\nkill -l => rc=1 []\necho 1+1 | bc => rc=1 [bc: output error: No space left on device]\ndc -e 1p => rc=1 [dc: output error: No space left on device]\nprintf '%s\\n' a b => rc=1 []\necho -n x => rc=1 [sh: write error: No space left on device]\ncal => rc=0 [cal: standard output: No space left on device]\ntty => rc=1 [tty: standard output: No space left on device]\nexpand /etc/passwd => rc=0 [expand: standard output: No space left on device]\nunexpand /etc/passwd => rc=0 [unexpand: standard output: No space left on device]\nwhich ls => rc=0 []\nalias => rc=0 []\ntrap => rc=0 []\nmount => rc=0 []\nuptime => rc=0 []\n",
    stderr: '',
    exitCode: 0,
  },
  // Under a compound command's, a loop's or a function's redirection to /dev/full, each command's write fails in its own words.
  {
    script:
      '{ echo a; echo b; } > /dev/full; echo "rc=$?"; { printf a; cat /etc/passwd; wc -l /etc/passwd; true; } > /dev/full; echo "rc=$?"; for i in 1 2; do echo $i; done > /dev/full; echo "rc=$?"; f() { echo in f; }; f > /dev/full; echo "rc=$?"',
    stdout: 'rc=1\nrc=0\nrc=1\nrc=1\n',
    stderr:
      'sh: write error: No space left on device\nsh: write error: No space left on device\ncat: write error: No space left on device\nwc: standard output: No space left on device\nsh: write error: No space left on device\nsh: write error: No space left on device\nsh: write error: No space left on device\n',
    exitCode: 0,
  },
  // So do those of `eval` and a child shell; a pipe, a substitution, another redirection and a stderr copied to the device take theirs elsewhere.
  {
    script:
      'eval \'echo a; pwd\' > /dev/full; echo "rc=$?"; sh -c \'echo a; printf b\' > /dev/full; echo "rc=$?"; cd "$(mktemp -d)"; { x=$(echo sub); echo "x=$x" >&2; echo a | cat >&2; echo b > nf; } > /dev/full; echo "rc=$?"; cat nf; { echo a; } > /dev/full 2>&1; echo "rc=$?"; { echo a 2>&1; } > /dev/full; echo "rc=$?"',
    stdout: 'rc=1\nrc=1\nrc=0\nb\nrc=1\nrc=1\n',
    stderr: 'sh: write error: No space left on device\nsh: write error: No space left on device\nx=sub\na\n',
    exitCode: 0,
  },
  // A command a program runs (env, xargs, find -exec, timeout) is busybox's applet: `echo` says its own write error, printf and
  // `kill -l` lose their output quietly, pwd, seq and dirname end 255; a shell it runs, and a script, is the shell, whose
  // `write error` is busybox's `sh:` whatever the script's name.
  {
    script:
      "env printf x > /dev/full; echo $?; env pwd > /dev/full; echo $?; env kill -l > /dev/full; echo $?; env echo x > /dev/full; echo $?; env basename /a/b > /dev/full; echo $?; echo a b | xargs echo > /dev/full; echo $?; echo a | xargs printf x > /dev/full; echo $?; find / -maxdepth 0 -exec echo {} \\; > /dev/full; echo $?; timeout 5 printf y > /dev/full; echo $?; env sh -c 'echo z' > /dev/full; echo $?",
    stdout: '0\n255\n0\n1\n1\n123\n0\n0\n0\n1\n',
    stderr:
      'echo: write error: No space left on device\necho: write error: No space left on device\necho: write error: No space left on device\nsh: write error: No space left on device\n',
    exitCode: 0,
  },
  {
    script:
      "cd /tmp; printf 'echo s\\n' > s.sh; chmod +x s.sh; env /tmp/s.sh > /dev/full; echo $?; echo x | xargs -I{} echo {} > /dev/full; echo $?; env seq 1 > /dev/full; echo $?; env dirname /a/b > /dev/full; echo $?; sh s.sh > /dev/full; sh -c 'echo a' NAME > /dev/full; . ./s.sh > /dev/full",
    stdout: '1\n123\n255\n255\n',
    stderr:
      'sh: write error: No space left on device\necho: write error: No space left on device\nsh: write error: No space left on device\nsh: write error: No space left on device\nsh: write error: No space left on device\n',
    exitCode: 1,
  },
];

await conformance("the guest's /dev holds the container's character devices, as LXC binds them in", (target) => {
  const name = launchPerSuite(target);
  shScripts(target, name, cases);
});
