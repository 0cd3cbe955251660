import type { Command, ExecResult } from 'just-bash';

/**
 * The terminal a command runs on (an interactive exec's pty): its size in character cells, which
 * the exec request, the client's window-resize messages and `stty rows|cols` change.
 */
export interface TerminalSize {
  rows: number;
  cols: number;
}

/**
 * A terminal's input as a program reading it gets it (the pty's line discipline): the shell's
 * `read` on a terminal session reads through it what is typed while its line runs.
 */
export interface TerminalInput {
  /**
   * What one read() gets, once there is some: in canonical mode a line typed with Enter (ending in
   * `\n`), what Ctrl-D pushed (`''`: the end of input); else the keys typed so far. `echo` false:
   * the keys typed meanwhile are not echoed (`read -s`). `prompt` is written first (`read -p`).
   * After `timeoutMs` with nothing to read it gets `''` (`read -t`). Undefined: Ctrl-C interrupted
   * the read.
   */
  read(mode: { canonical: boolean; echo: boolean; prompt?: string; timeoutMs?: number }): Promise<string | undefined>;
  /** Gives back what a read took beyond what its reader wanted: the next read gets it first. */
  unread(text: string): void;
  /**
   * How many Ctrl-C were typed so far: a program running when one came is dead of its SIGINT, so
   * one that reads after a count other than the one it started with reads nothing.
   */
  readonly interrupts: number;
}

/** A pty's size before the client says it (LXD 5.0.2 opens its ptys at 80x25). */
export const defaultTerminalSize: Readonly<TerminalSize> = { rows: 25, cols: 80 };

const fail = (stderr: string): ExecResult => ({ stdout: '', stderr: `stty: ${stderr}\n`, exitCode: 1 });

/** What busybox's `stty` prints of a pty in LXD's default settings (`stty`: what differs from sane). */
const specialChars =
  'intr = ^C; quit = ^\\; erase = ^?; kill = ^U; eof = ^D; eol = <undef>; eol2 = <undef>;\n' +
  'swtch = <undef>; start = ^Q; stop = ^S; susp = ^Z; rprnt = ^R; werase = ^W; lnext = ^V; flush = ^O;\n' +
  'min = 1; time = 0;\n';
const modes =
  '-parenb -parodd -cmspar cs8 hupcl -cstopb cread clocal -crtscts\n' +
  '-ignbrk -brkint -ignpar -parmrk -inpck -istrip -inlcr -igncr icrnl ixon -ixoff -iuclc -ixany\n' +
  '-imaxbel -iutf8\n' +
  'opost -olcuc -ocrnl onlcr -onocr -onlret -ofill -ofdel nl0 cr0 tab0 bs0 vt0 ff0\n' +
  'isig icanon iexten echo echoe echok -echonl -noflsh -xcase -tostop -echoprt echoctl echoke -flusho\n' +
  '-extproc\n';
const saved = '500:5:6cbf:8a3b:3:1c:7f:15:4:0:1:0:11:13:1a:0:12:f:17:16:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0\n';

/** The mode words busybox's stty takes (each also with a leading `-` where it is a flag). */
const modeWords = new Set(
  [
    ...modes.split(/\s+/).map((m) => m.replace(/^-/, '')),
    'evenp',
    'parity',
    'oddp',
    'nl',
    'ek',
    'sane',
    'cooked',
    'raw',
    'pass8',
    'litout',
    'cbreak',
    'decctlq',
    'tabs',
    'lcase',
    'LCASE',
    'crt',
    'dec',
    'cs5',
    'cs6',
    'cs7',
    'nl1',
    'cr1',
    'cr2',
    'cr3',
    'tab1',
    'tab2',
    'tab3',
    'bs1',
    'vt1',
    'ff1',
    'echoprt',
    'hup',
  ].filter(Boolean),
);
/** The line speeds busybox takes as an operand. */
const bauds = new Set(
  '0 50 75 110 134 150 200 300 600 1200 1800 2400 4800 9600 19200 38400 57600 115200 230400 460800 500000 576000 921600 1000000 1152000 1500000 2000000 2500000 3000000 3500000 4000000'.split(
    ' ',
  ),
);
/** Settings that take a value: special characters and numbers. */
const charSettings = new Set([
  'intr',
  'quit',
  'erase',
  'kill',
  'eof',
  'eol',
  'eol2',
  'swtch',
  'start',
  'stop',
  'susp',
  'rprnt',
  'werase',
  'lnext',
  'flush',
]);
const numberSettings = new Set(['rows', 'cols', 'columns', 'line', 'min', 'time', 'ispeed', 'ospeed']);

/**
 * busybox's `stty` on the exec's terminal: `stty size` (`ROWS COLS`), `stty` and `stty -a` as the
 * test beds' busybox prints a pty in LXD's settings (with the terminal's size), `-g`, `speed`, and
 * `rows N` / `cols N` / `columns N`, which resize the terminal (the shell's line editor reads the
 * new width at its next prompt). Operands are checked first, with busybox's messages (`invalid
 * argument '-x'`, `invalid number 'x'`, `rows requires an argument`); then, without a terminal (a
 * non-interactive exec), `standard input: Inappropriate ioctl for device`, 1. The other modes and
 * special characters are taken and change nothing: the simulated terminal has no line discipline
 * to change (`-echo` does not stop the echo).
 */
export function busyboxTty(terminal: TerminalSize | undefined): Command[] {
  const stty: Command = {
    name: 'stty',
    async execute(args) {
      let all = false;
      let save = false;
      let device: string | undefined;
      const operands: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '-a') all = true;
        else if (a === '-g') save = true;
        else if (a === '-F') {
          device = args[++i];
          if (device === undefined) return fail("option requires an argument -- 'F'");
        } else operands.push(a);
      }
      const sizes: Partial<TerminalSize> = {};
      const shows: string[] = [];
      for (let i = 0; i < operands.length; i++) {
        const a = operands[i]!;
        if (a === 'size' || a === 'speed') {
          shows.push(a);
          continue;
        }
        if (numberSettings.has(a) || charSettings.has(a)) {
          const value = operands[++i];
          if (value === undefined) return fail(`${a} requires an argument`);
          if (numberSettings.has(a)) {
            if (!/^\d+$/.test(value)) return fail(`invalid number '${value}'`);
            if (a === 'rows') sizes.rows = Number(value);
            if (a === 'cols' || a === 'columns') sizes.cols = Number(value);
          }
          continue;
        }
        const flag = a.startsWith('-') ? a.slice(1) : a;
        if (modeWords.has(flag) || (a === flag && bauds.has(a))) continue;
        if (a.startsWith('-') || /^\d+$/.test(a)) return fail(`invalid argument '${a}'`);
        return fail(`invalid number '${a}'`);
      }
      if ((all || save) && operands.length > 0) return fail('modes may not be set when -a or -g is used');
      if (!terminal || device !== undefined) return fail(`${device ?? 'standard input'}: Inappropriate ioctl for device`);
      if (sizes.rows !== undefined) terminal.rows = sizes.rows;
      if (sizes.cols !== undefined) terminal.cols = sizes.cols;
      let stdout = '';
      if (save) stdout = saved;
      else if (all) stdout = `speed 38400 baud; rows ${terminal.rows}; columns ${terminal.cols}; line = 0;\n${specialChars}${modes}`;
      else if (operands.length === 0) stdout = `speed 38400 baud; line = 0;\n${specialChars}-brkint -imaxbel\n`;
      for (const show of shows) stdout += show === 'size' ? `${terminal.rows} ${terminal.cols}\n` : '38400\n';
      return { stdout, stderr: '', exitCode: 0 };
    },
  };
  // busybox's tty: ttyname(0), the exec's pty (/dev/pts/1: LXC gives pts 0 to the container's console) unless stdin is fed from elsewhere; `-s` says it by the status alone.
  const tty: Command = {
    name: 'tty',
    async execute(args, ctx) {
      const silent = args.includes('-s');
      if (!terminal || String(ctx.stdin) !== '') return { stdout: silent ? '' : 'not a tty\n', stderr: '', exitCode: 1 };
      return { stdout: silent ? '' : '/dev/pts/1\n', stderr: '', exitCode: 0 };
    },
  };
  return [stty, tty];
}
