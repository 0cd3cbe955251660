import { posix } from 'node:path';
import type { FsStat, IFileSystem, InMemoryFs } from 'just-bash';
import { Access } from './guest-access.js';
import { FileBlocks } from './file-blocks.js';
import { HardLinks } from './guest-links.js';
import { isFifoMode, NamedPipes } from './guest-pipes.js';
import { deviceAt, isCharMode, overflowId, type Device } from './guest-devices.js';
import { descriptorAt, descriptorLinks, mayBeDescriptor, streamNow } from './guest-streams.js';
import { consolePaths, GuestConsole } from './guest-console.js';
import { errnoOf, fsError } from './fs-error.js';
import { clockNs, nsOf, TimeTable, dateOf, type InodeTimes } from './inode-times.js';
import type { ProgramLookup } from './guest-programs.js';

/** Who owns an entry of a guest's filesystem. */
export interface Owner {
  uid: number;
  gid: number;
}

/** A process that reads and writes the guest's files: its owner, and whether it has a controlling terminal (false: `/dev/tty` is ENXIO to it). */
export interface Process extends Owner {
  tty?: boolean;
}

/** What the files API tells about an entry (`X-LXD-type`, `-mode`, `-uid`, `-gid`, `-modified`). */
export interface GuestEntry extends Owner {
  type: 'file' | 'directory' | 'symlink';
  /** Permission bits (07777). */
  mode: number;
  size: number;
  mtime: Date;
  atime: Date;
}

/** How a file or directory is written through the files API. */
export interface WriteSpec {
  uid: number;
  gid: number;
  mode: number;
  /** Appends to the file instead of replacing it (`X-LXD-write: append`). */
  append?: boolean;
}

const root: Owner = { uid: 0, gid: 0 };

/** The devices a write goes into and stays out of: what is written to them is gone (`/dev/null` reads as empty). */
const sinks: ReadonlySet<string> = new Set(['/dev/null', '/dev/zero', '/dev/random', '/dev/urandom']);

/** The device every write to fails with ENOSPC. */
const full = '/dev/full';

/** The type bits the in-memory mode keeps above an entry's permissions (a named pipe's, a device's); 0 for a plain file. */
const keptType = (mode: number): number => (isFifoMode(mode) || isCharMode(mode) ? mode & 0o170000 : 0);

/** A status as stat(2) gives it for a character device: not a regular file, and no size (its bytes here are what a read of it gives). */
const deviceStatus = (st: FsStat): FsStat => (isCharMode(st.mode) ? { ...st, isFile: false, size: 0 } : st);

/** The umask a process starts with, until its shell's `umask` changes it. */
export const defaultUmask = 0o022;

/**
 * The mode open(O_CREAT) and mkdir(2) give a new entry: the mode the program asks for (0666 for a
 * file and 0777 for a directory unless it says otherwise) less the process's umask. Every program
 * that makes a file or a directory takes its mode from here.
 */
export function newEntryMode(requested: number, umask: number): number {
  return requested & ~umask & 0o7777;
}

/**
 * The in-memory filesystem's calls that read or look up, checked first ({@link Access}): reading a
 * file or listing a directory needs read permission on it, any look-up search on its directories;
 * a path the user cannot reach does not exist to `exists` (test -e), as stat(2) fails.
 */
function checkedReads(
  memory: InMemoryFs,
  access: Access,
  read: (path: string) => Promise<void>,
  pipe: (path: string) => Promise<Uint8Array | undefined> = async () => undefined,
): Partial<Record<keyof InMemoryFs, unknown>> {
  const reading =
    <A extends unknown[], R>(fn: (path: string, ...rest: A) => Promise<R>) =>
    async (path: string, ...rest: A): Promise<R> => {
      const through = await reopened(memory, access, path);
      if (through !== undefined) return typeof through === 'string' ? reading(fn)(through, ...rest) : (readAs(memory, fn, through, rest) as R);
      await access.read(path);
      const piped = await pipe(path);
      const result = piped ? (readAs(memory, fn, piped, rest) as R) : await fn.call(memory, path, ...rest);
      await read(path);
      return result;
    };
  const searching =
    <A extends unknown[], R>(fn: (path: string, ...rest: A) => Promise<R>) =>
    async (path: string, ...rest: A): Promise<R> => {
      await access.search(path);
      return fn.call(memory, path, ...rest);
    };
  return {
    readFile: reading(memory.readFile),
    readFileBuffer: reading(memory.readFileBuffer),
    readFileBytes: reading(memory.readFileBytes),
    readdir: reading(memory.readdir),
    readdirWithFileTypes: reading(memory.readdirWithFileTypes),
    stat: async (path: string) => deviceStatus(await searching(memory.stat)(path)),
    lstat: async (path: string) => deviceStatus(await searching(memory.lstat)(path)),
    readlink: searching(memory.readlink),
    realpath: searching(memory.realpath),
    exists: async (path: string) =>
      (await access.search(path).then(
        () => true,
        () => false,
      )) && memory.exists(path),
  };
}

/**
 * open(2) for reading of a process's descriptor again (`/dev/stdin`, `/dev/fd/0`, `/proc/self/fd/0`
 * and their kin, guest-streams.ts): the path of the file it has open, or the bytes of the pipe it
 * reads; the exec's own stream is the host's pipe, which the container's root may not open (EACCES).
 * Undefined when `path` leads to no descriptor.
 */
async function reopened(memory: InMemoryFs, access: Access, path: string): Promise<string | Uint8Array | undefined> {
  if (!mayBeDescriptor(path)) return undefined;
  const fd = descriptorAt(await memory.realpath(path).catch(() => ''));
  if (fd === undefined) return undefined;
  const stream = streamNow(fd, access.hasTerminal);
  if (stream.kind === 'host') throw fsError('EACCES', path, 'open');
  if (stream.kind === 'closed') throw fsError('ENOENT', path, 'open');
  return stream.kind === 'file' ? stream.path : Buffer.from(stream.read(), 'latin1');
}

/** What a named pipe's reader gets, as the in-memory call `fn` answers a read: text in its encoding, bytes, or a byte string. */
function readAs(memory: InMemoryFs, fn: unknown, data: Uint8Array, rest: unknown[]): unknown {
  const bytes = Buffer.from(data);
  if (fn === memory.readFileBuffer) return new Uint8Array(bytes);
  if (fn === memory.readFileBytes) return bytes.toString('latin1');
  return bytes.toString(encodingOf(rest[0]));
}

/** The bytes a write of `content` puts in a file (a string in the encoding its options name, utf8 by default). */
function bytesOf(content: unknown, options: unknown): Uint8Array {
  return typeof content === 'string' ? Buffer.from(content, encodingOf(options)) : (content as Uint8Array);
}

const encodingOf = (options: unknown): BufferEncoding =>
  ((typeof options === 'string' ? options : (options as { encoding?: string } | undefined)?.encoding) ?? 'utf8') as BufferEncoding;

/** The in-memory filesystem's reads, refusing only what {@link Access.read} refuses root: `/dev/tty` without a terminal. */
function terminalReads(memory: InMemoryFs, access: Access): Partial<Record<keyof InMemoryFs, unknown>> {
  const reading =
    <A extends unknown[], R>(fn: (path: string, ...rest: A) => Promise<R>) =>
    async (path: string, ...rest: A): Promise<R> => {
      const through = await reopened(memory, access, path);
      if (through !== undefined) return typeof through === 'string' ? reading(fn)(through, ...rest) : (readAs(memory, fn, through, rest) as R);
      await access.read(path);
      return fn.call(memory, path, ...rest);
    };
  return { readFile: reading(memory.readFile), readFileBuffer: reading(memory.readFileBuffer), readFileBytes: reading(memory.readFileBytes) };
}

/** The status of an entry with an identity (its inode: the key of its times). */
type InodeStat = FsStat & { identity: NonNullable<FsStat['identity']> };

/** A time given to utimes as an invalid Date: UTIME_OMIT, the time is left as it is. */
const omitted = (time: Date): boolean => Number.isNaN(time.getTime());

/**
 * Whether a time given to utimes is "now" (a program's `new Date()`: not a whole second, within
 * the last one) or left alone ({@link omitted}): what utimensat(2) with UTIME_NOW allows anyone who
 * may write the file, where a time given needs its owner.
 */
function toNow(time: Date): boolean {
  if (omitted(time)) return true;
  const ago = Date.now() - time.getTime();
  return time.getTime() % 1000 !== 0 && ago >= 0 && ago < 1000;
}

/** The in-memory filesystem with some of its calls replaced, the others its own. */
function overridden(memory: InMemoryFs, overrides: Partial<Record<keyof InMemoryFs, unknown>>): InMemoryFs {
  return new Proxy(memory, {
    get(target, prop, receiver) {
      if (prop in overrides) return overrides[prop as keyof InMemoryFs];
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * The root filesystem of one simulated instance: just-bash's in-memory filesystem (nothing on the
 * host's disk) plus the ownership it does not keep. Entries nobody claimed belong to root, as an
 * image's files do. The shell writes through {@link as}, so what a command creates belongs to
 * the user it runs as; the files API writes through {@link write} and {@link mkdir}.
 */
/**
 * Makes a symlink with the mtime it had (an image's, a copied one's): the patched in-memory
 * filesystem takes it as a third argument, where it dated every symlink when it was made.
 */
export function symlinkDated(memory: InMemoryFs, target: string, path: string, mtime: Date): Promise<void> {
  return (memory.symlink as (target: string, path: string, mtime: Date) => Promise<void>).call(memory, target, path, mtime);
}

/** How just-bash's stand-in for a command it registers starts. */
const commandStandIn = '#!/bin/bash\n# Built-in command: ';

export class GuestFs {
  private readonly owners = new Map<string, Owner>();
  /** The files with more than one name (`ln`), whose names show one content, mode, time and owner. */
  private readonly links = new HardLinks();
  /** The access and change times (and the nanoseconds) the in-memory filesystem does not keep. */
  private readonly times = new TimeTable();
  /** What waits at each named pipe. */
  private readonly pipes = new NamedPipes();
  /** The blocks of the files with holes (`truncate`, `dd seek=`, `fallocate`). */
  private readonly blocks = new FileBlocks();
  /** The console: what is written to `/dev/console` goes to the instance's console log. */
  readonly console = new GuestConsole();

  /** The in-memory filesystem unchecked, also under {@link seenBy}'s view: what stat(2) reads without read permission. */
  private readonly base: InMemoryFs;

  constructor(readonly memory: InMemoryFs) {
    this.base = memory;
  }

  /** How many directories the directory at `path` (physical) holds: stat(2)'s link count less 2, which needs no read permission. */
  async subdirectories(path: string): Promise<number> {
    let n = 0;
    for (const name of await this.base.readdir(path)) if ((await this.base.lstat(posix.join(path, name))).isDirectory) n++;
    return n;
  }

  /**
   * A copy of the whole filesystem (what a snapshot keeps, what a restore or a copy starts from):
   * every entry with its bytes, mode, mtime and owner; later changes to either do not show in the other.
   * Its files' blocks are as `blocks` says: `kept` as they are, `written` every block (an image's
   * tarball unpacked), or `sparse` a hole for each block of zeros (a snapshot and a copy: the beds'
   * `dir` pools copy with `rsync --sparse`).
   */
  async clone(blocks: 'kept' | 'written' | 'sparse' = 'kept'): Promise<GuestFs> {
    const Memory = this.memory.constructor as new () => InMemoryFs;
    const copy = new Memory();
    const paths = this.memory.getAllPaths().sort((a, b) => a.split('/').length - b.split('/').length || (a < b ? -1 : 1));
    const times: [string, Date][] = [];
    for (const path of paths) {
      if (path === '/') continue;
      const st = await this.memory.lstat(path);
      if (st.isSymbolicLink) await symlinkDated(copy, await this.memory.readlink(path), path, st.mtime);
      else if (st.isDirectory) {
        copy.mkdirSync(path, { recursive: true });
        await copy.chmod(path, st.mode & 0o7777);
        times.push([path, st.mtime]);
      } else {
        copy.writeFileSync(path, await this.memory.readFileBuffer(path), undefined, { mode: st.mode & 0o7777, mtime: st.mtime });
        // A named pipe and a device keep their type (the in-memory file's mode above its permissions).
        if (keptType(st.mode)) await copy.chmod(path, st.mode);
      }
    }
    const top = await this.memory.stat('/');
    await copy.chmod('/', top.mode & 0o7777);
    times.push(['/', top.mtime]);
    // Directories last: adding their entries moved their mtimes.
    for (const [path, mtime] of times) await copy.utimes(path, mtime, mtime);
    const fs = new GuestFs(copy);
    fs.pipes.made = this.pipes.made;
    const inodes: [string, string][] = [];
    for (const path of paths) {
      const [was, now] = [await this.memory.lstat(path), await copy.lstat(path)];
      if (!was.identity || !now.identity) continue;
      fs.times.set(now.identity, this.times.of(was.identity, was.mtime));
      inodes.push([was.identity, now.identity]);
      if (blocks === 'sparse' && now.isFile && !isFifoMode(now.mode)) fs.blocks.holed(now.identity, await copy.readFileBuffer(path));
    }
    if (blocks === 'kept') this.blocks.copyTo(fs.blocks, inodes);
    for (const [path, owner] of this.owners) fs.owners.set(path, owner);
    for (const [first, ...rest] of this.links.groups())
      for (const name of rest) {
        await fs.relink(first!, name);
        fs.links.add(first!, name);
      }
    return fs;
  }

  /**
   * The files of this filesystem that hold the same bytes as the file at the same path in `other`
   * take the blocks they have there: a restore on the beds (`rsync --sparse --checksum` from the
   * snapshot) leaves such a file as it is and writes the others anew, a hole for each block of zeros.
   */
  async blocksOfUnchanged(other: GuestFs): Promise<void> {
    const unchanged: [string, string][] = [];
    for (const path of this.memory.getAllPaths()) {
      const mine = await this.memory.lstat(path);
      const theirs = await other.memory.lstat(path).catch(() => undefined);
      if (!mine.isFile || !theirs?.isFile || !mine.identity || !theirs.identity || mine.size !== theirs.size || isFifoMode(mine.mode)) continue;
      const same = Buffer.from(await this.memory.readFileBuffer(path)).equals(await other.memory.readFileBuffer(path));
      if (same) unchanged.push([theirs.identity, mine.identity]);
    }
    other.blocks.copyTo(this.blocks, unchanged);
  }

  /** The other names of the file at `path` (physical), none unless `ln` gave it more. */
  linkedNames(path: string): string[] {
    return this.links.others(path);
  }

  /** How many names the entry at `path` (physical: no symlink among its directories) has; 1 unless `ln` gave it more. */
  linkCount(path: string): number {
    return this.links.count(path);
  }

  /**
   * link(2): `name` becomes one more name of the file (or symlink) at `existing`, which it does not
   * follow; both paths physical. A directory cannot be linked (EPERM), nor a name that is taken (EEXIST).
   */
  async link(existing: string, name: string): Promise<void> {
    const st = await this.memory.lstat(existing);
    if (st.isDirectory) throw fsError('EPERM', existing, 'link');
    if (await this.exists(name)) throw fsError('EEXIST', name, 'link');
    await this.relink(existing, name);
    this.links.add(existing, name);
    const owner = this.owners.get(existing);
    if (owner) this.owners.set(name, owner);
    await this.stamp(existing, 'change');
  }

  /**
   * The name at `path` stops being one of its file's names and names a new file (a new inode) holding
   * what the file holds now: a program that writes a new file and renames it over the name
   * (busybox's `sed -i`) leaves the other names with the old content, and the name a new inode.
   */
  async separate(path: string): Promise<void> {
    const real = await this.physical(path);
    if (!this.links.empty) this.links.drop(real);
    // The renamed copy is a new file (a new inode number) with the name's content, mode and time.
    const st = await this.memory.lstat(real).catch(() => undefined);
    if (!st?.isFile) return;
    const content = await this.memory.readFileBuffer(real);
    await this.memory.rm(real);
    this.memory.writeFileSync(real, content, undefined, { mode: st.mode & 0o7777, mtime: st.mtime });
  }

  /** Makes `name` a copy of the entry at `existing` sharing its identity (the in-memory filesystem's link, or a symlink's twin). */
  private async relink(existing: string, name: string): Promise<void> {
    const st = await this.memory.lstat(existing);
    if (await this.exists(name)) await this.memory.rm(name);
    if (!st.isSymbolicLink) return this.memory.link(existing, name);
    await this.memory.symlink(await this.memory.readlink(existing), name);
    await this.memory.utimes(name, st.mtime, st.mtime).catch(() => undefined);
  }

  /**
   * After a write, chmod or utimes at `path`: the file's other names show the same content, mode and
   * time (the in-memory filesystem keeps one entry per name).
   */
  private async synced(path: string): Promise<void> {
    if (this.links.empty) return;
    const real = await this.memory.realpath(path).catch(() => undefined);
    if (real === undefined) return;
    for (const other of this.links.others(real)) await this.relink(real, other);
  }

  /** The owner of a path (root unless claimed). */
  ownerOf(path: string): Owner {
    const device = deviceAt(path);
    // A descriptor's node is the exec's pipe, the host's (its own pipes and files are where it leads).
    if (descriptorAt(path) !== undefined) return { uid: overflowId, gid: overflowId };
    return this.owners.get(path) ?? (device ? { uid: device.uid, gid: device.gid } : root);
  }

  /**
   * The access, modification and change times of the entry at `path` (physical, a final symlink
   * not followed). A symlink's are kept for none of its changes: its mtime, and when it was unpacked.
   */
  async timesOf(path: string): Promise<InodeTimes> {
    const st = await this.base.lstat(path);
    return this.times.of(st.identity, st.mtime);
  }

  /** The entry at a path without following a final symlink; undefined when there is none. */
  async entry(path: string): Promise<GuestEntry | undefined> {
    let st: FsStat;
    try {
      st = await this.memory.lstat(path);
    } catch {
      return undefined;
    }
    const type = st.isSymbolicLink ? 'symlink' : st.isDirectory ? 'directory' : 'file';
    const size = type === 'symlink' ? (await this.memory.readlink(path)).length : st.size;
    const atime = dateOf((await this.timesOf(path)).atime);
    return { type, mode: type === 'symlink' ? 0o777 : st.mode & 0o7777, size, mtime: st.mtime, atime, ...this.ownerOf(path) };
  }

  /** A file's bytes, or a symlink's target; a named pipe's once a writer writes them. */
  async read(path: string): Promise<Buffer> {
    const st = await this.memory.lstat(path);
    if (st.isSymbolicLink) return Buffer.from(await this.memory.readlink(path), 'utf8');
    if (this.pipes.made && isFifoMode(st.mode) && descriptorAt(path) === undefined) return Buffer.from(await this.pipes.read(st.identity));
    const bytes = Buffer.from(await this.memory.readFileBuffer(path));
    await this.stamp(path, 'read');
    return bytes;
  }

  /** The names in a directory, in the order they were made; reading them is an access (its atime, under relatime). */
  async list(path: string): Promise<string[]> {
    const names = await this.memory.readdir(path);
    await this.stamp(path, 'read');
    return names;
  }

  /**
   * Writes (or appends to) a file; a new file takes the owner and mode given, an existing one keeps
   * its own. A write of the whole content gives the file every block of its size, an append the
   * blocks it covers.
   */
  async write(path: string, content: Uint8Array, spec: WriteSpec): Promise<void> {
    const before = await this.memory.stat(path).catch(() => undefined);
    const append = spec.append === true && before !== undefined;
    await this.put(path, content, spec, append, before);
    await this.wrote(path, append ? before : undefined);
  }

  /**
   * ftruncate(2) of the file at `path` (made as `spec` says when there is none) to `size` bytes:
   * bytes past the end are zeros from a hole, not blocks on disk.
   */
  async resize(path: string, size: number, spec: WriteSpec): Promise<void> {
    await this.reshape(path, spec, { device: 'EINVAL', syscall: 'ftruncate' }, (bytes) => {
      const after = Buffer.alloc(size);
      bytes.copy(after, 0, 0, Math.min(size, bytes.length));
      return { after, record: (inode) => this.blocks.resized(inode, bytes.length, size) };
    });
  }

  /** pwrite(2): `data` written into the file at `path` (made as `spec` says) at `offset`, a hole left before it past the end. */
  async writeAt(path: string, data: Uint8Array, offset: number, spec: WriteSpec): Promise<void> {
    await this.reshape(path, spec, undefined, (bytes) => {
      const end = offset + data.length;
      const after = Buffer.alloc(Math.max(bytes.length, end));
      bytes.copy(after);
      after.set(data, offset);
      return { after, record: (inode) => this.blocks.given(inode, bytes.length, offset, end, after.length) };
    });
  }

  /** fallocate(2): the blocks of bytes [offset, offset + length) of the file at `path` (made as `spec` says), its size grown to their end. */
  async allocate(path: string, offset: number, length: number, spec: WriteSpec): Promise<void> {
    await this.reshape(path, spec, { device: 'ENODEV', syscall: 'fallocate' }, (bytes) => {
      const after = Buffer.alloc(Math.max(bytes.length, offset + length));
      bytes.copy(after);
      return { after, record: (inode) => this.blocks.given(inode, bytes.length, offset, offset + length, after.length) };
    });
  }

  /** The blocks a write gave the file at `path`: those past `appendedTo`'s size, or (without it) every block, as a write of the whole content. */
  private async wrote(path: string, appendedTo?: FsStat): Promise<void> {
    const now = await this.base.stat(path).catch(() => undefined);
    if (!now?.identity || !now.isFile) return;
    if (appendedTo) this.blocks.given(now.identity, appendedTo.size, appendedTo.size, now.size, now.size);
    else this.blocks.filled(now.identity);
  }

  /** stat(2)'s `st_blocks` of a regular file (512-byte units): the blocks its writes gave it. */
  blocksOf(st: FsStat): number {
    return this.blocks.count(st.identity, st.size);
  }

  /**
   * Rewrites the file at `given` (made as `spec` says when missing) as `change` says, then records the
   * blocks the change gave the inode. A final symlink is followed, as open(2) follows it (a dangling
   * one makes its target). `refused`: the error a call that is not a write gives on a device
   * (ftruncate(2)'s EINVAL, fallocate(2)'s ENODEV).
   */
  private async reshape(
    given: string,
    spec: WriteSpec,
    refused: { device: 'EINVAL' | 'ENODEV'; syscall: string } | undefined,
    change: (bytes: Buffer) => { after: Buffer; record: (inode: string) => void },
  ): Promise<void> {
    const path = await this.writeTarget(given);
    const before = await this.memory.stat(path).catch(() => undefined);
    if (refused && before && isCharMode(before.mode)) throw fsError(refused.device, given, refused.syscall);
    if (this.deviceTook(path, () => change(Buffer.alloc(0)).after)) return;
    const bytes = before ? Buffer.from(await this.memory.readFileBuffer(path)) : Buffer.alloc(0);
    const { after, record } = change(bytes);
    await this.put(path, after, spec, false, before);
    const { identity } = await this.memory.stat(path);
    if (identity) record(identity);
  }

  /**
   * A write of `bytes` to `path` that a device takes, keeping nothing in a file: /dev/null, /dev/zero
   * and the random devices lose it, the console logs it, /dev/full refuses it (ENOSPC; an open that
   * writes nothing it takes), a process's descriptor opened again (`/dev/stdout`, guest-streams.ts)
   * refuses it where it is the host's pipe and otherwise hands it to where the process writes
   * (`terminal`: the exec has one). False when `path` is no such device.
   */
  private deviceTook(path: string, bytes: () => Uint8Array, terminal = false): boolean {
    if (sinks.has(path)) return true;
    const fd = descriptorAt(path);
    if (fd !== undefined) {
      // A descriptor opened again: the exec's own stream refuses the open, a pipe takes the bytes to where the program writes.
      const stream = streamNow(fd, terminal);
      if (stream.kind === 'host') throw fsError('EACCES', path, 'open');
      if (stream.kind === 'closed') throw fsError('ENOENT', path, 'open');
      if (stream.kind === 'pipe') stream.written.push(Buffer.from(bytes()).toString('utf8'));
      return true;
    }
    if (path === full) {
      if (bytes().length > 0) throw fsError('ENOSPC', path, 'write');
      return true;
    }
    if (!consolePaths.has(path)) return false;
    this.console.write(bytes());
    return true;
  }

  /** The container's device at `path` (physical), when its node is still there. */
  private async deviceNodeAt(path: string): Promise<Device | undefined> {
    const device = deviceAt(path);
    const st = device && (await this.memory.lstat(path).catch(() => undefined));
    return st && isCharMode(st.mode) ? device : undefined;
  }

  /** Writes or appends `content` at `path` (`before`: its status, undefined when missing): a new file takes the owner and mode given, an existing one keeps its own. */
  private async put(path: string, content: Uint8Array, spec: WriteSpec, append: boolean, before: FsStat | undefined): Promise<void> {
    if (this.deviceTook(path, () => content)) return;
    if (isFifoMode(spec.mode)) this.pipes.made = true;
    try {
      if (append) await this.memory.appendFile(path, content);
      else await this.memory.writeFile(path, content);
    } catch (e) {
      // The in-memory filesystem holds 1 GiB in all: past it, a write is ENOSPC, as a full disk's.
      throw errnoOf(e) === 'ENOSPC' ? fsError('ENOSPC', path, 'write') : e;
    }
    await this.stamp(path, before ? 'write' : 'made');
    if (before) {
      // The in-memory filesystem's writeFile makes a file 0644: open(2) leaves the inode's mode alone.
      await this.memory.chmod(path, before.mode);
      return this.synced(path);
    }
    await this.memory.chmod(path, spec.mode);
    this.claim(path, spec);
    await this.touchParent(path);
  }

  /** The inode of the named pipe at `path` (a final symlink followed), if there is one. */
  private async pipeAt(path: string): Promise<unknown> {
    if (!this.pipes.made) return undefined;
    const st = await this.base.stat(path).catch(() => undefined);
    return st && isFifoMode(st.mode) && descriptorAt(await this.base.realpath(path)) === undefined ? st.identity : undefined;
  }

  /** Makes a directory (its parent must exist); an existing one is left as it is. */
  async mkdir(path: string, spec: WriteSpec): Promise<void> {
    if (await this.memory.exists(path)) return;
    await this.memory.mkdir(path);
    await this.memory.chmod(path, spec.mode);
    this.claim(path, spec);
    await this.stamp(path, 'made');
    await this.touchParent(path);
  }

  /** Makes a symlink to `target`, owned as given. */
  async symlink(target: string, path: string, owner: Owner): Promise<void> {
    await this.memory.symlink(target, path);
    this.claim(path, owner);
    await this.touchParent(path);
  }

  /** Sets the mode and owner of an existing entry. */
  async setMeta(path: string, spec: WriteSpec): Promise<void> {
    const st = await this.memory.lstat(path);
    if (!st.isSymbolicLink) await this.memory.chmod(path, spec.mode);
    this.claim(path, spec);
    await this.stamp(path, 'change', false);
    await this.synced(path);
  }

  /** Removes a file, a symlink or an empty directory. */
  async remove(path: string): Promise<void> {
    const others = this.links.others(path);
    await this.memory.rm(path);
    this.forget(path);
    this.links.drop(path);
    await this.unlinked(others);
    await this.touchParent(path);
  }

  /**
   * The filesystem as a command running as `owner` sees it: entries it creates are its own, made
   * with the modes its `umask` leaves (a file 0666, a directory 0777, less the mask), entries it
   * removes or moves take their ownership along, and what it writes to one name of a file with
   * several (`ln`) the others show. A command that is not root is refused what the kernel refuses
   * it ({@link Access}: EACCES, EPERM): search on a path's directories for every call, read on a
   * file it reads and a directory it lists.
   */
  as(process: Process, umask: () => number = () => defaultUmask, programs?: ProgramLookup): IFileSystem {
    const memory = this.memory;
    const owner: Owner = { uid: process.uid, gid: process.gid };
    const access = new Access(this, process);
    const creating =
      (fn: (path: string, ...rest: never[]) => Promise<void>) =>
      async (given: string, ...rest: never[]): Promise<void> => {
        access.terminal(given);
        await access.search(given);
        // open(2) writes where a final symlink leads (the in-memory filesystem would replace the symlink).
        const path = fn === memory.mkdir ? given : await this.writeTarget(given);
        const before = await memory.stat(path).catch(() => undefined);
        const changed = before ? undefined : await this.firstMissing(path);
        if (changed) await access.changeIn(posix.dirname(changed));
        else if (fn !== memory.mkdir) await access.write(path);
        if (fn !== memory.mkdir && this.deviceTook(path, () => bytesOf(rest[0], rest[1]), access.hasTerminal)) return;
        if (before && fn !== memory.mkdir && isFifoMode(before.mode)) {
          // A named pipe: the write waits for a reader and hands it the bytes (the pipe keeps none).
          await this.pipes.write(before.identity, bytesOf(rest[0], rest[1]));
          await this.stamp(path, 'write');
          return;
        }
        await fn.call(memory, path, ...rest);
        if (fn !== memory.mkdir) await this.wrote(path, fn === memory.appendFile ? before : undefined);
        if (before) {
          // A file written over keeps its mode (the in-memory filesystem's writeFile makes it 0644).
          if (!before.isDirectory) await memory.chmod(path, before.mode);
          await this.stamp(path, 'write');
          return this.synced(path);
        }
        await this.madeWith(changed!, path, fn === memory.mkdir ? 0o777 : 0o666, umask());
        this.claim(path, owner);
        await this.stamp(path, 'made');
        if (changed) await this.touchParent(changed);
      };
    const opening =
      (fn: (path: string, ...rest: never[]) => Promise<void>) =>
      async (path: string, ...rest: never[]): Promise<void> => {
        await this.openableIn(path);
        await creating(fn)(path, ...rest);
      };
    const overrides: Partial<Record<keyof InMemoryFs, unknown>> = {
      ...checkedReads(
        memory,
        access,
        (path) => this.stamp(path, 'read'),
        async (path) => {
          const pipe = await this.pipeAt(path);
          return pipe === undefined ? undefined : this.pipes.read(pipe);
        },
      ),
      writeFile: opening(memory.writeFile),
      appendFile: opening(memory.appendFile),
      mkdir: creating(memory.mkdir),
      cp: async (src: string, dest: string, opts?: { recursive?: boolean }) => {
        await access.read(src);
        await access.search(dest);
        const existed = await memory.exists(dest);
        await (existed ? access.write(dest) : access.changeIn(posix.dirname(dest)));
        await memory.cp(src, dest, opts);
        await this.wrote(dest);
        await this.stamp(src, 'read');
        await this.stamp(dest, existed ? 'write' : 'made');
        if (existed) return this.synced(dest);
        this.claim(dest, owner);
        await this.touchParent(dest);
      },
      symlink: async (target: string, link: string) => {
        await access.search(link);
        await access.changeIn(posix.dirname(link));
        await memory.symlink(target, link);
        this.claim(link, owner);
        await this.touchParent(link);
      },
      rm: async (path: string, opts?: { recursive?: boolean; force?: boolean }) => {
        await access.search(path);
        const existed = await this.exists(path);
        const real = await this.physical(path);
        if (existed) await access.remove(path);
        // A device LXC bound in is a mount point; devpts makes and removes its own nodes.
        const device = existed ? await this.deviceNodeAt(real) : undefined;
        if (device) throw fsError(device.mounted ? 'EBUSY' : 'EPERM', path, 'rm');
        const others = this.links.others(real);
        await memory.rm(path, opts);
        this.forget(path);
        this.links.drop(real);
        await this.unlinked(others);
        if (existed) await this.touchParent(path);
      },
      mv: async (src: string, dest: string) => {
        await access.search(src);
        await access.search(dest);
        const [from, to] = [await this.physical(src), await this.physical(dest)];
        await access.remove(src);
        // A device is a mount point, or on devpts: rename(2) is EBUSY within /dev's tmpfs, EXDEV across filesystems.
        const device = await this.deviceNodeAt(from);
        if (device) {
          const sameFs = device.on === 'devtmpfs' && to.startsWith('/dev/') && !to.startsWith('/dev/pts/');
          throw fsError(sameFs ? 'EBUSY' : 'EXDEV', src, 'rename');
        }
        await ((await this.exists(dest)) ? access.remove(dest) : access.changeIn(posix.dirname(dest)));
        const times = await this.timesOf(from).catch(() => undefined);
        await memory.mv(src, dest);
        this.move(src, dest);
        this.links.move(from, to);
        // rename(2) keeps the inode and its times (the in-memory filesystem makes a moved directory anew) and changes its ctime.
        if (times) await this.restamp(to, { ...times, ctime: clockNs() }, false);
        await this.synced(to);
        await this.touchParent(src);
        await this.touchParent(dest);
      },
      link: async (existing: string, name: string) => {
        await access.search(existing);
        await access.search(name);
        await access.link(existing, name);
        await this.link(await this.physical(existing), await this.physical(name));
        await this.touchParent(name);
      },
      chmod: async (path: string, mode: number) => {
        await access.search(path);
        await access.own(path);
        const before = await memory.stat(path).catch(() => undefined);
        // The mode's type bits stay (a named pipe's, a device's: chmod(2) changes the permissions only).
        await memory.chmod(path, (before ? keptType(before.mode) : 0) | mode);
        // busybox's mkdir and touch give a new entry its mode in mkdir(2) and open(2), where the programs
        // here chmod it after: a chmod that changes nothing is not shown as a change.
        if (before && (before.mode & 0o7777) !== (mode & 0o7777)) await this.stamp(path, 'change');
        await this.synced(path);
      },
      utimes: async (path: string, atime: Date, mtime: Date) => {
        await access.search(path);
        // utimensat(2) to now needs write permission; to a time given, ownership.
        await (toNow(atime) && toNow(mtime) ? access.touch(path) : access.own(path));
        await this.utimes(path, atime, mtime);
        await this.synced(path);
      },
    };
    // just-bash writes a stand-in file for each command it registers into /bin and /usr/bin, over
    // whatever is there: the guest's programs are the image's files instead (guest-layout.ts).
    const writeFileSync = (path: string, content: unknown, ...rest: never[]): void => {
      if (typeof content === 'string' && content.startsWith(commandStandIn)) return;
      // Nor does its /dev (an empty `/dev/null`, `/dev/zero` …) replace the guest's devices.
      if (deviceAt(path)) return;
      // Nor its `/dev/stdin` … files and `/proc/self/fd` ones: the guest's are links to its descriptors (guest-streams.ts).
      if (descriptorAt(path) !== undefined || descriptorLinks.some(([link]) => link === path)) return;
      memory.writeFileSync(path, content as string, ...rest);
    };
    // The shell's cd and test -r/-w/-x ask the checks themselves (the patched just-bash: chdir(2), busybox test's test_eaccess),
    // and its look-up of a program asks `jbPrograms` (guest-programs.ts).
    return overridden(memory, { ...overrides, writeFileSync, access, jbPrograms: programs } as Partial<Record<keyof InMemoryFs, unknown>>);
  }

  /**
   * The filesystem as the programs written here (ls, stat, find, od ... over {@link GuestFs}) see it
   * when `owner` runs them: the same entries, owners and links, its `memory` refusing a user other
   * than root the reads and look-ups the kernel refuses (as {@link as} does for just-bash's).
   */
  seenBy(process: Process): GuestFs {
    if (process.uid === 0 && process.tty !== false) return this;
    const access = new Access(this, process);
    // Root is refused nothing but a terminal it does not have: its reads are the filesystem's own, unstamped, as before.
    const memory = overridden(
      this.memory,
      process.uid === 0 ? terminalReads(this.memory, access) : checkedReads(this.memory, access, (path) => this.stamp(path, 'read')),
    );
    return Object.create(this, { memory: { value: memory } }) as GuestFs;
  }

  /**
   * A file is opened for writing only in a directory that exists, as open(2) does (ENOENT when the
   * parent is missing, ENOTDIR when it is not a directory): the in-memory filesystem would make the
   * parents, so `echo x > /nosuch/f` made `/nosuch`.
   */
  private async openableIn(path: string): Promise<void> {
    const parent = await this.memory.stat(posix.dirname(path)).catch(() => undefined);
    if (parent?.isDirectory) return;
    throw fsError(parent ? 'ENOTDIR' : 'ENOENT', path, 'open');
  }

  /**
   * Gives what a command just made its mode: `path` (a file, or the directory of a mkdir) and the
   * directories made for it from `top` down, as open(O_CREAT) and mkdir(2) make them under the umask.
   */
  private async madeWith(top: string, path: string, requested: number, umask: number): Promise<void> {
    const real = await this.memory.realpath(path).catch(() => path);
    await this.memory.chmod(real, newEntryMode(requested, umask));
    for (let dir = posix.dirname(path); dir !== top && (dir + '/').startsWith(top + '/'); dir = posix.dirname(dir))
      await this.memory.chmod(dir, newEntryMode(0o777, umask)).catch(() => undefined);
    if (top !== path) await this.memory.chmod(top, newEntryMode(0o777, umask)).catch(() => undefined);
  }

  /** Where a write to `path` lands: the end of its chain of symlinks (ELOOP past 40, as Linux). */
  private async writeTarget(path: string): Promise<string> {
    let at = path;
    for (let hops = 0; hops <= 40; hops++) {
      const st = await this.memory.lstat(at).catch(() => undefined);
      if (!st?.isSymbolicLink) return at;
      at = await this.physical(posix.resolve(posix.dirname(at), await this.memory.readlink(at)));
    }
    throw fsError('ELOOP', path, 'open');
  }

  /** The path with no symlink among its directories (its last component as it is). */
  private async physical(path: string): Promise<string> {
    if (path === '/') return path;
    const dir = await this.memory.realpath(posix.dirname(path)).catch(() => posix.dirname(path));
    return posix.join(dir, posix.basename(path));
  }

  /** Whether there is an entry at `path` itself (a symlink counts, wherever it points). */
  private async exists(path: string): Promise<boolean> {
    return this.memory.lstat(path).then(
      () => true,
      () => false,
    );
  }

  /** The outermost directory of `path` that a recursive mkdir would make (`path` itself when its parent exists). */
  private async firstMissing(path: string): Promise<string> {
    let missing = path;
    for (let up = posix.dirname(path); up !== missing && !(await this.memory.exists(up)); up = posix.dirname(up)) missing = up;
    return missing;
  }

  /** A directory's mtime and ctime move when an entry is made, removed or renamed in it, as on a real filesystem. */
  private async touchParent(path: string): Promise<void> {
    await this.stamp(posix.dirname(path), 'write');
  }

  /**
   * utimes(2) on the inode `path` leads to: its atime and mtime as given, its ctime now. A time given
   * back as it was read (to the millisecond) keeps its nanoseconds, so `touch -a` leaves the mtime
   * as it was; one with milliseconds from the last second came from the clock (touch's "now") and
   * is now, to the nanosecond, as utimes(NULL) stamps all three. An invalid Date (`new Date(NaN)`)
   * leaves that time as it is, as utimensat(2)'s UTIME_OMIT does (`touch -a`, `touch -m`).
   */
  async utimes(path: string, atime: Date, mtime: Date): Promise<void> {
    // The times before: the in-memory utimes replaces the mtime they are known by.
    const st = await this.base.stat(path).catch(() => undefined);
    await this.memory.utimes(path, atime, omitted(mtime) && st ? st.mtime : mtime);
    if (!st?.identity) return;
    const was = this.times.of(st.identity, st.mtime);
    const now = clockNs();
    const given = (old: bigint, time: Date): bigint => {
      const ms = time.getTime();
      if (omitted(time) || dateOf(old).getTime() === ms) return old;
      return toNow(time) ? now : nsOf(time);
    };
    await this.restamp(path, { atime: given(was.atime, atime), mtime: given(was.mtime, mtime), ctime: now });
  }

  /**
   * Moves the times of the inode at `path` (following a final symlink unless `follow` is false) as
   * the kernel does: a read its atime (under relatime: {@link TimeTable.readMoves}), a write its mtime
   * and ctime, a change of its metadata or names its ctime; a new one has all three now.
   */
  private async stamp(path: string, what: 'read' | 'write' | 'change' | 'made', follow = true): Promise<void> {
    const st = await this.inode(path, follow);
    if (!st) return;
    const now = clockNs();
    const t = this.times.of(st.identity, st.mtime);
    if (what === 'read') {
      if (!TimeTable.readMoves(t, now)) return;
      t.atime = now;
    } else if (what === 'write') t.mtime = t.ctime = now;
    else if (what === 'change') t.ctime = now;
    else t.atime = t.mtime = t.ctime = now;
    await this.setTimes(path, st, t);
  }

  /** Gives the inode at `path` (following a final symlink unless `follow` is false) these times, its mtime in the in-memory filesystem too. */
  private async restamp(path: string, times: InodeTimes, follow = true): Promise<void> {
    const st = await this.inode(path, follow);
    if (st) await this.setTimes(path, st, times);
  }

  /** The status of the inode at `path` (a final symlink followed unless `follow` is false), when it has an identity. */
  private async inode(path: string, follow: boolean): Promise<InodeStat | undefined> {
    const st = await (follow ? this.base.stat(path) : this.base.lstat(path)).catch(() => undefined);
    return st?.identity ? (st as InodeStat) : undefined;
  }

  /** Records `times` for the inode `st` (read at `path`) and moves its mtime in the in-memory filesystem when it changed. */
  private async setTimes(path: string, st: InodeStat, times: InodeTimes): Promise<void> {
    const mtime = this.times.set(st.identity, times);
    if (mtime.getTime() !== st.mtime.getTime()) await this.base.utimes(path, mtime, mtime);
  }

  /** After a name of a file with several went away: the names left are one fewer link, a change of the inode. */
  private async unlinked(others: string[]): Promise<void> {
    if (others[0] !== undefined) await this.stamp(others[0], 'change', false);
  }

  private claim(path: string, owner: Owner): void {
    for (const name of [path, ...this.links.others(path)]) {
      if (owner.uid === 0 && owner.gid === 0) this.owners.delete(name);
      else this.owners.set(name, { uid: owner.uid, gid: owner.gid });
    }
  }

  private forget(path: string): void {
    for (const p of this.owners.keys()) if (p === path || p.startsWith(`${path}/`)) this.owners.delete(p);
  }

  private move(src: string, dest: string): void {
    this.forget(dest);
    for (const [p, o] of [...this.owners]) {
      if (p !== src && !p.startsWith(`${src}/`)) continue;
      this.owners.delete(p);
      this.owners.set(dest + p.slice(src.length), o);
    }
  }
}
