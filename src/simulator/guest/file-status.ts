import { posix } from 'node:path';
import type { IFileSystem } from 'just-bash';
import type { GuestFs } from './guest-fs.js';
import { isFifoMode } from './guest-pipes.js';
import { deviceAt, isCharMode, type Device } from './guest-devices.js';
import { isRefusal } from './guest-access.js';
import type { InodeTimes } from './inode-times.js';

/** What stat(2) says of a guest's entry, as `ls` and `stat` print it. */
export interface FileStatus {
  type: 'file' | 'directory' | 'symlink' | 'fifo' | 'char';
  /** Permission bits (07777), without the type. */
  perm: number;
  /** The mode with its type bits (S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO, S_IFCHR). */
  mode: number;
  /** Hard links: a file's or symlink's names (1 unless `ln` made more), 2 and one per subdirectory for a directory. */
  nlink: number;
  /** Bytes: a symlink's target's length, a directory's block (4096). */
  size: number;
  /** 512-byte blocks allocated, in 4096-byte blocks as ext4 allocates them, none for a hole (a symlink's target is kept in its inode). */
  blocks: number;
  uid: number;
  gid: number;
  ino: number;
  mtime: Date;
  /** The access, modification and change times, to the nanosecond. */
  times: InodeTimes;
  /** A symlink's target. */
  target?: string;
  /** A character device's numbers (st_rdev) and the filesystem its node is on. */
  device?: Pick<Device, 'major' | 'minor' | 'on'>;
}

/** The device every entry of a guest's filesystem is on (what `stat` prints as `fe00h/65024d`, the beds' disk). */
export const guestDevice = 0xfe00;

const typeBits = { file: 0o100000, directory: 0o040000, symlink: 0o120000, fifo: 0o010000, char: 0o020000 } as const;

/**
 * The status of `path` (absolute), following a final symlink when `follow` is set; undefined
 * when there is no entry there (or a followed symlink leads nowhere).
 */
export async function statusOf(fs: GuestFs, path: string, follow: boolean): Promise<FileStatus | undefined> {
  const memory = fs.memory;
  let real = path;
  try {
    // The path's directories may be reached through symlinks: lstat(2) follows those, the in-memory lstat does not.
    real = follow ? await memory.realpath(path) : path === '/' ? path : posix.join(await memory.realpath(posix.dirname(path)), posix.basename(path));
    const st = await memory.lstat(real);
    const type = st.isSymbolicLink ? 'symlink' : st.isDirectory ? 'directory' : isFifoMode(st.mode) ? 'fifo' : isCharMode(st.mode) ? 'char' : 'file';
    const perm = type === 'symlink' ? 0o777 : st.mode & 0o7777;
    const target = type === 'symlink' ? await memory.readlink(real) : undefined;
    const size = type === 'directory' ? 4096 : type === 'char' ? 0 : (target?.length ?? st.size);
    const blocks = type === 'symlink' || type === 'fifo' || type === 'char' ? 0 : type === 'directory' ? 8 : fs.blocksOf(st);
    let nlink = fs.linkCount(real);
    if (type === 'directory') nlink = 2 + (await fs.subdirectories(real));
    const ino = Number(/\d+$/.exec(String(st.identity ?? ''))?.[0] ?? 0) + 1_800_000;
    const times = await fs.timesOf(real);
    const device = type === 'char' ? (deviceAt(real) ?? { major: 0, minor: 0, on: 'devtmpfs' }) : undefined;
    return { type, perm, mode: typeBits[type] | perm, nlink, size, blocks, ...fs.ownerOf(real), ino, mtime: st.mtime, times, target, device };
  } catch {
    return undefined;
  }
}

/** How many symlinks a path's resolution follows before Linux gives up with ELOOP. */
const maxSymlinks = 40;

/**
 * Whether reaching `path` (absolute) follows more than 40 symlinks, as a loop (`ln -s loop loop`)
 * makes it: ELOOP, 'Too many levels of symbolic links', where a missing entry is ENOENT. A final
 * symlink counts when `follow` is set (stat(2), open(2)) or the path ends with a slash.
 */
export async function symlinkLoop(fs: Pick<IFileSystem, 'lstat' | 'readlink'>, path: string, follow: boolean): Promise<boolean> {
  const at = await resolvePath(fs, path, follow);
  return 'errno' in at && at.errno === 'ELOOP';
}

/**
 * path_resolution(7) over the guest's files: the physical path `path` (absolute) names, following
 * the symlinks among its directories and a final one when `follow` is set or the path ends with a
 * slash, or why it cannot: ENOENT, ENOTDIR, or ELOOP past 40 symlinks (a loop, or a chain through
 * `..` as `find -L` walks one). The in-memory filesystem's own resolution stops at the first symlink
 * it meets twice, which a path may rightly do.
 */
export async function resolvePath(
  fs: Pick<IFileSystem, 'lstat' | 'readlink'>,
  path: string,
  follow: boolean,
): Promise<{ path: string } | { errno: 'ENOENT' | 'ENOTDIR' | 'ELOOP' | 'EACCES' }> {
  const todo = path.split('/').filter(Boolean);
  const followLast = follow || path.endsWith('/');
  let at = '/';
  let hops = 0;
  let isDir = true;
  while (todo.length > 0) {
    const name = todo.shift()!;
    if (name === '.') continue;
    if (name === '..') {
      at = posix.dirname(at);
      continue;
    }
    const next = posix.join(at, name);
    let refused = false;
    const st = await fs.lstat(next).catch((e: unknown) => void (refused = isRefusal(e)));
    if (!st) return { errno: refused ? 'EACCES' : 'ENOENT' };
    if (st.isSymbolicLink && (todo.length > 0 || followLast)) {
      if (++hops > maxSymlinks) return { errno: 'ELOOP' };
      const target = await fs.readlink(next);
      todo.unshift(...target.split('/').filter(Boolean));
      if (target.startsWith('/')) at = '/';
      continue;
    }
    if (!st.isDirectory && todo.length > 0) return { errno: 'ENOTDIR' };
    isDir = st.isDirectory;
    at = next;
  }
  return path.endsWith('/') && !isDir ? { errno: 'ENOTDIR' } : { path: at };
}

/** A mode as `ls -l` shows it (`drwxrwxrwt`, `-rwsr-xr-x`). */
export function modeString(status: Pick<FileStatus, 'type' | 'perm'>): string {
  const { perm } = status;
  const bit = (mask: number, c: string) => (perm & mask ? c : '-');
  const special = (x: number, s: number, on: string) => (perm & s ? (perm & x ? on : on.toUpperCase()) : perm & x ? 'x' : '-');
  return (
    { file: '-', directory: 'd', symlink: 'l', fifo: 'p', char: 'c' }[status.type] +
    bit(0o400, 'r') +
    bit(0o200, 'w') +
    special(0o100, 0o4000, 's') +
    bit(0o040, 'r') +
    bit(0o020, 'w') +
    special(0o010, 0o2000, 's') +
    bit(0o004, 'r') +
    bit(0o002, 'w') +
    special(0o001, 0o1000, 't')
  );
}

/** The names of users and groups by number, from the guest's /etc/passwd and /etc/group. */
export async function accountNames(fs: GuestFs): Promise<{ user: (uid: number) => string | undefined; group: (gid: number) => string | undefined }> {
  const read = async (file: string) => {
    const text = await fs.memory.readFile(file).catch(() => '');
    const names = new Map<number, string>();
    for (const fields of text.split('\n').map((l) => l.split(':'))) {
      if (fields.length > 2 && !names.has(Number(fields[2]))) names.set(Number(fields[2]), fields[0]!);
    }
    return names;
  };
  const users = await read('/etc/passwd');
  const groups = await read('/etc/group');
  return { user: (uid) => users.get(uid), group: (gid) => groups.get(gid) };
}
