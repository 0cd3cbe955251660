import type { Command, ExecResult } from 'just-bash';
import { banner } from './busybox-getopt.js';
import type { ProgramHost } from './program-host.js';

const ok = (stdout = ''): ExecResult => ({ stdout, stderr: '', exitCode: 0 });
const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });

const ipcalcUsage =
  `${banner}Usage: ipcalc [-bnmphs] ADDRESS[/PREFIX] [NETMASK]\n\nCalculate and display network settings from IP address\n\n` +
  '\t-b\tBroadcast address\n\t-n\tNetwork address\n\t-m\tDefault netmask for IP\n\t-p\tPrefix for IP/NETMASK\n' +
  '\t-h\tResolved host name\n\t-s\tNo error messages\n';

const controlNames = 'NUL SOH STX ETX EOT ENQ ACK BEL BS HT NL VT FF CR SO SI DLE DC1 DC2 DC3 DC4 NAK SYN ETB CAN EM SUB ESC FS GS RS US'.split(' ');

/** busybox's `ascii`: the 128 characters in eight columns of sixteen, decimal, hex and name. */
function asciiTable(): string {
  const lines = ['Dec Hex    Dec Hex    Dec Hex  Dec Hex  Dec Hex  Dec Hex   Dec Hex   Dec Hex'];
  for (let row = 0; row < 16; row++) {
    const cells: string[] = [];
    for (let column = 0; column < 8; column++) {
      const c = row + 16 * column;
      const name = c < 32 ? controlNames[c]! : c === 127 ? 'DEL' : String.fromCharCode(c);
      const width = column === 0 || column >= 6 ? 3 : 2;
      cells.push(`${String(c).padStart(width)} ${c.toString(16).padStart(2, '0')} ${column < 2 ? name.padEnd(3) : name}`);
    }
    lines.push(cells.join('  '));
  }
  return lines.map((l) => `${l}\n`).join('');
}

/** An IPv4 address as inet_aton reads it (`1.2.3` is 1.2.0.3; parts in decimal, octal or hex), or undefined. */
function inetAton(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length > 4 || parts.some((p) => !/^(0x[0-9a-f]+|0[0-7]*|[1-9]\d*)$/i.test(p))) return undefined;
  const values = parts.map((p) => (/^0x/i.test(p) ? parseInt(p, 16) : /^0./.test(p) ? parseInt(p, 8) : Number(p)));
  const last = values.pop()!;
  if (values.some((v) => v > 255) || last >= 2 ** (8 * (4 - values.length))) return undefined;
  return values.reduce((sum, v, i) => sum + v * 2 ** (24 - 8 * i), 0) + last;
}

const dotted = (n: number): string => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
const classMask = (ip: number): number => (ip < 2 ** 31 ? 0xff000000 : ip < 0xc0000000 ? 0xffff0000 : 0xffffff00);
const maskOf = (prefix: number): number => (prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0);

/**
 * busybox's `ipcalc`: an output flag is needed (`-m -b -n -p`, in that order of lines); the netmask
 * is the prefix, the second operand, or the address's class; `-h` needs a resolver the guest does
 * not have (the lookup fails, as in the beds' containers without a network); `-s` silences errors.
 */
function ipcalc(): Command {
  return {
    name: 'ipcalc',
    async execute(args) {
      const flags = new Set<string>();
      const operands: string[] = [];
      for (const a of args) {
        if (/^-[bnmphs]+$/.test(a)) for (const c of a.slice(1)) flags.add(c);
        else operands.push(a);
      }
      const silent = flags.has('s');
      flags.delete('s');
      if (flags.size === 0 || operands.length < 1 || operands.length > 2) return fail(ipcalcUsage);
      const error = (message: string): ExecResult => fail(silent ? '' : `ipcalc: ${message}\n`);
      const [address, prefixText] = operands[0]!.split('/') as [string, string | undefined];
      const ip = inetAton(address);
      if (ip === undefined) return error(`bad IP address: ${operands[0]}`);
      let mask = classMask(ip);
      if (prefixText !== undefined) {
        const prefix = /^\d+$/.test(prefixText) ? Number(prefixText) : NaN;
        if (!(prefix >= 0 && prefix <= 32)) return error(`number ${prefixText} is not in 0..32 range`);
        mask = maskOf(prefix);
      } else if (operands[1] !== undefined) {
        const given = inetAton(operands[1]);
        if (given === undefined) return error(`bad netmask: ${operands[1]}`);
        mask = given;
      }
      const network = (ip & mask) >>> 0;
      let stdout = '';
      if (flags.has('m')) stdout += `NETMASK=${dotted(mask)}\n`;
      if (flags.has('b')) stdout += `BROADCAST=${dotted((network | ~mask) >>> 0)}\n`;
      if (flags.has('n')) stdout += `NETWORK=${dotted(network)}\n`;
      if (flags.has('p')) stdout += `PREFIX=${mask.toString(2).replace(/0/g, '').length}\n`;
      if (flags.has('h'))
        return { stdout, stderr: silent ? '' : `ipcalc: can't find hostname for ${address}: Host name lookup failure\n`, exitCode: 1 };
      return ok(stdout);
    },
  };
}

/** busybox's `dumpleases`: udhcpd's lease file, which only a running udhcpd writes (its header, then `short read`). */
function dumpleases(host: ProgramHost): Command {
  return {
    name: 'dumpleases',
    async execute(args) {
      const at = args.findIndex((a) => a === '-f');
      const file = at >= 0 ? (args[at + 1] ?? '') : '/var/lib/misc/udhcpd.leases';
      const entry = await host.fs.entry(file);
      if (entry?.type !== 'file') return fail(`dumpleases: can't open '${file}': No such file or directory\n`);
      // A lease file starts with a 64-bit time; an empty or cut one is all the guest can have.
      return { stdout: 'Mac Address       IP Address      Host Name           Expires in\n', stderr: 'dumpleases: short read\n', exitCode: 1 };
    },
  };
}

const monthNames = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** Leap years as cal counts them: Julian up to 1752, Gregorian after. */
const isLeap = (y: number): boolean => (y <= 1752 ? y % 4 === 0 : (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0);
const monthLengths = (y: number): number[] => [31, isLeap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The weekday (0 Sunday) of a date, across the eleven days Britain dropped in September 1752 (BSD's and busybox's cal.c). */
function weekday(day: number, month: number, year: number): number {
  const y = year - 1;
  const leapDays = Math.floor(y / 4) - (y > 1700 ? Math.floor(y / 100) - 17 : 0) + (y > 1600 ? Math.floor((y - 1600) / 400) : 0);
  const dayOfYear =
    monthLengths(year)
      .slice(0, month - 1)
      .reduce((a, b) => a + b, 0) + day;
  const days = y * 365 + leapDays + dayOfYear;
  const firstMissing = 639799;
  if (days < firstMissing) return (days - 1 + 6) % 7;
  if (days >= firstMissing + 11) return (days - 1 + 6 - 11) % 7;
  return 4;
}

/** One month as 6 rows of 7 cells (day of month, or of the year with -j; 0: blank), weeks from Sunday or Monday. */
function monthCells(month: number, year: number, julian: boolean, monday: boolean): number[] {
  const cells = new Array<number>(42).fill(0);
  const before = monthLengths(year)
    .slice(0, month - 1)
    .reduce((a, b) => a + b, 0);
  let at = (weekday(1, month, year) + (monday ? 6 : 0)) % 7;
  for (let d = 1; d <= monthLengths(year)[month - 1]!; d++) {
    // September 1752 goes from the 2nd to the 14th.
    if (year === 1752 && month === 9 && d > 2 && d < 14) continue;
    cells[at++] = julian ? before + d : d;
  }
  return cells;
}

const center = (text: string, width: number): string => {
  const left = Math.floor((width - text.length) / 2);
  return ' '.repeat(Math.max(0, left)) + text + ' '.repeat(Math.max(0, width - text.length - left));
};
/** busybox trims a line's trailing blanks unless the line is nothing but blanks. */
const trimmed = (line: string): string => (line.trim() === '' ? line : line.trimEnd());

/** busybox's `cal`: a month (`cal`, `cal M Y`) or a year (`cal Y`, `-y`), `-m` weeks from Monday, `-j` days of the year. */
function cal(): Command {
  return {
    name: 'cal',
    async execute(args) {
      const flags = new Set<string>();
      const numbers: string[] = [];
      for (const a of args) {
        if (/^-[jmy]+$/.test(a)) for (const c of a.slice(1)) flags.add(c);
        else numbers.push(a);
      }
      const bad = numbers.find((n) => !/^\d+$/.test(n));
      if (bad !== undefined) return fail(`cal: invalid number '${bad}'\n`);
      if (numbers.length > 2)
        return fail(
          `${banner}Usage: cal [-jmy] [[MONTH] YEAR]\n\nDisplay a calendar\n\n\t-j\tUse julian dates\n\t-m\tWeek starts on Monday\n\t-y\tDisplay the entire year\n`,
        );
      const now = new Date();
      let month = now.getUTCMonth() + 1;
      let year = now.getUTCFullYear();
      let wholeYear = flags.has('y');
      if (numbers.length === 2) month = Number(numbers[0]);
      if (numbers.length >= 1) year = Number(numbers[numbers.length - 1]);
      if (numbers.length === 1) wholeYear = true;
      if (numbers.length === 2 && (month < 1 || month > 12)) return fail(`cal: number ${month} is not in 1..12 range\n`);
      if (year < 1 || year > 9999) return fail(`cal: number ${year} is not in 1..9999 range\n`);
      const julian = flags.has('j');
      const monday = flags.has('m');
      const cell = julian ? 4 : 3;
      const names = monday ? ['Mo', 'Tu', 'We', 'Th', 'Fr', 'Sa', 'Su'] : ['Su', 'Mo', 'Tu', 'We', 'Th', 'Fr', 'Sa'];
      const header = names.map((n) => n.padStart(cell - 1)).join(' ');
      const width = 7 * cell - 1;
      const rows = (m: number): string[] => {
        const cells = monthCells(m, year, julian, monday);
        return [0, 1, 2, 3, 4, 5].map((w) =>
          cells
            .slice(w * 7, w * 7 + 7)
            .map((d) => (d ? String(d).padStart(cell - 1) : ' '.repeat(cell - 1)) + ' ')
            .join(''),
        );
      };
      if (!wholeYear) {
        const lines = [trimmed(center(`${monthNames[month - 1]} ${year}`, width)), header, ...rows(month).map(trimmed)];
        return ok(lines.map((l) => `${l}\n`).join(''));
      }
      const perRow = julian ? 2 : 3;
      const lines = [center(String(year), perRow * width + (perRow - 1) * 2), ''];
      for (let first = 1; first <= 12; first += perRow) {
        const group = Array.from({ length: perRow }, (_, i) => first + i);
        lines.push(group.map((m) => center(monthNames[m - 1]!, width)).join('  '));
        lines.push(group.map(() => header).join('  '));
        const blocks = group.map(rows);
        // A week blank in every month shows busybox's whole line buffer: 79 blanks.
        for (let w = 0; w < 6; w++)
          lines.push(trimmed(blocks.map((b) => b[w]!).join(' ')).trim() === '' ? ' '.repeat(79) : trimmed(blocks.map((b) => b[w]!).join(' ')));
      }
      return ok(lines.map((l) => `${l}\n`).join(''));
    },
  };
}

/**
 * Small busybox programs that print what they compute from their arguments: `ascii`, `cal`, `ipcalc`
 * and `dumpleases`. Output, messages and exit codes are busybox 1.35's on the LXD 5.0.2 test bed.
 */
export function busyboxTables(host: ProgramHost): Command[] {
  return [{ name: 'ascii', execute: async () => ok(asciiTable()) }, cal(), ipcalc(), dumpleases(host)];
}
