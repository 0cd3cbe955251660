import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * busybox's od (od_bloaty.c) and truncate as scripts call them, options glued or apart (issue #41
 * item 5). Each case was run on the test beds' busybox 1.35 on LXD 5.0.2 and Incus 6.0.4, held to
 * the simulator's (`src/simulator/guest/busybox-od.ts`, `busybox-system.ts`).
 */
const cases: ShScript[] = [
  // Every integer size of -t, signed, unsigned, octal and hex (od_bloaty's printf widths), and c and a: a short last group is zero-padded.
  {
    script:
      'cd /tmp; printf \'\\001\\377\\200\\177abcdefghijklmnopqrstu\' > b; for t in d1 d2 d4 d8 u1 u2 u4 u8 o1 o2 o4 o8 x1 x2 x4 x8 dC dS dI dL uC c a; do echo "== $t"; od -t $t b; done',
    stdout:
      '== d1\n0000000    1   -1 -128  127   97   98   99  100  101  102  103  104  105  106  107  108\n0000020  109  110  111  112  113  114  115  116  117\n0000031\n== d2\n0000000   -255  32640  25185  25699  26213  26727  27241  27755\n0000020  28269  28783  29297  29811    117\n0000031\n== d4\n0000000  2139160321  1684234849  1751606885  1818978921\n0000020  1886350957  1953722993         117\n0000031\n== d8\n0000000  7233733597377658625  7812454979559974501\n0000020  8391176362264587885                  117\n0000031\n== u1\n0000000   1 255 128 127  97  98  99 100 101 102 103 104 105 106 107 108\n0000020 109 110 111 112 113 114 115 116 117\n0000031\n== u2\n0000000 65281 32640 25185 25699 26213 26727 27241 27755\n0000020 28269 28783 29297 29811   117\n0000031\n== u4\n0000000 2139160321 1684234849 1751606885 1818978921\n0000020 1886350957 1953722993        117\n0000031\n== u8\n0000000  7233733597377658625  7812454979559974501\n0000020  8391176362264587885                  117\n0000031\n== o1\n0000000 001 377 200 177 141 142 143 144 145 146 147 150 151 152 153 154\n0000020 155 156 157 160 161 162 163 164 165\n0000031\n== o2\n0000000 177401 077600 061141 062143 063145 064147 065151 066153\n0000020 067155 070157 071161 072163 000165\n0000031\n== o4\n0000000 17740177401 14430661141 15031663145 15432665151\n0000020 16033667155 16434671161 00000000165\n0000031\n== o8\n0000000 0621433046057740177401 0661533246455031663145\n0000020 0721633447056033667155 0000000000000000000165\n0000031\n== x1\n0000000 01 ff 80 7f 61 62 63 64 65 66 67 68 69 6a 6b 6c\n0000020 6d 6e 6f 70 71 72 73 74 75\n0000031\n== x2\n0000000 ff01 7f80 6261 6463 6665 6867 6a69 6c6b\n0000020 6e6d 706f 7271 7473 0075\n0000031\n== x4\n0000000 7f80ff01 64636261 68676665 6c6b6a69\n0000020 706f6e6d 74737271 00000075\n0000031\n== x8\n0000000 646362617f80ff01 6c6b6a6968676665\n0000020 74737271706f6e6d 0000000000000075\n0000031\n== dC\n0000000    1   -1 -128  127   97   98   99  100  101  102  103  104  105  106  107  108\n0000020  109  110  111  112  113  114  115  116  117\n0000031\n== dS\n0000000   -255  32640  25185  25699  26213  26727  27241  27755\n0000020  28269  28783  29297  29811    117\n0000031\n== dI\n0000000  2139160321  1684234849  1751606885  1818978921\n0000020  1886350957  1953722993         117\n0000031\n== dL\n0000000  7233733597377658625  7812454979559974501\n0000020  8391176362264587885                  117\n0000031\n== uC\n0000000   1 255 128 127  97  98  99 100 101 102 103 104 105 106 107 108\n0000020 109 110 111 112 113 114 115 116 117\n0000031\n== c\n0000000 001 377 200 177   a   b   c   d   e   f   g   h   i   j   k   l\n0000020   m   n   o   p   q   r   s   t   u\n0000031\n== a\n0000000 soh del nul del   a   b   c   d   e   f   g   h   i   j   k   l\n0000020   m   n   o   p   q   r   s   t   u\n0000031\n',
    stderr: '',
    exitCode: 0,
  },
  // The traditional letters: -d unsigned 2-byte, -s and -i signed 2-byte, -l signed 4-byte, -h and -x hex, -o and -b octal, -a named.
  {
    script:
      "cd /tmp; printf '\\001\\377\\200\\177abcdefghijklmnopqrstu' > b; od -d b; od -s b; od -i b; od -l b; od -h b; od -x b; od -o b; od -b b; od -a b",
    stdout:
      '0000000 65281 32640 25185 25699 26213 26727 27241 27755\n0000020 28269 28783 29297 29811   117\n0000031\n0000000   -255  32640  25185  25699  26213  26727  27241  27755\n0000020  28269  28783  29297  29811    117\n0000031\n0000000   -255  32640  25185  25699  26213  26727  27241  27755\n0000020  28269  28783  29297  29811    117\n0000031\n0000000  2139160321  1684234849  1751606885  1818978921\n0000020  1886350957  1953722993         117\n0000031\n0000000 ff01 7f80 6261 6463 6665 6867 6a69 6c6b\n0000020 6e6d 706f 7271 7473 0075\n0000031\n0000000 ff01 7f80 6261 6463 6665 6867 6a69 6c6b\n0000020 6e6d 706f 7271 7473 0075\n0000031\n0000000 177401 077600 061141 062143 063145 064147 065151 066153\n0000020 067155 070157 071161 072163 000165\n0000031\n0000000 001 377 200 177 141 142 143 144 145 146 147 150 151 152 153 154\n0000020 155 156 157 160 161 162 163 164 165\n0000031\n0000000 soh del nul del   a   b   c   d   e   f   g   h   i   j   k   l\n0000020   m   n   o   p   q   r   s   t   u\n0000031\n',
    stderr: '',
    exitCode: 0,
  },
  // -N and -j (with suffixes; a skip past the end fails), -w (a width not a multiple of the sizes is warned of; bare, 32), -A d and x.
  {
    script:
      "cd /tmp; printf 'abcdefghij' > t; od -N3 -tx1 t; od -j7 -tx1 t; od -j1k t; echo $?; od -N 2k -c t | tail -1; od -w4 -c t; od -w3 -tx2 t; od -w -c t; echo $?; od -Ad -j2 -c t; od -Ax -w8 -c t",
    stdout:
      '0000000 61 62 63\n0000003\n0000007 68 69 6a\n0000012\n1\n0000012\n0000000   a   b   c   d\n0000004   e   f   g   h\n0000010   i   j\n0000012\n0000000 6261\n0000002 6463\n0000004 6665\n0000006 6867\n0000010 6a69\n0000012\n0000000   a   b   c   d   e   f   g   h   i   j\n0000012\n0\n0000002   c   d   e   f   g   h   i   j\n0000010\n000000   a   b   c   d   e   f   g   h\n000008   i   j\n00000a\n',
    stderr: "od: can't skip past end of combined input\nod: warning: invalid width 3; using 2 instead\n",
    exitCode: 0,
  },
  // The idioms scripts use for numbers (`od -An -N4 -tu4`), two formats under one address, a number od refuses.
  {
    script:
      "cd /tmp; printf 'abcdefghij' > t; od -N4 -An -tu4 t; od -An -N2 -i t; od -An -N8 -tu8 t; od -tx1 -tc t; od -N 1x t; echo $?; od -j 99 -c t; echo $?",
    stdout:
      ' 1684234849\n  25185\n  7523094288207667809\n0000000 61 62 63 64 65 66 67 68 69 6a\n          a   b   c   d   e   f   g   h   i   j\n0000012\n1\n1\n',
    stderr: "od: invalid number '1x'\nod: can't skip past end of combined input\n",
    exitCode: 0,
  },
  // -N and -j glued or apart, -w, -t x2, -A x.
  {
    script:
      "cd /tmp; printf 'abcdefgh\\n' > t; od -N4 -c t; od -N 4 -c t; od -j2 -N2 -c t; od -An -w4 -c t; od -w4 -An -tx1 t; od -tx2 -N4 t; od -Ax -N2 -c t",
    stdout:
      '0000000   a   b   c   d\n0000004\n0000000   a   b   c   d\n0000004\n0000002   c   d\n0000004\n   a   b   c   d\n   e   f   g   h\n  \\n\n 61 62 63 64\n 65 66 67 68\n 0a\n0000000 6261 6463\n0000004\n000000   a   b\n000002\n',
    stderr: '',
    exitCode: 0,
  },
  // truncate: -s glued or apart, with -c in one word, after the file; the last -s counts; its usage for what it refuses.
  {
    script:
      'cd /tmp; echo hello > t; truncate -s2 t; wc -c < t; truncate -cs3 t; wc -c < t; truncate t -s 1; wc -c < t; truncate -cs1 nonew; ls nonew; truncate -s 1 -s 4 t; wc -c < t; truncate -x -s1 t; echo $?; truncate t; echo $?; truncate -s1; echo $?; truncate -s -1 t; echo $?; truncate --size=2 t; echo $?',
    stdout: '2\n3\n1\n4\n1\n1\n1\n1\n1\n',
    stderr:
      "ls: nonew: No such file or directory\ntruncate: invalid option -- 'x'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: truncate [-c] -s SIZE FILE...\n\nTruncate FILEs to SIZE\n\n\t-c\tDo not create files\n\t-s SIZE\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: truncate [-c] -s SIZE FILE...\n\nTruncate FILEs to SIZE\n\n\t-c\tDo not create files\n\t-s SIZE\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: truncate [-c] -s SIZE FILE...\n\nTruncate FILEs to SIZE\n\n\t-c\tDo not create files\n\t-s SIZE\ntruncate: invalid number '-1'\ntruncate: unrecognized option '--size=2'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: truncate [-c] -s SIZE FILE...\n\nTruncate FILEs to SIZE\n\n\t-c\tDo not create files\n\t-s SIZE\n",
    exitCode: 0,
  },
];

await conformance("busybox's od and truncate, options glued or apart", (target) => {
  shScripts(target, launchPerSuite(target), cases);
});
