import { conformance, launchPerSuite, shScripts, type ShScript } from './targets.js';

/**
 * busybox's xxd and hexdump (over bb_dump) as scripts call them, options glued or apart (issue #41
 * item 5). Each case was run on the test beds' busybox 1.35 on LXD 5.0.2 and Incus 6.0.4, held to
 * the simulator's (`src/simulator/guest/busybox-hexdump.ts`).
 */
const cases: ShScript[] = [
  // Their usages, as --help prints them.
  {
    script: 'xxd --help; echo $?; hexdump --help; echo $?',
    stdout: '0\n0\n',
    stderr:
      'BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: xxd [-pri] [-g N] [-c N] [-n LEN] [-s OFS] [-o OFS] [FILE]\n\nHex dump FILE (or stdin)\n\n\t-g N\t\tBytes per group\n\t-c N\t\tBytes per line\n\t-p\t\tShow only hex bytes, assumes -c30\n\t-i\t\tC include file style\n\t-l LENGTH\tShow only first LENGTH bytes\n\t-s OFFSET\tSkip OFFSET bytes\n\t-o OFFSET\tAdd OFFSET to displayed offset\n\t-r\t\tReverse (with -p, assumes no offsets in input)\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: hexdump [-bcdoxCv] [-e FMT] [-f FMT_FILE] [-n LEN] [-s OFS] [FILE]...\n\nDisplay FILEs (or stdin) in a user specified format\n\n\t-b\t\t1-byte octal display\n\t-c\t\t1-byte character display\n\t-d\t\t2-byte decimal display\n\t-o\t\t2-byte octal display\n\t-x\t\t2-byte hex display\n\t-C\t\thex+ASCII 16 bytes per line\n\t-v\t\tShow all (no dup folding)\n\t-e FORMAT_STR\tExample: \'16/1 "%02x|""\\n"\'\n\t-f FORMAT_FILE\n\t-n LENGTH\tShow only first LENGTH bytes\n\t-s OFFSET\tSkip OFFSET bytes\n',
    exitCode: 0,
  },
  // xxd: -l, -c, -g, -s (a negative offset refused), -p (30 a line), glued or apart; -u is not busybox's.
  {
    script:
      "cd /tmp; printf 'abcdefghijklmnopqrstuvwxyz0123456789' > t; xxd -l4 t; xxd -c4 -l8 t; xxd -s30 t; xxd -g1 -l5 t; xxd -g4 -c8 -l8 t; xxd -p t; xxd -p -c4 -l8 t; xxd -u -l2 t; xxd -s -3 t; xxd -l 3 -s 2 t",
    stdout:
      '00000000: 6162 6364                                abcd\n00000000: 6162 6364  abcd\n00000004: 6566 6768  efgh\n0000001e: 3435 3637 3839                           456789\n00000000: 61 62 63 64 65                                   abcde\n00000000: 61626364 65666768  abcdefgh\n6162636465666768696a6b6c6d6e6f707172737475767778797a30313233\n343536373839\n61626364\n65666768\n00000002: 6364 65                                  cde\n',
    stderr:
      "xxd: invalid option -- 'u'\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\nUsage: xxd [-pri] [-g N] [-c N] [-n LEN] [-s OFS] [-o OFS] [FILE]\n\nHex dump FILE (or stdin)\n\n\t-g N\t\tBytes per group\n\t-c N\t\tBytes per line\n\t-p\t\tShow only hex bytes, assumes -c30\n\t-i\t\tC include file style\n\t-l LENGTH\tShow only first LENGTH bytes\n\t-s OFFSET\tSkip OFFSET bytes\n\t-o OFFSET\tAdd OFFSET to displayed offset\n\t-r\t\tReverse (with -p, assumes no offsets in input)\nxxd: invalid number '-3'\n",
    exitCode: 0,
  },
  // xxd -r back to bytes, with -p any hex digits; -i a C array; `-ps` takes `-l3` as -s's number.
  {
    script:
      "cd /tmp; printf '616263\\n0a' | xxd -r -p | od -c; printf '00000000: 6869 0a  hi.\\n' | xxd -r; xxd -p t | xxd -r -p | wc -c; xxd -ps -l3 t; xxd -i -l3 t; echo $?",
    stdout: '0000000   a   b   c  \\n\n0000004\nhi\n36\nunsigned char t[] = {\n  0x61, 0x62, 0x63,\n};\nunsigned int t_len = 3;\n0\n',
    stderr: "xxd: invalid number '-l3'\n",
    exitCode: 0,
  },
  // hexdump: -n, -s, -C, the letters -c -b -d -o -x and none (2-byte hex words), each row padded to its width.
  {
    script:
      "cd /tmp; printf 'abcdefghijklmnopqrstuvwxyz0123456789' > t; hexdump -n4 -C t; hexdump -s30 -C t; hexdump -n 6 t; hexdump -c -n4 t; hexdump -b -n3 t; hexdump -d -n4 t; hexdump -o -n4 t; hexdump -x -n4 t",
    stdout:
      '00000000  61 62 63 64                                       |abcd|\n00000004\n0000001e  34 35 36 37 38 39                                 |456789|\n00000024\n0000000 6261 6463 6665                         \n0000006\n0000000   a   b   c   d                                                \n0000004\n0000000 141 142 143                                                    \n0000003\n0000000   25185   25699                                                \n0000004\n0000000  061141  062143                                                \n0000004\n0000000    6261    6463                                                \n0000004\n',
    stderr: '',
    exitCode: 0,
  },
  // xxd -i: 12 bytes a line (or -c), the name made of the file's, from stdin the lines alone, an empty one.
  {
    script:
      "cd /tmp; printf 'abcdefghijklmnopqrstuvwxyz0123456789' > t; xxd -i -l13 t; printf 'ab' | xxd -i; cp t 1a.b-c; xxd -i -l2 1a.b-c; xxd -i -c4 -l5 t; xxd -i -l0 t",
    stdout:
      'unsigned char t[] = {\n  0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c,\n  0x6d,\n};\nunsigned int t_len = 13;\n  0x61, 0x62,\nunsigned char __1a_b_c[] = {\n  0x61, 0x62,\n};\nunsigned int __1a_b_c_len = 2;\nunsigned char t[] = {\n  0x61, 0x62, 0x63, 0x64,\n  0x65,\n};\nunsigned int t_len = 5;\nunsigned char t[] = {\n};\nunsigned int t_len = 0;\n',
    stderr: '',
    exitCode: 0,
  },
];

await conformance("busybox's xxd and hexdump", (target) => {
  shScripts(target, launchPerSuite(target), cases);
});
