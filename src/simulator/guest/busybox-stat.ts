import { statfsSync } from 'node:fs';
import { posix } from 'node:path';
import type { Command, ExecResult } from 'just-bash';
import { banner, getopt, isResult } from './busybox-getopt.js';
import { accountNames, guestDevice, modeString, resolvePath, statusOf, symlinkLoop, type FileStatus } from './file-status.js';
import { refused } from './guest-access.js';
import type { ProgramHost } from './program-host.js';
import { dateOf } from './inode-times.js';
import { ProgramOutput } from './program-output.js';
import { errnos } from './fs-error.js';
import { deviceFilesystems } from './guest-devices.js';
import { stampWithOffset, zoneOf, type Zone } from './guest-zone.js';

const usageText =
  `Usage: stat [-ltf] [-c FMT] FILE...\n\nDisplay file (default) or filesystem status\n\n` +
  '\t-c FMT\tUse the specified format\n\t-f\tDisplay filesystem status\n\t-L\tFollow links\n\t-t\tTerse display\n\n' +
  'FMT sequences for files:\n %a\tAccess rights in octal\n %A\tAccess rights in human readable form\n' +
  ' %b\tNumber of blocks allocated (see %B)\n %B\tSize in bytes of each block reported by %b\n %d\tDevice number in decimal\n' +
  ' %D\tDevice number in hex\n %f\tRaw mode in hex\n %F\tFile type\n %g\tGroup ID\n %G\tGroup name\n %h\tNumber of hard links\n' +
  ' %i\tInode number\n %n\tFile name\n %N\tFile name, with -> TARGET if symlink\n %o\tI/O block size\n %s\tTotal size in bytes\n' +
  ' %t\tMajor device type in hex\n %T\tMinor device type in hex\n %u\tUser ID\n %U\tUser name\n %x\tTime of last access\n' +
  ' %X\tTime of last access as seconds since Epoch\n %y\tTime of last modification\n %Y\tTime of last modification as seconds since Epoch\n' +
  ' %z\tTime of last change\n %Z\tTime of last change as seconds since Epoch\n\nFMT sequences for file systems:\n' +
  ' %a\tFree blocks available to non-superuser\n %b\tTotal data blocks\n %c\tTotal file nodes\n %d\tFree file nodes\n %f\tFree blocks\n' +
  ' %i\tFile System ID in hex\n %l\tMaximum length of filenames\n %n\tFile name\n %s\tBlock size (for faster transfer)\n' +
  ' %S\tFundamental block size (for block counts)\n %t\tType in hex\n %T\tType in human readable form\n';
const usage = `${banner}${usageText}`;

const defaultFormat =
  '  File: %N\n  Size: %-10s\tBlocks: %-10b IO Block: %-6o %F\nDevice: %Dh/%dd\tInode: %-10i  Links: %h\n' +
  'Access: (%04a/%10.10A)  Uid: (%5u/%8U)   Gid: (%5g/%8G)\nAccess: %x\nModify: %y\nChange: %z';
/** stat.c's default format for a block or character device: its numbers after the links. */
const deviceFormat =
  '  File: %N\n  Size: %-10s\tBlocks: %-10b IO Block: %-6o %F\nDevice: %Dh/%dd\tInode: %-10i  Links: %-5h Device type: %t,%T\n' +
  'Access: (%04a/%10.10A)  Uid: (%5u/%8U)   Gid: (%5g/%8G)\nAccess: %x\nModify: %y\nChange: %z';
const terseFormat = '%n %s %b %f %u %g %D %i %h %t %T %X %Y %Z %o';
const fsFormat =
  '  File: "%n"\n    ID: %-8i Namelen: %-7l Type: %T\nBlock size: %-10s\nBlocks: Total: %-10b Free: %-10f Available: %a\n' +
  'Inodes: Total: %-10c Free: %d';
const fsTerseFormat = '%n %i %l %t %s %b %f %a %c %d';

/** What statfs(2) says of a filesystem, as `stat -f` prints it (and the daemons' SFTP `statvfs@openssh.com` answers). */
export interface FsStatus {
  id: string;
  type: number;
  blocks: number;
  free: number;
  avail: number;
  files: number;
  ffree: number;
}

/** busybox's human_fstype: the names of the magic numbers a container's filesystems have. */
const fsTypeNames: Record<number, string> = {
  0xef53: 'ext2/ext3',
  0x1021994: 'tmpfs',
  0x9fa0: 'proc',
  0x62656572: 'sysfs',
  0x1cd1: 'devpts',
  0x58465342: 'xfs',
  0x6969: 'nfs',
  0x73717368: 'squashfs',
};

/**
 * The filesystem a guest's path is on, as the beds' containers mount them: /proc (proc), /sys
 * (sysfs), /dev/pts (devpts) and /dev (LXD's 492 KiB tmpfs) have the beds' figures; the root is a
 * directory of the host's disk, whose figures (and type) are the host's, as `df` shows them.
 */
export function filesystemOf(path: string): FsStatus {
  const pseudo = (id: string, type: number): FsStatus => ({ id, type, blocks: 0, free: 0, avail: 0, files: 0, ffree: 0 });
  const mount = mountOf(path);
  if (mount === '/proc') return pseudo('3900000000', 0x9fa0);
  if (mount === '/sys') return pseudo('5733df9f59df630b', 0x62656572);
  if (mount === '/dev/pts') return pseudo('3b00000000', 0x1cd1);
  if (mount === '/dev') return { id: '14d926fd023a23a0', type: 0x1021994, blocks: 123, free: 122, avail: 122, files: 3085448, ffree: 3085428 };
  try {
    const st = statfsSync('/');
    const scale = st.bsize / 4096;
    return {
      id: '9808526ef6096adf',
      type: st.type,
      blocks: Math.round(st.blocks * scale),
      free: Math.round(st.bfree * scale),
      avail: Math.round(st.bavail * scale),
      files: st.files,
      ffree: st.ffree,
    };
  } catch {
    return { id: '9808526ef6096adf', type: 0xef53, blocks: 0, free: 0, avail: 0, files: 0, ffree: 0 };
  }
}

/** The mount point a guest's (physical) path is under, as the beds' containers mount them: /proc, /sys, /dev/pts, /dev or the root. */
export function mountOf(path: string): string {
  const under = (dir: string): boolean => path === dir || path.startsWith(`${dir}/`);
  return ['/proc', '/sys', '/dev/pts', '/dev'].find(under) ?? '/';
}

/** Fills a format's `%` sequences from `fields` (a letter it does not know is printed as itself), with printf's flags. */
function formatted(format: string, fields: Record<string, [string, boolean]>): string {
  return format.replace(/%([-#+ 0'\d.]*)(.?)/g, (_, flags: string, letter: string) => {
    if (letter === '%') return '%';
    if (letter === '') return '%';
    const field = fields[letter];
    return field ? pad(field[0], flags, field[1]) : pad(letter, flags, false);
  });
}

const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });

/** `%F`: what kind of file it is, in busybox's words. */
function fileType(st: FileStatus): string {
  if (st.type === 'directory') return 'directory';
  if (st.type === 'symlink') return 'symbolic link';
  if (st.type === 'fifo') return 'fifo';
  if (st.type === 'char') return 'character special file';
  return st.size === 0 ? 'regular empty file' : 'regular file';
}

/** `2026-12-03 08:08:03.865123456 +0000`, from nanoseconds since the epoch, in the guest's zone. */
function longTime(ns: bigint, zone: Zone): string {
  return stampWithOffset(zone, dateOf(ns).getTime(), `.${String(ns % 1_000_000_000n).padStart(9, '0')}`);
}

/** `%X`, `%Y`, `%Z`: whole seconds since the epoch. */
const seconds = (ns: bigint): string => String(ns / 1_000_000_000n);

/** Pads a field as printf's flags and width (and a precision, which cuts a string) say. */
function pad(value: string, flags: string, numeric: boolean): string {
  const m = /^([-#+ 0']*)(\d*)(?:\.(\d*))?$/.exec(flags);
  if (!m) return value;
  const [, flag = '', width = '', precision] = m;
  let text = precision !== undefined && !numeric ? value.slice(0, Number(precision)) : value;
  const w = Number(width || 0);
  if (flag.includes('-')) text = text.padEnd(w);
  else if (flag.includes('0') && numeric) text = text.padStart(w, '0');
  else text = text.padStart(w);
  return text;
}

/**
 * busybox 1.35's `stat` over the guest's files: `-c FMT` (every file sequence, with printf's flags
 * and widths), the default and `-t` displays, `-L`, a symlink as a symlink (`symbolic link`,
 * `'b' -> 'a'`, its target's length), a directory's 4096 bytes and its links, and busybox's messages.
 * Access, modification and change times are the inode's own ({@link GuestFs.timesOf}), to the nanosecond.
 * `-f` prints the status of the filesystem a path is on ({@link filesystemOf}), in busybox's formats.
 */
export function busyboxStat(host: ProgramHost): Command {
  return {
    name: 'stat',
    async execute(args, ctx) {
      let format: string | undefined;
      let follow = false;
      let terse = false;
      let filesystem = false;
      const p = getopt('stat', usageText, args, 'Ltfl', 'c', null, {
        onOption: (c, v) => {
          if (c === 'c' && typeof v === 'string') format = v;
          else if (c === 'L') follow = true;
          else if (c === 't') terse = true;
          else if (c === 'f') filesystem = true;
          return undefined;
        },
      });
      if (isResult(p)) return p;
      const files = p.operands;
      if (files.length === 0) return fail(usage);
      const names = await accountNames(host.fs);
      const out = new ProgramOutput();
      let exitCode = 0;
      if (filesystem) {
        for (const file of files) {
          // statfs(2) follows symlinks.
          const at = await resolvePath(host.fs.memory, posix.resolve(ctx.cwd, file), true);
          if ('errno' in at) {
            out.err(`stat: can't read file system information for '${file}': ${errnos[at.errno]}\n`);
            exitCode = 1;
            continue;
          }
          const fs = filesystemOf(at.path);
          const fields: Record<string, [string, boolean]> = {
            a: [String(fs.avail), true],
            b: [String(fs.blocks), true],
            c: [String(fs.files), true],
            d: [String(fs.ffree), true],
            f: [String(fs.free), true],
            i: [fs.id, true],
            l: ['255', true],
            n: [file, false],
            s: ['4096', true],
            S: ['4096', true],
            t: [fs.type.toString(16), true],
            T: [fsTypeNames[fs.type] ?? 'UNKNOWN', false],
          };
          out.out(`${formatted(format ?? (terse ? fsTerseFormat : fsFormat), fields)}\n`);
        }
        return out.result(exitCode);
      }
      const zone = zoneOf(ctx);
      for (const file of files) {
        const path = posix.resolve(ctx.cwd, file);
        // A trailing slash follows a final symlink, as stat(2) does.
        const st = await statusOf(host.fs, path, follow || file.endsWith('/'));
        if (!st) {
          const why = (await refused(host.fs.memory, path))
            ? errnos.EACCES
            : (await symlinkLoop(host.fs.memory, path, follow || file.endsWith('/')))
              ? errnos.ELOOP
              : errnos.ENOENT;
          out.err(`stat: can't stat '${file}': ${why}\n`);
          exitCode = 1;
          continue;
        }
        const { atime, mtime, ctime } = st.times;
        const on = st.device ? deviceFilesystems[st.device.on] : undefined;
        const device = on?.dev ?? guestDevice;
        const fields: Record<string, [string, boolean]> = {
          a: [st.perm.toString(8), true],
          A: [modeString(st), false],
          b: [String(st.blocks), true],
          B: ['512', true],
          d: [String(device), true],
          D: [device.toString(16), true],
          f: [st.mode.toString(16), true],
          F: [fileType(st), false],
          g: [String(st.gid), true],
          G: [names.group(st.gid) ?? 'UNKNOWN', false],
          h: [String(st.nlink), true],
          i: [String(st.ino), true],
          n: [file, false],
          N: [st.type === 'symlink' ? `'${file}' -> '${st.target}'` : file, false],
          o: [String(on?.blksize ?? 4096), true],
          s: [String(st.size), true],
          t: [(st.device?.major ?? 0).toString(16), true],
          T: [(st.device?.minor ?? 0).toString(16), true],
          u: [String(st.uid), true],
          U: [names.user(st.uid) ?? 'UNKNOWN', false],
          x: [longTime(atime, zone), false],
          X: [seconds(atime), true],
          y: [longTime(mtime, zone), false],
          Y: [seconds(mtime), true],
          z: [longTime(ctime, zone), false],
          Z: [seconds(ctime), true],
        };
        out.out(`${formatted(format ?? (terse ? terseFormat : st.device ? deviceFormat : defaultFormat), fields)}\n`);
      }
      return out.result(exitCode);
    },
  };
}
