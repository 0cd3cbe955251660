import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeBed, incusBed, lxdBed } from '../support/daemon-bed.js';
import { describeLxcClient, lxcOnBed, startSimRemote, wholeOutput, type SimRemote } from './sim-remote.js';

/**
 * `lxc exec c -- sh` from a terminal (issue #41 item 4): the client sees a pty (Python's pty
 * module drives it, pty-exec.py), so the exec is interactive and the shell reads the terminal line
 * by line. On LXD 5.0.2 busybox ash prints its banner and a prompt naming the directory, echoes
 * what is typed, runs each line, and `exit 3` ends it with 3; the simulator answered nothing and 0.
 * The later sessions size and resize the pty (the client sends the size with the exec and a
 * window-resize message on SIGWINCH), edit lines with the keys busybox's line editor knows, and
 * interrupt a running line with Ctrl-C, and read the terminal; each transcript is the one LXD 5.0.2
 * sends, byte for byte, and the one Incus 6.0.4 sends through the `incus` client.
 */
const script = join(import.meta.dirname, 'pty-exec.py');

const banner = "\r\n\r\nBusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) built-in shell (ash)\r\nEnter 'help' for a list of built-in commands.\r\n\r\n";

/** A session: the steps pty-exec.py plays (lines, `@size`, `@resize`, `@keys`, `@write`) and what the terminal shows after the banner. */
interface Transcript {
  name: string;
  steps: string[];
  transcript: string;
  code: number;
}

/**
 * `ls` on a terminal: busybox lays names out in columns to the terminal's width less one, down
 * (`-x`: across), a column as wide as the longest name and two spaces (and the block counts of
 * `-s`), one name a line when two columns do not fit; off a terminal it prints one name a line
 * (the lxc differential holds that).
 */
const lsPrompt = '/tmp/rt-lsp # \x1b[6n';
const lsSteps = [
  '@size 24 50',
  'mkdir /tmp/rt-lsp; cd /tmp/rt-lsp',
  'touch a bb ccc dddd eeeee ffffff',
  'touch ggggggg hhhhhhhh iiiiiiiii',
  'touch jjjjjjjjjj; mkdir k',
  'ls',
  'ls -s',
  'ls -x',
  'ls -w 60',
  '@resize 24 21',
  'ls -p',
  '@resize 24 50',
  'cd /; rm -r /tmp/rt-lsp',
  'exit',
];
const lsTranscript =
  '~ # \x1b[6nmkdir /tmp/rt-lsp; cd /tmp/rt-lsp\r\n' +
  `${lsPrompt}touch a bb ccc dddd eeeee ffffff\r\n` +
  `${lsPrompt}touch ggggggg hhhhhhhh iiiiiiiii\r\n` +
  `${lsPrompt}touch jjjjjjjjjj; mkdir k\r\n` +
  `${lsPrompt}ls\r\na           dddd        ggggggg     jjjjjjjjjj\r\nbb          eeeee       hhhhhhhh    k\r\nccc         ffffff      iiiiiiiii\r\n` +
  `${lsPrompt}ls -s\r\ntotal 4\r\n     0 a              0 ggggggg\r\n     0 bb             0 hhhhhhhh\r\n     0 ccc            0 iiiiiiiii\r\n` +
  '     0 dddd           0 jjjjjjjjjj\r\n     0 eeeee          4 k\r\n     0 ffffff\r\n' +
  `${lsPrompt}ls -x\r\na           bb          ccc         dddd\r\neeeee       ffffff      ggggggg     hhhhhhhh\r\niiiiiiiii   jjjjjjjjjj  k\r\n` +
  `${lsPrompt}ls -w 60\r\na           dddd        ggggggg     jjjjjjjjjj\r\nbb          eeeee       hhhhhhhh    k\r\nccc         ffffff      iiiiiiiii\r\n` +
  `${lsPrompt}\r/tmp/rt-lsp # \x1b[Jls -p\r\na\r\nbb\r\nccc\r\ndddd\r\neeeee\r\nffffff\r\nggggggg\r\nhhhhhhhh\r\niiiiiiiii\r\njjjjjjjjjj\r\nk/\r\n` +
  `${lsPrompt}\r/tmp/rt-lsp # \x1b[Jcd /; rm -r /tmp/rt-lsp\r\n` +
  '/ # \x1b[6nexit\r\n';

const sessions: Transcript[] = [
  {
    name: 'an interactive shell: banner, prompt, echo, each line run in the state the last left, a newline out as CR LF (a CR before it kept), exit 3',
    steps: ['echo hi', 'x=kept; cd /tmp', 'pwd; echo $x', 'nosuchcmd', String.raw`printf 'a\r\nb\n'`, 'exit 3'],
    transcript:
      '~ # \x1b[6necho hi\r\nhi\r\n' +
      '~ # \x1b[6nx=kept; cd /tmp\r\n' +
      '/tmp # \x1b[6npwd; echo $x\r\n/tmp\r\nkept\r\n' +
      '/tmp # \x1b[6nnosuchcmd\r\nsh: nosuchcmd: not found\r\n' +
      "/tmp # \x1b[6nprintf 'a\\r\\nb\\n'\r\na\r\r\nb\r\n" +
      '/tmp # \x1b[6nexit 3\r\n',
    code: 3,
  },
  {
    name: "the terminal's size: from the request, resized (the line redrawn), `stty size`, `stty -a`, `stty rows|cols`, a bad operand",
    steps: [
      '@size 24 80',
      'stty size',
      '@resize 30 100',
      'stty size; stty -a | head -1',
      '@keys echo ab',
      '@resize 30 90',
      '@keys \r',
      'stty rows 33 cols 77; stty size',
      'stty foo',
      'echo $?',
      'tty; tty -s; echo $?; echo x | tty',
      'exit 3',
    ],
    transcript:
      '~ # \x1b[6nstty size\r\n24 80\r\n' +
      '~ # \x1b[6n\r' +
      '~ # \x1b[Jstty size; stty -a | head -1\r\n30 100\r\nspeed 38400 baud; rows 30; columns 100; line = 0;\r\n' +
      '~ # \x1b[6necho ab\r' +
      '~ # echo ab\x1b[J\r\nab\r\n' +
      '~ # \x1b[6nstty rows 33 cols 77; stty size\r\n33 77\r\n' +
      "~ # \x1b[6nstty foo\r\nstty: invalid number 'foo'\r\n" +
      '~ # \x1b[6necho $?\r\n1\r\n' +
      '~ # \x1b[6ntty; tty -s; echo $?; echo x | tty\r\n/dev/pts/1\r\n0\r\nnot a tty\r\n' +
      '~ # \x1b[6nexit 3\r\n',
    code: 3,
  },
  {
    name: 'line editing: history on the arrows, moving in the line, inserting, Ctrl-A/E/U/W/B/F/K, Delete, Ctrl-C ($? 130), an unknown key, Ctrl-D',
    steps: [
      'echo one',
      'echo two',
      String.raw`@keys \x1b[A\x1b[A\x1b[B\r`,
      String.raw`@keys \x1b[A\x1b[D\x1b[DX\x1b[C\r`,
      String.raw`@keys echo abc\x01Y\x05Z\r`,
      String.raw`@keys echo abcd\x7f\x1b[D\x7f\x1b[3~\r`,
      String.raw`@keys echo hello world\x17\x02\x02\x06\x0b\r`,
      String.raw`@keys echo zz\x1b[D\x15\r`,
      String.raw`@keys echo q\x03`,
      'echo $?',
      String.raw`@keys \x1b[B\x1b[1;5D\x1b[15~`,
      String.raw`@keys \x04`,
    ],
    transcript:
      '~ # \x1b[6necho one\r\none\r\n' +
      '~ # \x1b[6necho two\r\ntwo\r\n' +
      '~ # \x1b[6n\r' +
      '~ # echo two\x1b[J\r' +
      '~ # echo one\x1b[J\r' +
      '~ # echo two\x1b[J\r\ntwo\r\n' +
      '~ # \x1b[6n\r' +
      '~ # echo two\x1b[J\b\bXwo\b\bwo\r\ntXwo\r\n' +
      '~ # \x1b[6necho abc\x1b[8DYecho abc\x1b[8Decho abcZ\r\nsh: Yecho: not found\r\n' +
      '~ # \x1b[6necho abcd\b\x1b[J\b\bc\x1b[J\b\x1b[J\r\na\r\n' +
      '~ # \x1b[6necho hello world\b\x1b[J\b\x1b[J\b\x1b[J\b\x1b[J\b\x1b[J\b\bo\x1b[J\r\nhello\r\n' +
      '~ # \x1b[6necho zz\b\r' +
      '~ # z\x1b[J\bz\r\nsh: z: not found\r\n' +
      '~ # \x1b[6necho q^C\r\n' +
      '~ # \x1b[6necho $?\r\n130\r\n' +
      '~ # \x1b[6n\x07\r\n',
    code: 0,
  },
  {
    // The beds' busybox-static is built without FEATURE_REVERSE_SEARCH: Ctrl-R is a control key the
    // editor ignores, on an empty line or within one, and what follows is typed as usual.
    name: 'Ctrl-R searches nothing: no (reverse-i-search) prompt, the keys after it go into the line',
    steps: ['echo one', String.raw`@keys \x12on\r`, String.raw`@keys echo \x12e\x12\r`, 'exit'],
    transcript: '~ # \x1b[6necho one\r\none\r\n' + '~ # \x1b[6non\r\nsh: on: not found\r\n' + '~ # \x1b[6necho e\r\ne\r\n' + '~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    // A terminal sends Alt-x as ESC and x in one write (pty-exec.py's @keys does too).
    name: 'Alt-b/Alt-f move by words as Ctrl-Left/Right, Alt-d deletes the word after, Alt-Backspace and Alt-Ctrl-H the word before',
    steps: [
      String.raw`@keys echo one two.three\x1bb\x1bbX\x1bfY\r`,
      String.raw`@keys echo aa bb-cc dd\x01\x1bf\x1bd\r`,
      String.raw`@keys echo aa bb-cc dd\x1b\x7f\x1b\x08\r`,
      String.raw`@keys echo abc\x1b\x7f\x01\x1bb\x1b\x7f\x05\x1bf\x1bd\r`,
      'exit',
    ],
    transcript:
      '~ # \x1b[6necho one two.three\b\b\b\b\b\b\b\b\bXtwo.three\x1b[9DtwoY.three\x1b[6D.three\r\none XtwoY.three\r\n' +
      '~ # \x1b[6necho aa bb-cc dd\x1b[16Decho aa\b\b\baa bb-cc dd\x1b[J\x1b[11Da bb-cc dd\x1b[J\x1b[10D bb-cc dd\x1b[J\x1b[9D bb-cc dd\r\nbb-cc dd\r\n' +
      '~ # \x1b[6necho aa bb-cc dd\b\bd\x1b[J\b\x1b[J\b\b\bc \x1b[J\b\b \x1b[J\b\x1b[J\r\naa bb-\r\n' +
      '~ # \x1b[6necho abc\b\b\bbc\x1b[J\b\bc\x1b[J\b\x1b[J\x1b[5Decho \r\n\r\n' +
      '~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    // busybox's read_key takes what comes within 50 ms of the escape: one byte it does not know
    // is typed (the escape alone is ignored), more are dropped with it, up to 15 bytes.
    name: 'ESC then a key: apart, or with one unknown key in one write, the key is typed; with more in 50 ms, up to 15 bytes are dropped',
    steps: [
      String.raw`@keys echo x\x1b`,
      String.raw`@keys b\r`,
      String.raw`@keys echo \x1bx\r`,
      '@keys echo q',
      String.raw`@write \x1bxy`,
      String.raw`@keys z\r`,
      '@keys echo r',
      String.raw`@write \x1b[15~abc`,
      String.raw`@keys d\r`,
      '@keys echo s',
      String.raw`@write \x1b[1`,
      String.raw`@keys 2\r`,
      '@keys echo t',
      String.raw`@write \x1b[`,
      String.raw`@keys A\r`,
      '@keys echo u',
      String.raw`@write \x1b[99999999999999999999~xyz`,
      String.raw`@keys \r`,
      'exit',
    ],
    transcript:
      '~ # \x1b[6necho xb\r\nxb\r\n' +
      '~ # \x1b[6necho x\r\nx\r\n' +
      '~ # \x1b[6necho qz\r\nqz\r\n' +
      '~ # \x1b[6necho rd\r\nrd\r\n' +
      '~ # \x1b[6necho s2\r\ns2\r\n' +
      '~ # \x1b[6necho t[A\r\nt[A\r\n' +
      '~ # \x1b[6necho u999999~xyz\r\nu999999~xyz\r\n' +
      '~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'a line longer than the terminal wraps, and is redrawn on a wider one',
    steps: [
      '@size 10 20',
      String.raw`@keys echo 0123456789abcdefghij\x1b[D\x1b[D\r`,
      '@keys echo 0123456789abcdefgh',
      '@resize 10 30',
      String.raw`@keys \x1bOH\x1b[1;5C\r`,
      'exit',
    ],
    transcript:
      '~ # \x1b[6necho 0123456789a\r\r\nbcdefghij\b\bij\r\n0123456789abcdefghij\r\n' +
      '~ # \x1b[6necho 0123456789a\r\r\nbcdefgh\x1b[1A\r' +
      '~ # echo 0123456789abcdefgh\x1b[J\x1b[23Decho 0123456789abcdefgh\r\n0123456789abcdefgh\r\n' +
      '~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'Tab completes a path, a directory for cd, a builtin or applet; several: the bell and the shared part, a second Tab lists them',
    steps: [
      String.raw`@keys echo /et\t\r`,
      String.raw`@keys cat /etc/pass\t\r`,
      String.raw`@keys ls /s\t\t\x15`,
      String.raw`@keys cd /r\t\t\x15`,
      String.raw`@keys ls /nothing\t\t\x15`,
      String.raw`@keys ali\t\x15`,
      String.raw`@keys echo a; ca\t\x15`,
      String.raw`@keys echo "/e\t\x15`,
      String.raw`@keys ls /tmp/.\t\t\x15`,
      String.raw`@keys ls /etc/\t\t\t\x15`,
      'exit',
    ],
    transcript:
      '~ # \x1b[6necho /et' +
      '\r~ # echo /etc/\x1b[J\r\n/etc/\r\n~ # \x1b[6ncat /etc/pass' +
      '\r~ # cat /etc/passwd \x1b[J\r\nroot:x:0:0:root:/root:/bin/sh\r\n~ # \x1b[6nls /s\x07' +
      '\r~ # ls /s\x1b[J\r\nsbin/  sys/\r\n' +
      '\r~ # ls /s\x1b[J' +
      '\r~ # \x1b[Jcd /r\x07' +
      '\r~ # cd /r\x1b[J\r\nroot/  run/\r\n' +
      '\r~ # cd /r\x1b[J' +
      '\r~ # \x1b[Jls /nothing\x07' +
      '\r~ # \x1b[Jali' +
      '\r~ # alias \x1b[J' +
      '\r~ # \x1b[Jecho a; ca\x07' +
      '\r~ # echo a; ca\x1b[J' +
      '\r~ # \x1b[Jecho "/e' +
      '\r~ # echo "/etc/\x1b[J' +
      '\r~ # \x1b[Jls /tmp/.\x07' +
      '\r~ # ls /tmp/.\x1b[J\r\n../  ./\r\n' +
      '\r~ # ls /tmp/.\x1b[J' +
      '\r~ # \x1b[Jls /etc/\x07\r\ngroup   passwd\r\n' +
      '\r~ # ls /etc/\x1b[J\r\ngroup   passwd\r\n' +
      '\r~ # ls /etc/\x1b[J' +
      '\r~ # \x1b[Jexit\r\n',
    code: 0,
  },
  {
    name: 'one shell for the session: a function, an alias, set -x (its trace on the shell’s stderr, before the command’s redirections) and a trap outlive their line; an open command gets the `> ` prompt; a syntax error is said and the shell goes on',
    steps: [
      'f() {',
      'echo "in f $1"',
      '}',
      'f one',
      'echo $-',
      "alias say='echo said'",
      'say it',
      'fi',
      'echo $?',
      'if true; then',
      'echo inside',
      'fi',
      "echo 'open",
      "quote'",
      'set -x',
      'echo traced',
      'echo y >&2',
      'echo w 2>/dev/null',
      '{ echo v; } >&2',
      'set +x',
      "trap 'echo bye' EXIT",
      'x=kept; cd /etc',
      'echo $x; pwd',
      'exit 5',
    ],
    transcript:
      '~ # \x1b[6nf() {\r\n> \x1b[6necho "in f $1"\r\n> \x1b[6n}\r\n~ # \x1b[6nf one\r\nin f one\r\n~ # \x1b[6necho $-\r\nsmi\r\n' +
      "~ # \x1b[6nalias say='echo said'\r\n~ # \x1b[6nsay it\r\nsaid it\r\n" +
      '~ # \x1b[6nfi\r\nsh: syntax error: unexpected "fi"\r\n~ # \x1b[6necho $?\r\n2\r\n' +
      '~ # \x1b[6nif true; then\r\n> \x1b[6necho inside\r\n> \x1b[6nfi\r\ninside\r\n' +
      "~ # \x1b[6necho 'open\r\n> \x1b[6nquote'\r\nopen\r\nquote\r\n" +
      '~ # \x1b[6nset -x\r\n~ # \x1b[6necho traced\r\n+ echo traced\r\ntraced\r\n' +
      '~ # \x1b[6necho y >&2\r\n+ echo y\r\ny\r\n~ # \x1b[6necho w 2>/dev/null\r\n+ echo w\r\nw\r\n~ # \x1b[6n{ echo v; } >&2\r\n+ echo v\r\nv\r\n' +
      '~ # \x1b[6nset +x\r\n+ set +x\r\n' +
      "~ # \x1b[6ntrap 'echo bye' EXIT\r\n~ # \x1b[6nx=kept; cd /etc\r\n/etc # \x1b[6necho $x; pwd\r\nkept\r\n/etc\r\n" +
      '/etc # \x1b[6nexit 5\r\nbye\r\n',
    code: 5,
  },
  {
    name: 'Ctrl-C drops an unfinished command ($? 130); a function’s local and return; Ctrl-D ends the shell, whose EXIT trap sees its last status',
    steps: [
      'if true; then',
      String.raw`@keys \x03`,
      'echo $?',
      'g() { local v=in; echo $v; return 7; }',
      'g; echo $? ${v:-unset}',
      "trap 'echo bye $?' EXIT",
      'false',
      String.raw`@keys \x04`,
    ],
    transcript:
      '~ # \x1b[6nif true; then\r\n> \x1b[6n^C\r\n~ # \x1b[6necho $?\r\n130\r\n' +
      '~ # \x1b[6ng() { local v=in; echo $v; return 7; }\r\n~ # \x1b[6ng; echo $? ${v:-unset}\r\nin\r\n7 unset\r\n' +
      "~ # \x1b[6ntrap 'echo bye $?' EXIT\r\n~ # \x1b[6nfalse\r\n~ # \x1b[6n\r\nbye 1\r\n",
    code: 1,
  },
  {
    name: 'Ctrl-C while a line runs: the pty echoes ^C, its program dies of SIGINT, the rest of the line (a loop, a function, a subshell) is dropped, $? is 130',
    steps: [
      '@start sleep 5',
      String.raw`@keys \x03`,
      'echo $?',
      '@start for i in 1 2; do sleep 3; echo "i=$i"; done; echo done',
      String.raw`@keys \x03`,
      '@start f() { sleep 4; echo inf; }; f; echo after',
      String.raw`@keys \x03`,
      '@start (sleep 4; echo sub); echo after',
      String.raw`@keys \x03`,
      '@start while :; do sleep 1; done',
      String.raw`@keys \x03`,
      'echo $? ok',
      'exit',
    ],
    transcript:
      '~ # \x1b[6nsleep 5\r\n^C\r\n~ # \x1b[6necho $?\r\n130\r\n' +
      '~ # \x1b[6nfor i in 1 2; do sleep 3; echo "i=$i"; done; echo done\r\n^C\r\n' +
      '~ # \x1b[6nf() { sleep 4; echo inf; }; f; echo after\r\n^C\r\n' +
      '~ # \x1b[6n(sleep 4; echo sub); echo after\r\n^C\r\n' +
      '~ # \x1b[6nwhile :; do sleep 1; done\r\n^C\r\n~ # \x1b[6necho $? ok\r\n130 ok\r\n' +
      '~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'Ctrl-D inside an open command: ash says what it expected, $? is 2, and the shell reads on',
    steps: ['if true; then', String.raw`@keys \x04`, 'echo $?', "echo 'abc", String.raw`@keys \x04`, 'f() {', String.raw`@keys \x04`, 'exit'],
    transcript:
      '~ # \x1b[6nif true; then\r\n> \x1b[6nsh: syntax error: unexpected end of file (expecting "fi")\r\n~ # \x1b[6necho $?\r\n2\r\n' +
      "~ # \x1b[6necho 'abc\r\n> \x1b[6nsh: syntax error: unterminated quoted string\r\n" +
      '~ # \x1b[6nf() {\r\n> \x1b[6nsh: syntax error: unexpected end of file (expecting "}")\r\n~ # \x1b[6nexit\r\n',
    code: 2,
  },
  {
    name: 'history lists the lines typed, numbered from 0, as busybox (its operands ignored)',
    steps: ['echo one', 'history', '  echo two', 'history x', 'exit'],
    transcript:
      '~ # \x1b[6necho one\r\none\r\n~ # \x1b[6nhistory\r\n   0 echo one\r\n   1 history\r\n~ # \x1b[6n  echo two\r\ntwo\r\n' +
      '~ # \x1b[6nhistory x\r\n   0 echo one\r\n   1 history\r\n   2   echo two\r\n   3 history x\r\n~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'read on the terminal: the pty echoes what is typed and edits the line (erase, kill, word erase), -p, -s, -n, -r, -d, -t, Ctrl-D, Ctrl-C; what it leaves goes to the editor',
    steps: [
      'read -t 1 x; echo "[$x] $?"',
      '@start read x',
      'hello  world ',
      'echo "[$x]"',
      '@start read -p "Name? " n',
      String.raw`@keys helx\x7fo wor\x15ab cd\x17ef\r`,
      'echo "[$n] $?"',
      '@start read -s p',
      String.raw`@paste ab\x7fc\r`,
      'echo "[$p] $?"',
      '@start read -n 2 y',
      '@keys q',
      '@answer r',
      'echo "[$y] $?"',
      '@start read m',
      String.raw`@keys \x04`,
      'echo "[$m] $?"',
      '@start read z',
      String.raw`@keys ab\x03`,
      'echo "[$z] $?"',
      '@start read a b',
      String.raw`@paste one two three\recho left\r`,
      'echo "[$a|$b]"',
      '@start read d',
      '@line x\\',
      'y',
      '@start read -r e',
      'a\\b\\',
      '@start read -d : f',
      String.raw`@paste ab:cd\r`,
      'echo "[$d|$e|$f]"',
      'exit',
    ],
    transcript:
      '~ # \x1b[6nread -t 1 x; echo "[$x] $?"\r\n[] 1\r\n' +
      '~ # \x1b[6nread x\r\nhello  world \r\n~ # \x1b[6necho "[$x]"\r\n[hello  world]\r\n' +
      '~ # \x1b[6nread -p "Name? " n\r\nName? helx\b \bo wor' +
      '\b \b'.repeat(8) +
      'ab cd\b \b\b \bef\r\n~ # \x1b[6necho "[$n] $?"\r\n[ab ef] 0\r\n' +
      '~ # \x1b[6nread -s p\r\n~ # \x1b[6necho "[$p] $?"\r\n[ac] 0\r\n' +
      '~ # \x1b[6nread -n 2 y\r\nqr~ # \x1b[6necho "[$y] $?"\r\n[qr] 0\r\n' +
      '~ # \x1b[6nread m\r\n~ # \x1b[6necho "[$m] $?"\r\n[] 1\r\n' +
      '~ # \x1b[6nread z\r\nab^C\r\n~ # \x1b[6necho "[$z] $?"\r\n[] 130\r\n' +
      '~ # \x1b[6nread a b\r\none two three\r\necho left\r\n~ # echo left\r\nleft\r\n~ # \x1b[6necho "[$a|$b]"\r\n[one|two three]\r\n' +
      '~ # \x1b[6nread d\r\nx\\\r\ny\r\n~ # \x1b[6nread -r e\r\na\\b\\\r\n~ # \x1b[6nread -d : f\r\nab:cd\r\n~ # cd\r\n' +
      '~ # \x1b[6necho "[$d|$e|$f]"\r\n[xy|a\\b\\|ab]\r\n~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'an erased tab takes back the columns it took, counted from the tab before it or from where the line started (a prompt’s bytes, each byte of a UTF-8 character one)',
    steps: [
      '@start read -p "T? " t',
      String.raw`@keys ab\x09\x7fc\r`,
      'echo "[$t]"',
      '@start read -p "é " u',
      String.raw`@keys x\x09y\x09\x15z\r`,
      'echo "[$u]"',
      '@start cat',
      // The line's Enter is cat's, not the shell's: the next step waits for its echo and cat's line, not for a prompt.
      String.raw`@keys a\x09\x7f\x7fb\x09x\x09\x7f`,
      '@line ',
      String.raw`@until b\tx\r\n`,
      String.raw`@keys \x04`,
      'exit',
    ],
    transcript:
      '~ # \x1b[6nread -p "T? " t\r\nT? ab\t\b\b\bc\r\n~ # \x1b[6necho "[$t]"\r\n[abc]\r\n' +
      '~ # \x1b[6nread -p "é " u\r\né x\ty\t' +
      '\b'.repeat(7) +
      '\b \b' +
      '\b'.repeat(4) +
      '\b \bz\r\n~ # \x1b[6necho "[$u]"\r\n[z]\r\n' +
      '~ # \x1b[6ncat\r\na\t' +
      '\b'.repeat(7) +
      '\b \bb\tx\t' +
      '\b'.repeat(7) +
      '\r\nb\tx\r\n~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'read -p writes its prompt where its stderr goes: shown under 2>&1 (also of a group, and before >/dev/null), not under 2>/dev/null',
    steps: [
      '@start read -p "N? " n 2>&1',
      String.raw`@answer bob\r`,
      'echo "[$n]"',
      '@start { read -p "M? " m; } 2>&1',
      String.raw`@answer al\r`,
      'echo "[$m]"',
      '@start read -p "O? " o 2>/dev/null',
      String.raw`@answer x\r`,
      '@start { read -p "P? " p; } 2>/dev/null',
      String.raw`@answer y\r`,
      'echo "[$o$p]"',
      '@start read -p "Q? " q 2>&1 >/dev/null',
      String.raw`@answer z\r`,
      'exit',
    ],
    transcript:
      '~ # \x1b[6nread -p "N? " n 2>&1\r\nN? bob\r\n~ # \x1b[6necho "[$n]"\r\n[bob]\r\n~ # \x1b[6n{ read -p "M? " m; } 2>&1\r\nM? al\r\n' +
      '~ # \x1b[6necho "[$m]"\r\n[al]\r\n~ # \x1b[6nread -p "O? " o 2>/dev/null\r\nx\r\n~ # \x1b[6n{ read -p "P? " p; } 2>/dev/null\r\ny\r\n' +
      '~ # \x1b[6necho "[$o$p]"\r\n[xy]\r\n~ # \x1b[6nread -p "Q? " q 2>&1 >/dev/null\r\nQ? z\r\n~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'od reading the terminal writes a row once its 16th byte is typed, and the last row and the offset at Ctrl-D',
    steps: [
      '@start od -c',
      '@line abcdefgh',
      '@line 12345678',
      String.raw`@until 6   7\r\n`,
      '@line abcdefgh',
      '@line 12345678',
      String.raw`@until 4   5\r\n`,
      '@line abcdefgh',
      '@line zz',
      String.raw`@until z  \\n\r\n`,
      String.raw`@keys \x04`,
      '@start od',
      '@line aaaaaaa',
      '@line bb',
      String.raw`@keys \x04`,
      'exit',
    ],
    transcript:
      '~ # \x1b[6nod -c\r\nabcdefgh\r\n12345678\r\n0000000   a   b   c   d   e   f   g   h  \\n   1   2   3   4   5   6   7\r\n' +
      'abcdefgh\r\n12345678\r\n0000020   8  \\n   a   b   c   d   e   f   g   h  \\n   1   2   3   4   5\r\n' +
      'abcdefgh\r\nzz\r\n0000040   6   7   8  \\n   a   b   c   d   e   f   g   h  \\n   z   z  \\n\r\n0000060\r\n' +
      '~ # \x1b[6nod\r\naaaaaaa\r\nbb\r\n0000000 060541 060541 060541 005141 061142 000012\r\n0000013\r\n~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'read takes a pipe, a redirection or a group’s redirection as its stdin; in a command substitution, a function or a subshell it reads the terminal; what is typed is UTF-8',
    steps: [
      'true | read y; echo "[$y] $?"',
      'read z < /dev/null; echo "[$z] $?"',
      '{ read w; } < /dev/null; echo "[$w] $?"',
      '@start echo $(read x; echo "<$x>")',
      'hi',
      '@start f() { read v; }; f; echo "[$v]"',
      'fn',
      '@start (read s; echo "[$s]")',
      'sub',
      '@start read u',
      'é',
      'echo "$u" | od -c | head -1',
      'exit',
    ],
    transcript:
      '~ # \x1b[6ntrue | read y; echo "[$y] $?"\r\n[] 1\r\n~ # \x1b[6nread z < /dev/null; echo "[$z] $?"\r\n[] 1\r\n' +
      '~ # \x1b[6n{ read w; } < /dev/null; echo "[$w] $?"\r\n[] 1\r\n' +
      '~ # \x1b[6necho $(read x; echo "<$x>")\r\nhi\r\n<hi>\r\n~ # \x1b[6nf() { read v; }; f; echo "[$v]"\r\nfn\r\n[fn]\r\n' +
      '~ # \x1b[6n(read s; echo "[$s]")\r\nsub\r\n[sub]\r\n~ # \x1b[6nread u\r\né\r\n' +
      '~ # \x1b[6necho "$u" | od -c | head -1\r\n0000000 303 251  \\n\r\n~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'what a line writes shows as it is written: before each read of a loop, a function, a group whose stderr is redirected to a file or to stdout, an && list',
    steps: [
      '@start while read l; do echo "got $l"; done',
      '@line a',
      '@until got a',
      '@line b',
      '@until got b',
      String.raw`@keys \x04`,
      '@start f() { printf "na""me? "; read n; echo "hi $n"; }; f',
      '@until name? ',
      'bob',
      '@start { echo o""ne; read x; echo "[$x]"; } 2>/dev/null',
      '@until one',
      'two',
      '@start for i in 1 2; do echo "q$i"; read a; echo "a$i=$a"; done',
      '@until q1',
      '@line x',
      '@until q2',
      'y',
      '@start { echo o""ne; read a; echo "[$a]"; } 2>&1',
      '@until one',
      'two',
      '@start echo st""art && read r && echo "<$r>"',
      '@until start',
      'r1',
      'exit',
    ],
    transcript:
      '~ # \x1b[6nwhile read l; do echo "got $l"; done\r\na\r\ngot a\r\nb\r\ngot b\r\n' +
      '~ # \x1b[6nf() { printf "na""me? "; read n; echo "hi $n"; }; f\r\nname? bob\r\nhi bob\r\n' +
      '~ # \x1b[6n{ echo o""ne; read x; echo "[$x]"; } 2>/dev/null\r\none\r\ntwo\r\n[two]\r\n' +
      '~ # \x1b[6nfor i in 1 2; do echo "q$i"; read a; echo "a$i=$a"; done\r\nq1\r\nx\r\na1=x\r\nq2\r\ny\r\na2=y\r\n' +
      '~ # \x1b[6n{ echo o""ne; read a; echo "[$a]"; } 2>&1\r\none\r\ntwo\r\n[two]\r\n' +
      '~ # \x1b[6necho st""art && read r && echo "<$r>"\r\nstart\r\nr1\r\n<r1>\r\n~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'a program reading the terminal reads the lines typed to Ctrl-D: cat into a file, wc, sort, tee, the first of a pipeline, UTF-8; Ctrl-C keeps what cat and tee read; with a file operand none reads it',
    steps: [
      '@start cat > /tmp/t',
      '@line one',
      '@line two',
      String.raw`@keys \x04`,
      'cat /tmp/t',
      '@start wc -l',
      '@line a',
      '@line b',
      String.raw`@keys \x04`,
      '@start sort',
      '@line b',
      '@line a',
      String.raw`@keys \x04`,
      'head -n 1 /tmp/t; tail -n 1 /tmp/t; wc -c /tmp/t',
      '@start tee /tmp/u > /dev/null',
      '@line x',
      String.raw`@write ab\x04`,
      String.raw`@keys \x04`,
      'cat /tmp/u; echo',
      '@start cat | wc -c',
      '@line abc',
      String.raw`@keys \x04`,
      '@start cat > /tmp/u8',
      '@line héllo',
      String.raw`@keys \x04`,
      'od -c /tmp/u8 | head -2',
      '@start wc -c',
      '@line é',
      String.raw`@keys \x04`,
      '@start cat > /tmp/c',
      '@line a',
      '@line b',
      '@reads',
      String.raw`@keys \x03`,
      'cat /tmp/c; echo $?',
      '@start cat | wc -l',
      '@line x',
      String.raw`@keys \x03`,
      '@start { tee /tmp/d; echo after; } > /dev/null',
      '@line t',
      '@reads',
      String.raw`@keys \x03`,
      'cat /tmp/d',
      '@start wc -l > /tmp/e',
      '@line y',
      String.raw`@keys \x03`,
      'wc -c /tmp/e',
      '@start cat > /tmp/w',
      String.raw`@keys \x04`,
      'wc -c /tmp/w',
      'for p in cat tac head tail wc sort uniq od; do $p /tmp/t; done >/dev/null',
      'for p in base64 md5sum sha1sum sha256sum; do $p /tmp/t; done >/dev/null',
      'for p in sha512sum nl rev fold; do $p /tmp/t; done >/dev/null; echo $?',
      'cut -c1 /tmp/t; grep o /tmp/t; sed -n 1p /tmp/t; awk 1 /tmp/t',
      'exit',
    ],
    transcript:
      '~ # \x1b[6ncat > /tmp/t\r\none\r\ntwo\r\n~ # \x1b[6ncat /tmp/t\r\none\r\ntwo\r\n' +
      '~ # \x1b[6nwc -l\r\na\r\nb\r\n2\r\n~ # \x1b[6nsort\r\nb\r\na\r\na\r\nb\r\n' +
      '~ # \x1b[6nhead -n 1 /tmp/t; tail -n 1 /tmp/t; wc -c /tmp/t\r\none\r\ntwo\r\n8 /tmp/t\r\n' +
      '~ # \x1b[6ntee /tmp/u > /dev/null\r\nx\r\nab~ # \x1b[6ncat /tmp/u; echo\r\nx\r\nab\r\n' +
      '~ # \x1b[6ncat | wc -c\r\nabc\r\n4\r\n' +
      '~ # \x1b[6ncat > /tmp/u8\r\nhéllo\r\n~ # \x1b[6nod -c /tmp/u8 | head -2\r\n0000000   h 303 251   l   l   o  \\n\r\n0000007\r\n' +
      '~ # \x1b[6nwc -c\r\né\r\n3\r\n' +
      '~ # \x1b[6ncat > /tmp/c\r\na\r\nb\r\n^C\r\n~ # \x1b[6ncat /tmp/c; echo $?\r\na\r\nb\r\n0\r\n' +
      '~ # \x1b[6ncat | wc -l\r\nx\r\n^C\r\n~ # \x1b[6n{ tee /tmp/d; echo after; } > /dev/null\r\nt\r\n^C\r\n' +
      '~ # \x1b[6ncat /tmp/d\r\nt\r\n~ # \x1b[6nwc -l > /tmp/e\r\ny\r\n^C\r\n~ # \x1b[6nwc -c /tmp/e\r\n0 /tmp/e\r\n~ # \x1b[6ncat > /tmp/w\r\n~ # \x1b[6nwc -c /tmp/w\r\n0 /tmp/w\r\n' +
      '~ # \x1b[6nfor p in cat tac head tail wc sort uniq od; do $p /tmp/t; done >/dev/null\r\n' +
      '~ # \x1b[6nfor p in base64 md5sum sha1sum sha256sum; do $p /tmp/t; done >/dev/null\r\n' +
      '~ # \x1b[6nfor p in sha512sum nl rev fold; do $p /tmp/t; done >/dev/null; echo $?\r\n0\r\n' +
      '~ # \x1b[6ncut -c1 /tmp/t; grep o /tmp/t; sed -n 1p /tmp/t; awk 1 /tmp/t\r\no\r\nt\r\none\r\ntwo\r\none\r\none\r\ntwo\r\n' +
      '~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'keys written at once with a Ctrl-C among them: the pty drops the echo of what came before it (the line shows ^C alone) with what was typed, and what follows it goes to the next prompt',
    steps: [
      '@start cat | wc -l',
      '@reads',
      String.raw`@paste y\r\x03`,
      'echo $?',
      '@start cat',
      '@reads',
      String.raw`@write a\x03b`,
      '@until ~ # b',
      String.raw`@keys \r`,
      'echo $?',
      'exit',
    ],
    transcript:
      '~ # \x1b[6ncat | wc -l\r\n^C\r\n~ # \x1b[6necho $?\r\n130\r\n' +
      '~ # \x1b[6ncat\r\n^Cb\r\n~ # b\r\nsh: b: not found\r\n~ # \x1b[6necho $?\r\n127\r\n~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'a program reading the terminal writes as busybox’s does: cat, grep, tr, awk, nl and tee each line as it is typed, sed a line behind, uniq a run of equal lines behind, head ends once it has its lines, grep -q, -l and -m at the lines they want; grep -c at Ctrl-D; Ctrl-C keeps what grep wrote to the terminal, not to a file',
    steps: [
      '@start cat',
      '@line a',
      String.raw`@until a\r\na\r\n`,
      String.raw`@write bc\x04`,
      '@until bcbc',
      String.raw`@keys \x04`,
      '@start grep x',
      '@line ax',
      String.raw`@until ax\r\nax\r\n`,
      '@line b',
      '@line cx',
      String.raw`@until cx\r\ncx\r\n`,
      String.raw`@keys \x04`,
      '@start tr a-z A-Z',
      '@line ab',
      '@until AB',
      String.raw`@keys \x04`,
      "@start awk '{print $2}'",
      '@line p q',
      String.raw`@until p q\r\nq\r\n`,
      String.raw`@keys \x04`,
      '@start nl',
      '@line n1',
      String.raw`@until 1\tn1`,
      String.raw`@keys \x04`,
      '@start sed s/a/A/',
      '@line a1',
      '@line a2',
      '@until A1',
      '@line a3',
      '@until A2',
      String.raw`@keys \x04`,
      '@start head -n 2',
      '@line h1',
      String.raw`@until h1\r\nh1\r\n`,
      'h2',
      '@start head -c 3 > /tmp/h',
      'abcd',
      'cat /tmp/h; echo',
      '@start tee /tmp/tt',
      '@line t1',
      String.raw`@until t1\r\nt1\r\n`,
      String.raw`@keys \x04`,
      'cat /tmp/tt',
      '@start grep z',
      '@line z1',
      String.raw`@until z1\r\nz1\r\n`,
      String.raw`@keys \x03`,
      'echo $?',
      '@start grep a > /tmp/g',
      '@line a1',
      String.raw`@keys \x03`,
      'wc -c /tmp/g',
      '@start grep -c x',
      '@line x',
      String.raw`@keys \x04`,
      '@start uniq',
      '@line a',
      '@line a',
      '@line b',
      String.raw`@until b\r\na\r\n`,
      '@line b',
      '@line c',
      String.raw`@until c\r\nb\r\n`,
      String.raw`@keys \x04`,
      '@start uniq -c',
      '@line x',
      '@line x',
      '@line y',
      '@until 2 x',
      String.raw`@keys \x04`,
      '@start grep -q x',
      '@line a',
      'xb',
      'echo $?',
      '@start grep -l x',
      '@line a',
      'xb',
      'echo $?',
      '@start grep -m 1 x',
      '@line a',
      'xb',
      'echo $?',
      '@start grep -m 2 -n x',
      '@line x1',
      '@until 1:x1',
      '@line a',
      'x2',
      'echo $?',
      'exit',
    ],
    transcript:
      '~ # \x1b[6ncat\r\na\r\na\r\nbcbc~ # \x1b[6ngrep x\r\nax\r\nax\r\nb\r\ncx\r\ncx\r\n~ # \x1b[6ntr a-z A-Z\r\nab\r\nAB\r\n' +
      "~ # \x1b[6nawk '{print $2}'\r\np q\r\nq\r\n~ # \x1b[6nnl\r\nn1\r\n     1\tn1\r\n" +
      '~ # \x1b[6nsed s/a/A/\r\na1\r\na2\r\nA1\r\na3\r\nA2\r\nA3\r\n~ # \x1b[6nhead -n 2\r\nh1\r\nh1\r\nh2\r\nh2\r\n' +
      '~ # \x1b[6nhead -c 3 > /tmp/h\r\nabcd\r\n~ # \x1b[6ncat /tmp/h; echo\r\nabc\r\n' +
      '~ # \x1b[6ntee /tmp/tt\r\nt1\r\nt1\r\n~ # \x1b[6ncat /tmp/tt\r\nt1\r\n' +
      '~ # \x1b[6ngrep z\r\nz1\r\nz1\r\n^C\r\n~ # \x1b[6necho $?\r\n130\r\n' +
      '~ # \x1b[6ngrep a > /tmp/g\r\na1\r\n^C\r\n~ # \x1b[6nwc -c /tmp/g\r\n0 /tmp/g\r\n~ # \x1b[6ngrep -c x\r\nx\r\n1\r\n' +
      '~ # \x1b[6nuniq\r\na\r\na\r\nb\r\na\r\nb\r\nc\r\nb\r\nc\r\n~ # \x1b[6nuniq -c\r\nx\r\nx\r\ny\r\n      2 x\r\n      1 y\r\n' +
      '~ # \x1b[6ngrep -q x\r\na\r\nxb\r\n~ # \x1b[6necho $?\r\n0\r\n~ # \x1b[6ngrep -l x\r\na\r\nxb\r\n(standard input)\r\n~ # \x1b[6necho $?\r\n0\r\n' +
      '~ # \x1b[6ngrep -m 1 x\r\na\r\nxb\r\nxb\r\n~ # \x1b[6necho $?\r\n0\r\n~ # \x1b[6ngrep -m 2 -n x\r\nx1\r\n1:x1\r\na\r\nx2\r\n3:x2\r\n~ # \x1b[6necho $?\r\n0\r\n' +
      '~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'sed with q reads a line ahead, as busybox’s: the line after the one it quits on ends it and is gone; a q inside a command reads on',
    steps: [
      '@start sed q',
      '@line a',
      'b',
      'echo $?',
      '@start sed 2q',
      '@line a',
      '@line b',
      // The command's own line in it: `sed q` above printed the same three lines, which a wait from the start would find.
      String.raw`@until sed 2q\r\na\r\nb\r\na\r\n`,
      'c',
      '@start sed s/q/Q/',
      '@line q1',
      '@line q2',
      '@until Q1',
      String.raw`@keys \x04`,
      'exit',
    ],
    transcript:
      '~ # \x1b[6nsed q\r\na\r\nb\r\na\r\n~ # \x1b[6necho $?\r\n0\r\n~ # \x1b[6nsed 2q\r\na\r\nb\r\na\r\nc\r\nb\r\n' +
      '~ # \x1b[6nsed s/q/Q/\r\nq1\r\nq2\r\nQ1\r\nQ2\r\n~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'awk on a terminal ends at the line its exit runs on, with its status; what is typed after goes to the shell',
    steps: [
      "@start awk '{print} NR==2{exit}'",
      '@line a',
      String.raw`@until a\r\na\r\n`,
      'b',
      "@start awk 'NR==1{exit 3}'",
      'x',
      'echo $?',
      '@start awk \'/exit/{print "no"}\'',
      '@line exit',
      String.raw`@until no\r\n`,
      String.raw`@keys \x04`,
      'exit',
    ],
    transcript:
      "~ # \x1b[6nawk '{print} NR==2{exit}'\r\na\r\na\r\nb\r\nb\r\n~ # \x1b[6nawk 'NR==1{exit 3}'\r\nx\r\n~ # \x1b[6necho $?\r\n3\r\n" +
      '~ # \x1b[6nawk \'/exit/{print "no"}\'\r\nexit\r\nno\r\n~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'xargs on a terminal reads the lines typed to Ctrl-D, then runs its command on them',
    steps: [
      '@start xargs echo',
      '@line a b',
      '@line c',
      String.raw`@keys \x04`,
      '@start xargs -t',
      '@line x',
      String.raw`@keys \x04`,
      'echo $?',
      'exit',
    ],
    transcript:
      '~ # \x1b[6nxargs echo\r\na b\r\nc\r\na b c\r\n~ # \x1b[6nxargs -t\r\nx\r\necho x\r\nx\r\n' + '~ # \x1b[6necho $?\r\n0\r\n~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'xargs -n N on a terminal runs its command each time it has N arguments, and -I once a line, as the lines are typed; Ctrl-C leaves what they wrote; a failed one makes it 123',
    steps: [
      '@start xargs -n 2 echo',
      '@line a b c',
      String.raw`@until a b\r\n`,
      '@line d e',
      String.raw`@until c d\r\n`,
      String.raw`@keys \x04`,
      '@start xargs -I {} echo [{}]',
      '@line x y',
      String.raw`@until [x y]\r\n`,
      '@line z',
      String.raw`@until [z]\r\n`,
      String.raw`@keys \x04`,
      '@start xargs -n 1 -t echo',
      '@line p',
      String.raw`@until echo p\r\np\r\n`,
      String.raw`@keys \x04`,
      'echo $?',
      '@start xargs -n 1 echo > /tmp/rt-x',
      '@line a b',
      '@reads',
      String.raw`@keys \x03`,
      'cat /tmp/rt-x; rm /tmp/rt-x',
      '@start xargs -n 1 false',
      '@line a b',
      '@reads',
      String.raw`@keys \x04`,
      'echo $?',
      'exit',
    ],
    transcript:
      '~ # \x1b[6nxargs -n 2 echo\r\na b c\r\na b\r\nd e\r\nc d\r\ne\r\n' +
      '~ # \x1b[6nxargs -I {} echo [{}]\r\nx y\r\n[x y]\r\nz\r\n[z]\r\n' +
      '~ # \x1b[6nxargs -n 1 -t echo\r\np\r\necho p\r\np\r\n~ # \x1b[6necho $?\r\n0\r\n' +
      // Ctrl-C: the commands run so far have written where their output goes; a failed one makes it 123.
      '~ # \x1b[6nxargs -n 1 echo > /tmp/rt-x\r\na b\r\n^C\r\n~ # \x1b[6ncat /tmp/rt-x; rm /tmp/rt-x\r\na\r\nb\r\n' +
      '~ # \x1b[6nxargs -n 1 false\r\na b\r\n~ # \x1b[6necho $?\r\n123\r\n~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'base64 on a terminal reads a buffer at a time: with lines typed it writes and ends at a second Ctrl-D; base64 -d writes each line decoded as it is typed',
    steps: [
      '@start base64',
      '@line hello',
      String.raw`@write \x04`,
      String.raw`@keys \x04`,
      '@start base64 -d',
      '@line aGVsbG8K',
      // The decoded line after the echo: the first base64's `hello` echo is out already.
      String.raw`@until aGVsbG8K\r\nhello`,
      '@line d29ybGQ=',
      '@until world',
      String.raw`@keys \x04`,
      'base64 /etc/group',
      'exit',
    ],
    transcript:
      '~ # \x1b[6nbase64\r\nhello\r\naGVsbG8K\r\n~ # \x1b[6nbase64 -d\r\naGVsbG8K\r\nhello\r\nd29ybGQ=\r\nworld' +
      '~ # \x1b[6nbase64 /etc/group\r\ncm9vdDp4OjA6Cg==\r\n~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'the EXIT trap runs with the shell’s options: set -x traces it, $- says them',
    steps: ['set -u', `trap 'echo "[$-]"; set -x; echo t' EXIT`, 'set -x', 'exit 3'],
    transcript:
      '~ # \x1b[6nset -u\r\n~ # \x1b[6ntrap \'echo "[$-]"; set -x; echo t\' EXIT\r\n~ # \x1b[6nset -x\r\n' +
      "~ # \x1b[6nexit 3\r\n+ exit 3\r\n+ echo '[uxsmi]'\r\n[uxsmi]\r\n+ set -x\r\n+ echo t\r\nt\r\n",
    code: 3,
  },
  {
    name: 'a here-document typed at the prompt: its lines get the `> ` prompt, up to its delimiter',
    steps: ['cat > /tmp/h << EOF', 'line one', 'line $HOME', 'EOF', 'cat /tmp/h', 'cat << "X" | wc -l', 'a', 'X', 'exit'],
    transcript:
      '~ # \x1b[6ncat > /tmp/h << EOF\r\n> \x1b[6nline one\r\n> \x1b[6nline $HOME\r\n> \x1b[6nEOF\r\n' +
      '~ # \x1b[6ncat /tmp/h\r\nline one\r\nline /root\r\n~ # \x1b[6ncat << "X" | wc -l\r\n> \x1b[6na\r\n> \x1b[6nX\r\n1\r\n~ # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'sh typed at the prompt is an interactive shell of its own on the terminal: its banner, its own variables, exit N or Ctrl-D back to the first; sh -c there reads the terminal, its output going out as written',
    steps: [
      'x=outer; cd /tmp',
      'sh',
      'echo "[$x] $SHLVL $-"; pwd',
      'cd /etc; exit 3',
      'echo $? $PWD',
      'ash',
      'echo in',
      String.raw`@keys \x04`,
      'echo $?',
      `@start sh -c 'read x; echo "[$x]"'`,
      'typed',
      "@start sh -c 'wc -l'",
      '@line a',
      String.raw`@keys \x04`,
      `@start sh -c 'echo o""ne; read a; echo "[$a]"'`,
      '@until one',
      'two',
      `@start sh -c 'for i in 1 2; do echo q$i; read a; done; echo e""nd >&2'`,
      '@until q1',
      '@line x',
      '@until q2',
      'y',
      `@start sh -c 'echo t""wo >&2; read b; echo "<$b>"' 2>/dev/null`,
      'b1',
      'exit',
    ],
    transcript:
      '~ # \x1b[6nx=outer; cd /tmp\r\n/tmp # \x1b[6nsh\r\n' +
      banner +
      '/tmp # \x1b[6necho "[$x] $SHLVL $-"; pwd\r\n[] 2 smi\r\n/tmp\r\n/tmp # \x1b[6ncd /etc; exit 3\r\n/tmp # \x1b[6necho $? $PWD\r\n3 /tmp\r\n' +
      '/tmp # \x1b[6nash\r\n' +
      banner +
      '/tmp # \x1b[6necho in\r\nin\r\n/tmp # \x1b[6n\r\n/tmp # \x1b[6necho $?\r\n0\r\n' +
      "/tmp # \x1b[6nsh -c 'read x; echo \"[$x]\"'\r\ntyped\r\n[typed]\r\n/tmp # \x1b[6nsh -c 'wc -l'\r\na\r\n1\r\n" +
      '/tmp # \x1b[6nsh -c \'echo o""ne; read a; echo "[$a]"\'\r\none\r\ntwo\r\n[two]\r\n' +
      '/tmp # \x1b[6nsh -c \'for i in 1 2; do echo q$i; read a; done; echo e""nd >&2\'\r\nq1\r\nx\r\nq2\r\ny\r\nend\r\n' +
      '/tmp # \x1b[6nsh -c \'echo t""wo >&2; read b; echo "<$b>"\' 2>/dev/null\r\nb1\r\n<b1>\r\n/tmp # \x1b[6nexit\r\n',
    code: 0,
  },
  {
    name: 'ls lays names out in columns to the terminal’s width, as busybox (-s, -x, -w, -p, after a resize)',
    steps: lsSteps,
    transcript: lsTranscript,
    code: 0,
  },
];

/** The client a session runs: `lxc` (LXD 5.0.2's) or `incus` (Incus 6.0's). */
type Client = 'lxc' | 'incus';

/**
 * A command other than a bare shell on a terminal (`lxc exec c -- sh -c '…'` from a terminal): no
 * banner or prompt; what it writes goes out as each of its statements ends, its `read` reads what
 * is typed (echoed by the pty), and Ctrl-C is SIGINT to it (130).
 */
const commandSessions: Transcript[] = [
  {
    name: 'su on a terminal starts root’s shell there: its banner, prompt and lines, to exit 3',
    steps: ['@run su', 'echo hi $0 $HOME $PWD $SHLVL', String.raw`@until hi sh /root /root 1\r\n`, String.raw`@until ~ # \x1b[6n`, 'exit 3'],
    transcript: `${banner}~ # \x1b[6necho hi $0 $HOME $PWD $SHLVL\r\nhi sh /root /root 1\r\n~ # \x1b[6nexit 3\r\n`,
    code: 3,
  },
  {
    // `su -` is run by a `sh -c` (not exec'd by it) so that the driver finds the session's shell on the beds: the login shell's environment has not its mark.
    name: 'su - on a terminal starts a login shell: named -sh in $0 and its messages, in root’s home, with a fresh environment',
    steps: [`@run sh -c 'cd /tmp; su -; echo "after $?"'`, String.raw`@until ~ # \x1b[6n`, 'foo; echo "$0 $- $PWD $SHLVL $USER"', 'exit 4'],
    transcript: `${banner}~ # \x1b[6nfoo; echo "$0 $- $PWD $SHLVL $USER"\r\n-sh: foo: not found\r\n-sh smi /root 1 root\r\n~ # \x1b[6nexit 4\r\nafter 4\r\n`,
    code: 0,
  },
  {
    name: 'a shell started by sh -c on a terminal reads it as an interactive shell; the command goes on after its exit and reads the terminal again',
    steps: [
      `@run sh -c 'cd /tmp && sh; echo "after $?"; read x; echo "[$x]"'`,
      String.raw`@until /tmp # \x1b[6n`,
      'echo in $SHLVL $0',
      String.raw`@until in 2 sh\r\n`,
      String.raw`@until /tmp # \x1b[6n`,
      '@line exit 5',
      String.raw`@until after 5\r\n`,
      '@line typed',
    ],
    transcript: `${banner}/tmp # \x1b[6necho in $SHLVL $0\r\nin 2 sh\r\n/tmp # \x1b[6nexit 5\r\nafter 5\r\ntyped\r\n[typed]\r\n`,
    code: 0,
  },
  {
    name: 'env on a terminal runs its program there: a shell is an interactive one, with the variables env gives it',
    steps: ['@run env X=1 sh', 'echo "x=$X $0"', String.raw`@until x=1 sh\r\n`, String.raw`@until ~ # \x1b[6n`, 'exit 2'],
    transcript: `${banner}~ # \x1b[6necho "x=$X $0"\r\nx=1 sh\r\n~ # \x1b[6nexit 2\r\n`,
    code: 2,
  },
  {
    name: 'sh -c "exec sh" on a terminal: the shell it becomes reads it; Ctrl-C at its prompt is its editor’s, Ctrl-D ends it with the last status',
    steps: [
      '@run sh -c "exec sh"',
      String.raw`@until ~ # \x1b[6n`,
      '@keys abc',
      String.raw`@keys \x03`,
      String.raw`@until ~ # \x1b[6n`,
      'echo $?',
      String.raw`@until 130\r\n`,
      String.raw`@until ~ # \x1b[6n`,
      String.raw`@keys \x04`,
    ],
    transcript: `${banner}~ # \x1b[6nabc^C\r\n~ # \x1b[6necho $?\r\n130\r\n~ # \x1b[6n\r\n`,
    code: 0,
  },
  {
    name: 'sh -c on a terminal: read reads what is typed, -p, the output before it shown first, exit 4',
    steps: [
      `@run sh -c 'echo Name?; read n; echo "hi $n"; read -p "Age? " a; echo "[$a]"; exit 4'`,
      '@until Name?',
      '@line bob',
      '@until Age? ',
      '@line 42',
    ],
    transcript: 'Name?\r\nbob\r\nhi bob\r\nAge? 42\r\n[42]\r\n',
    code: 4,
  },
  {
    name: 'sh -c on a terminal: Ctrl-C while its program runs ends it with SIGINT, 130',
    steps: [`@run sh -c 'read x; echo "[$x]"; sleep 5; echo never'`, '@line a', '@wait', String.raw`@keys \x03`],
    transcript: 'a\r\n[a]\r\n^C',
    code: 130,
  },
  {
    name: 'a program on a terminal reads the lines typed to Ctrl-D (wc -l)',
    steps: ['@run wc -l', '@line a', '@line b', String.raw`@keys \x04`],
    transcript: 'a\r\nb\r\n2\r\n',
    code: 0,
  },
  {
    name: 'a program on a terminal writes as it reads: cat each line as it is typed',
    steps: ['@run cat', '@line a', String.raw`@until a\r\na\r\n`, '@line b', String.raw`@until b\r\nb\r\n`, String.raw`@keys \x04`],
    transcript: 'a\r\na\r\nb\r\nb\r\n',
    code: 0,
  },
  {
    name: 'sh -c on a terminal: grep writes each line as it is typed',
    steps: [`@run sh -c 'grep x; echo end'`, '@line ax', String.raw`@until ax\r\nax\r\n`, String.raw`@keys \x04`],
    transcript: 'ax\r\nax\r\nend\r\n',
    code: 0,
  },
  {
    name: 'a program on a terminal: Ctrl-C while it reads ends it with SIGINT, 130',
    steps: ['@run wc -l', '@line a', String.raw`@keys \x03`],
    transcript: 'a\r\n^C',
    code: 130,
  },
];

/** Every session with the whole transcript it shows: the shell's after its banner, then the commands'. */
const everySession: Transcript[] = [...sessions.map((s) => ({ ...s, transcript: banner + s.transcript })), ...commandSessions];

/** What pty-exec.py prints: the terminal's transcript, where in it the last step began, the client's exit code. */
interface Session {
  transcript: string;
  lastStepAt: number;
  code: number;
}

/** A session through pty-exec.py; `onHost`: the shell is a process of this host (a daemon's container), which a resize waits for. */
async function session(t: SimRemote, target: string, steps: string[], onHost = false, client: Client = 'lxc'): Promise<Session> {
  const { stdout } = await promisify(execFile)('python3', [script, client, target, ...steps], {
    env: {
      ...process.env,
      [client === 'incus' ? 'INCUS_CONF' : 'LXD_CONF']: t.lxc.confDir,
      LC_ALL: 'C',
      TERM: 'xterm',
      PTY_SHELL_ON_HOST: onHost ? '1' : '0',
      ...(onHost ? {} : { PTY_SIM_SOCKET: t.sim.socketPath }),
    },
    timeout: 90_000,
  });
  return JSON.parse(stdout) as Session;
}

/**
 * The session's transcript held to the one expected, as on the real daemon: LXD 5.0.2 and Incus 6.0
 * can drop what a process wrote just before it exited (canonical/lxd#11890: the exec's websockets
 * close before the pty is drained; it lost the bell and the newline busybox prints at Ctrl-D in 3 of
 * 10 bare sessions on a loaded machine, and a CI run lost the newline in five runs of one session
 * running). The race only ever loses the end, so a transcript that is the expected one cut short
 * after the session's last step began (what it writes as it ends) is the expected one; any other
 * difference fails, as on the simulator, where the transcript is held exactly.
 */
function expectRealSession(got: Session, expected: { transcript: string; code: number }): void {
  const cutAtItsEnd =
    got.transcript !== expected.transcript && expected.transcript.startsWith(got.transcript) && got.transcript.length >= got.lastStepAt;
  expectSession(cutAtItsEnd ? { ...got, transcript: expected.transcript } : got, expected);
}

/**
 * The session ended as expected; where its transcript differs, the failure names the first byte that
 * differs and the text around it on both sides (a run's log shows the message, not a diff).
 */
function expectSession(got: { transcript: string; code: number }, expected: { transcript: string; code: number }): void {
  const [a, b] = [got.transcript, expected.transcript];
  if (a !== b) {
    let at = 0;
    while (at < a.length && a[at] === b[at]) at++;
    const around = (text: string) => JSON.stringify(text.slice(Math.max(0, at - 80), at + 80));
    expect.fail(`the transcript (${a.length} bytes) differs from byte ${at} of ${b.length}: expected …${around(b)}…, got …${around(a)}…`);
  }
  expect(got.code).toBe(expected.code);
}

/** `stty` without a terminal (the client's stdin a file, so the exec is not interactive): busybox's error, 1. */
const noTerminal = { stdout: '1\n', stderr: 'stty: standard input: Inappropriate ioctl for device\n'.repeat(2), code: 0 };

function withoutTerminal(remote: SimRemote, target: string): Promise<{ stdout: string; stderr: string; code: number }> {
  return remote.lxc.run(['exec', target, '--', 'sh', '-c', 'stty size; stty -a; echo $?'], { input: '' });
}

/**
 * {@link withoutTerminal} on the real daemon, with the loss {@link expectRealSession} allows for: LXD
 * 5.0.2 can end an exec's streams before their output (canonical/lxd#11890; a CI run got exit 0
 * and nothing on either stream). The race only loses output, so a run whose streams are each a
 * start of what is expected, cut short, runs again (five runs at most); any other output fails.
 */
async function realWithoutTerminal(remote: SimRemote, target: string): Promise<unknown> {
  return wholeOutput(() => withoutTerminal(remote, target), noTerminal);
}

let t: SimRemote;

describeLxcClient('lxc exec -- sh on a terminal against the simulator', () => {
  beforeAll(async () => {
    t = await startSimRemote({ trustPassword: 's3cret' });
    await t.lxc.ok(['remote', 'add', 'sim', t.sim.httpsUrl!, '--password', 's3cret', '--accept-certificate']);
    t.sim.controls.addInstance({ name: 'c1' });
  });
  afterAll(async () => t?.close());

  for (const s of everySession) it(s.name, async () => expectSession(await session(t, 'sim:c1', s.steps), s), 120_000);

  it('stty without a terminal says so, as busybox', async () => {
    expect(await withoutTerminal(t, 'sim:c1')).toMatchObject(noTerminal);
  });
});

await describeBed(lxdBed, 'lxc exec -- sh on a terminal: the same transcripts from LXD 5.0.2', () => {
  const bed = lxcOnBed();

  for (const s of everySession) it(s.name, async () => expectRealSession(await session(bed.remote(), bed.target(), s.steps, true), s), 120_000);

  it('stty without a terminal says so, as busybox', async () => {
    expect(await realWithoutTerminal(bed.remote(), bed.target())).toMatchObject(noTerminal);
  });
});

/**
 * The same sessions through the `incus` client: against Incus 6.0.4 (the same busybox image) and
 * against the simulator's later revision, each transcript the one above, byte for byte.
 */
await describeBed(incusBed, 'incus exec -- sh on a terminal: the same transcripts from Incus 6.0 and the later revision of the simulator', () => {
  const bed = lxcOnBed('incus');
  let later: SimRemote;
  beforeAll(async () => {
    later = await startSimRemote({ revision: 'later' }, 'incus');
    const add = await later.lxc.run(['remote', 'add', 'sim', later.sim.controls.issueToken('pty-exec')]);
    if (add.code !== 0) throw new Error(`incus remote add exited ${add.code}: ${add.stderr}`);
    later.sim.controls.addInstance({ name: 'c1' });
  });
  afterAll(async () => later?.close());

  for (const s of everySession)
    it(
      s.name,
      async () => {
        expectSession(await session(later, 'sim:c1', s.steps, false, 'incus'), s);
        expectRealSession(await session(bed.remote(), bed.target(), s.steps, true, 'incus'), s);
      },
      240_000,
    );
});
