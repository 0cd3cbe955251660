import { posix } from 'node:path';
import type { Command, ExecResult } from 'just-bash';
import { banner } from './busybox-getopt.js';
import type { TerminalSize } from './busybox-tty.js';
import { dateOf } from './inode-times.js';
import { accountNames, modeString, statusOf, symlinkLoop, type FileStatus } from './file-status.js';
import { refused } from './guest-access.js';
import { ProgramOutput } from './program-output.js';
import type { ProgramHost } from './program-host.js';
import { errnos } from './fs-error.js';
import { localTime, stampWithOffset, zoneOf, type Zone } from './guest-zone.js';

const usage =
  `${banner}Usage: ls [-1AaCxdLHRFplinshrSXvctu] [-w WIDTH] [FILE]...\n\nList directory contents\n\n` +
  '\t-1\tOne column output\n\t-a\tInclude names starting with .\n\t-A\tLike -a, but exclude . and ..\n\t-x\tList by lines\n' +
  '\t-d\tList directory names, not contents\n\t-L\tFollow symlinks\n\t-H\tFollow symlinks on command line\n\t-R\tRecurse\n' +
  '\t-p\tAppend / to directory names\n\t-F\tAppend indicator (one of */=@|) to names\n\t-l\tLong format\n\t-i\tList inode numbers\n' +
  '\t-n\tList numeric UIDs and GIDs instead of names\n\t-s\tList allocated blocks\n\t-lc\tList ctime\n\t-lu\tList atime\n' +
  '\t--full-time\tList full date/time\n\t-h\tHuman readable sizes (1K 243M 2G)\n\t--group-directories-first\n\t-S\tSort by size\n' +
  '\t-X\tSort by extension\n\t-v\tSort by version\n\t-t\tSort by mtime\n\t-tc\tSort by ctime\n\t-tu\tSort by atime\n' +
  '\t-r\tReverse sort order\n\t-w N\tFormat N columns wide\n\t--color[={always,never,auto}]\n';

/** The letters busybox 1.35's `ls` takes (`k` it takes and ignores); `w` takes a width. */
const letters = new Set('1AaCxdLHRFplinshrSXvctuk');

interface Options {
  all: boolean;
  almostAll: boolean;
  asFiles: boolean;
  followAll: boolean;
  followArgs: boolean;
  recursive: boolean;
  classify?: 'F' | 'p';
  long: boolean;
  numeric: boolean;
  inode: boolean;
  blocks: boolean;
  human: boolean;
  fullTime: boolean;
  groupDirs: boolean;
  sort: 'name' | 'size' | 'time' | 'ext' | 'version';
  /** The time `-l` shows and `-t` sorts by: the mtime, or the ctime (`-c`) or atime (`-u`), the last of the two given. */
  time: 'mtime' | 'ctime' | 'atime';
  reverse: boolean;
  /** Columns down (`-C`), across (`-x`) or one name a line; a long listing is one a line whatever this says. */
  style?: 'down' | 'across' | 'one';
  width?: number;
  color?: 'always' | 'never' | 'auto';
}

/** One name to list: what it is called in the listing, the path it is read at, and its status. */
interface Node {
  name: string;
  /** The path as busybox names it in messages and headers (`./d`, `d/sub`). */
  fullname: string;
  path: string;
  status: FileStatus;
}

const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });

function parse(args: string[]): ExecResult | { operands: string[]; options: Options } {
  const o: Options = {
    all: false,
    almostAll: false,
    asFiles: false,
    followAll: false,
    followArgs: false,
    recursive: false,
    long: false,
    numeric: false,
    inode: false,
    blocks: false,
    human: false,
    fullTime: false,
    groupDirs: false,
    sort: 'name',
    time: 'mtime',
    reverse: false,
  };
  const operands: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (a === '-' || !a.startsWith('-')) {
      operands.push(a);
      continue;
    }
    if (a.startsWith('--')) {
      if (a === '--help') return { stdout: usage, stderr: '', exitCode: 0 };
      if (a === '--full-time') o.long = o.fullTime = true;
      else if (a === '--group-directories-first') o.groupDirs = true;
      else if (a === '--color' || a === '--color=always' || a === '--color=yes' || a === '--color=force') o.color = 'always';
      else if (a === '--color=never' || a === '--color=no' || a === '--color=none') o.color = 'never';
      else if (a === '--color=auto' || a === '--color=tty' || a === '--color=if-tty') o.color = 'auto';
      else return fail(`ls: unrecognized option '${a}'\n${usage}`);
      continue;
    }
    for (let j = 1; j < a.length; j++) {
      const c = a[j]!;
      if (c === 'w') {
        const value = j + 1 < a.length ? a.slice(j + 1) : args[++i];
        if (value === undefined) return fail(`ls: option requires an argument -- 'w'\n${usage}`);
        if (!/^\d+$/.test(value)) return fail(`ls: invalid number '${value}'\n`);
        o.width = Number(value);
        break;
      }
      if (!letters.has(c)) return fail(`ls: invalid option -- '${c}'\n${usage}`);
      if (c === 'a') o.all = true;
      else if (c === 'A') o.almostAll = true;
      else if (c === 'd') o.asFiles = true;
      else if (c === 'L') o.followAll = true;
      else if (c === 'H') o.followArgs = true;
      else if (c === 'R') o.recursive = true;
      else if (c === 'F' || c === 'p') o.classify = o.classify === 'F' ? 'F' : c;
      else if (c === 'l') o.long = true;
      else if (c === 'n') o.long = o.numeric = true;
      else if (c === 'i') o.inode = true;
      else if (c === 's') o.blocks = true;
      else if (c === 'h') o.human = true;
      else if (c === 'r') o.reverse = true;
      else if (c === 'S') o.sort = 'size';
      else if (c === 't') o.sort = 'time';
      else if (c === 'c') o.time = 'ctime';
      else if (c === 'u') o.time = 'atime';
      else if (c === 'X') o.sort = 'ext';
      else if (c === 'v') o.sort = 'version';
      else if (c === 'C') o.style = 'down';
      else if (c === 'x') o.style = 'across';
      else if (c === '1') o.style = 'one';
    }
  }
  // Without -l, -c and -u sort by their time (with it, they choose the time shown), as on the beds.
  if (o.time !== 'mtime' && !o.long && o.sort === 'name') o.sort = 'time';
  return { operands, options: o };
}

/**
 * busybox 1.35's `ls` over the guest's files: its long listing (`%-10s %4u %-8.8s %-8.8s %9u`,
 * a symlink as `name -> target`, a directory's 4096 bytes and links, `total` in 1K blocks), its
 * options (-1aACxdLHRFplinshrSXvtcuk -w, --full-time, --group-directories-first, --color), files
 * before directories and each directory under its `DIR:` header, and its messages and exit codes.
 * On a terminal (an interactive exec) it lays names out in columns to the terminal's width as
 * busybox does; the guest cannot tell a pipe on that terminal from the terminal itself, so a pipe
 * gets columns there too. `-c` and `-u` show the ctime and atime with `-l`, and sort by them without.
 */
export function busyboxLs(host: ProgramHost, terminal?: TerminalSize): Command {
  return {
    name: 'ls',
    async execute(args, ctx) {
      const parsed = parse(args);
      if ('exitCode' in parsed) return parsed;
      const { options: o } = parsed;
      const operands = parsed.operands.length ? parsed.operands : ['.'];
      const names = await accountNames(host.fs);
      const color = o.color === 'always' || (o.color === 'auto' && terminal !== undefined);
      // busybox reads the width off the terminal less one column; 80 less one without one.
      const width = o.width ?? (terminal ? terminal.cols : 80) - 1;
      const style = o.long ? 'one' : (o.style ?? (terminal ? 'down' : 'one'));
      const out = new ProgramOutput();
      let exitCode = 0;
      const now = Date.now();
      const zone = zoneOf(ctx);

      const nodeAt = async (fullname: string, name: string, follow: boolean): Promise<Node | undefined> => {
        const path = posix.resolve(ctx.cwd, fullname);
        const status = await statusOf(host.fs, path, follow || fullname.endsWith('/'));
        if (status && (!fullname.endsWith('/') || status.type === 'directory')) return { name, fullname, path, status };
        const why = (await refused(host.fs.memory, path))
          ? errnos.EACCES
          : (await symlinkLoop(host.fs.memory, path, follow || fullname.endsWith('/')))
            ? errnos.ELOOP
            : (await notADirectory(fullname))
              ? errnos.ENOTDIR
              : errnos.ENOENT;
        out.err(`ls: ${fullname}: ${why}\n`);
        exitCode = 1;
        return undefined;
      };
      const notADirectory = async (fullname: string): Promise<boolean> => {
        const parts = posix.resolve(ctx.cwd, fullname).split('/').filter(Boolean);
        const last = fullname.endsWith('/') ? parts.length : parts.length - 1;
        for (let k = 1; k <= last; k++) {
          const st = await statusOf(host.fs, `/${parts.slice(0, k).join('/')}`, true);
          if (!st) return false;
          if (st.type !== 'directory') return true;
        }
        return false;
      };

      const sorted = (nodes: Node[]): Node[] => {
        const byName = (a: Node, b: Node) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name));
        const key: Record<Options['sort'], (a: Node, b: Node) => number> = {
          name: () => 0,
          size: (a, b) => b.status.size - a.status.size,
          // busybox compares whole seconds.
          time: (a, b) => Number(b.status.times[o.time] / 1_000_000_000n - a.status.times[o.time] / 1_000_000_000n),
          ext: (a, b) => Buffer.compare(Buffer.from(extension(a.name)), Buffer.from(extension(b.name))),
          version: (a, b) => versionCompare(a.name, b.name),
        };
        const out = [...nodes].sort((a, b) => {
          const dirs = o.groupDirs ? Number(b.status.type === 'directory') - Number(a.status.type === 'directory') : 0;
          return dirs || key[o.sort](a, b) || byName(a, b);
        });
        return o.reverse ? out.reverse() : out;
      };

      const single = async (node: Node): Promise<string> => {
        const st = node.status;
        let line = '';
        if (o.inode) line += `${String(st.ino).padStart(7)} `;
        if (o.blocks) line += `${String(st.blocks >> 1).padStart(6)} `;
        if (o.long) {
          const user = o.numeric ? String(st.uid) : (names.user(st.uid) ?? String(st.uid));
          const group = o.numeric ? String(st.gid) : (names.group(st.gid) ?? String(st.gid));
          line += `${modeString(st).padEnd(10)} ${String(st.nlink).padStart(4)} ${user.slice(0, 8).padEnd(8)} ${group.slice(0, 8).padEnd(8)} `;
          // A device shows its numbers where a file shows its size (ls.c: `%4u, %3u `).
          if (st.device) line += `${String(st.device.major).padStart(4)}, ${String(st.device.minor).padStart(3)} `;
          else line += o.human ? `${humanSize(st.size, 1).padStart(7)} ` : `${String(st.size).padStart(9)} `;
          const time = dateOf(st.times[o.time]);
          line += `${o.fullTime ? fullTime(time, zone) : shortTime(time, now, zone)} `;
        }
        // The name's colour is the entry's own, even where the listing followed it.
        const own = color ? ((await statusOf(host.fs, node.path, false)) ?? st) : st;
        line += color ? `\x1b[${colorOf(own)}m${node.name}\x1b[m` : node.name;
        if (o.long && st.type === 'symlink') {
          const target = await statusOf(host.fs, node.path, true);
          line += ` -> ${color ? `\x1b[${target ? colorOf(target) : '0;0'}m${st.target}\x1b[m` : st.target}`;
          if (target) line += indicator(target, o.classify);
        } else line += indicator(st, o.classify);
        return line;
      };

      const show = async (nodes: Node[]): Promise<void> => {
        const cells = await Promise.all(nodes.map(single));
        if (style === 'one') {
          for (const cell of cells) out.out(`${cell}\n`);
          return;
        }
        const widest = Math.max(0, ...nodes.map((n) => [...n.name].length));
        const columnWidth = widest + 2 + (o.inode ? 8 : 0) + (o.blocks ? 5 : 0);
        let ncols = Math.floor(width / columnWidth);
        let nrows = nodes.length;
        if (ncols > 1) nrows = Math.ceil(nodes.length / ncols);
        else ncols = 1;
        for (let row = 0; row < nrows; row++) {
          let line = '';
          let column = 0;
          let nexttab = 0;
          for (let nc = 0; nc < ncols; nc++) {
            const i = style === 'across' ? row * ncols + nc : nc * nrows + row;
            if (i >= nodes.length) continue;
            if (column > 0) {
              line += ' '.repeat(Math.max(0, nexttab - column));
              column = Math.max(column, nexttab);
            }
            nexttab = column + columnWidth;
            line += cells[i]!;
            column += visibleLength(cells[i]!);
          }
          out.out(`${line}\n`);
        }
      };

      const total = (nodes: Node[]): string => {
        const kib = Math.floor((1 + nodes.reduce((sum, n) => sum + n.status.blocks, 0)) / 2);
        return o.human ? `total ${humanSize(kib * 1024, 0).padEnd(7)}\n` : `total ${kib}\n`;
      };

      const listDir = async (dir: Node, header: boolean, first: boolean): Promise<void> => {
        if (header) out.out(`${first ? '' : '\n'}${dir.fullname}:\n`);
        let entries: string[];
        try {
          entries = await host.fs.list(dir.path);
        } catch {
          out.err(`ls: can't open '${dir.fullname}': Permission denied\n`);
          if (o.long || o.blocks) out.out(total([]));
          exitCode = 1;
          return;
        }
        const shown = entries.filter((n) => !n.startsWith('.') || o.all || o.almostAll);
        if (o.all) shown.unshift('.', '..');
        const nodes: Node[] = [];
        for (const name of shown) {
          const fullname = dir.fullname.endsWith('/') ? `${dir.fullname}${name}` : `${dir.fullname}/${name}`;
          const node = await nodeAt(fullname, name, o.followAll);
          if (node) nodes.push(node);
        }
        const order = sorted(nodes);
        if (o.long || o.blocks) out.out(total(order));
        await show(order);
        if (!o.recursive) return;
        for (const sub of order) if (sub.status.type === 'directory' && sub.name !== '.' && sub.name !== '..') await listDir(sub, true, false);
      };

      // Operands are followed unless the listing shows links as links (-l, -i, -s, -F); -H and -L follow them always.
      const followArgs = o.followAll || o.followArgs || !(o.long || o.inode || o.blocks || o.classify === 'F');
      const given: Node[] = [];
      for (const operand of operands) {
        const node = await nodeAt(operand, operand, followArgs);
        if (node) given.push(node);
      }
      const files = given.filter((n) => o.asFiles || n.status.type !== 'directory');
      const dirs = given.filter((n) => !o.asFiles && n.status.type === 'directory');
      await show(sorted(files));
      let first = files.length === 0;
      for (const dir of sorted(dirs)) {
        await listDir(dir, operands.length > 1 || o.recursive, first);
        first = false;
      }
      return out.result(exitCode);
    },
  };
}

/** What `-F` (or `-p`, directories only) appends to a name. */
function indicator(st: FileStatus, classify: Options['classify']): string {
  if (!classify) return '';
  if (st.type === 'directory') return '/';
  if (classify === 'p') return '';
  if (st.type === 'symlink') return '@';
  if (st.type === 'fifo') return '|';
  return st.type === 'file' && st.perm & 0o111 ? '*' : '';
}

/** busybox's colours (ls.c's COLOR and ATTR): bold blue directories, bold cyan symlinks, purple pipes and bold purple devices, bold green executables, the rest plain. */
function colorOf(st: FileStatus): string {
  if (st.type === 'directory') return '1;34';
  if (st.type === 'symlink') return '1;36';
  if (st.type === 'fifo') return '0;35';
  if (st.type === 'char') return '1;35';
  return st.perm & 0o111 ? '1;32' : '0;0';
}

const visibleLength = (text: string): number => [...text.replace(/\x1b\[[\d;]*m/g, '')].length;

const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');

/** `Dec  3 08:07` within six months (or up to 15 minutes ahead), `Jan  2  2024` otherwise, in the guest's zone. */
function shortTime(time: Date, now: number, zone: Zone): string {
  const mtime = localTime(zone, time.getTime()).local;
  const day = `${months[mtime.getUTCMonth()]} ${String(mtime.getUTCDate()).padStart(2)}`;
  const age = (now - time.getTime()) / 1000;
  return age < (3600 * 24 * 365) / 2 && age > -15 * 60
    ? `${day} ${two(mtime.getUTCHours())}:${two(mtime.getUTCMinutes())}`
    : `${day}  ${mtime.getUTCFullYear()}`;
}

/** `--full-time`'s `2026-12-03 08:08:03 +0000`, in the guest's zone. */
function fullTime(time: Date, zone: Zone): string {
  return stampWithOffset(zone, time.getTime());
}

/**
 * busybox's make_human_readable_str: `4.0K`, `1.5M`, bytes below 1024 as they are; with a block
 * size of 0 (how `total` calls it) no fraction, rounded.
 */
export function humanSize(bytes: number, blockSize: number): string {
  if (bytes === 0) return '0';
  const units = ['', 'K', 'M', 'G', 'T', 'P', 'E'];
  let value = bytes * (blockSize > 1 ? blockSize : 1);
  let frac = 0;
  let u = 0;
  let fraction = false;
  while (value >= 1024) {
    fraction = true;
    u++;
    frac = Math.floor(((value % 1024) * 10 + 512) / 1024);
    value = Math.floor(value / 1024);
  }
  if (frac >= 10) {
    value++;
    frac = 0;
  }
  if (blockSize === 0) return `${frac >= 5 ? value + 1 : value}${units[u] || '\0'}`;
  return fraction ? `${value}.${frac}${units[u]}` : String(value);
}

function extension(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot < 0 ? '' : name.slice(dot);
}

/** strverscmp's order, roughly: runs of digits compare as numbers. */
function versionCompare(a: string, b: string): number {
  const split = (s: string) => s.match(/\d+|\D+/g) ?? [];
  const x = split(a);
  const y = split(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const p = x[i]!;
    const q = y[i]!;
    if (p === q) continue;
    if (/^\d/.test(p) && /^\d/.test(q)) return Number(p) - Number(q) || p.length - q.length;
    return Buffer.compare(Buffer.from(p), Buffer.from(q));
  }
  return x.length - y.length;
}
