import { posix } from 'node:path';
import type { FsStat, IFileSystem, InMemoryFs } from 'just-bash';
import { errnos, fsError, type Errno } from './fs-error.js';
import { isFifoMode } from './guest-pipes.js';
import { overflowId } from './guest-devices.js';
import { mayBeDescriptor } from './guest-streams.js';

/** A user and group a command runs as, or an entry belongs to. */
interface Ids {
  uid: number;
  gid: number;
  /** False when the process has no controlling terminal (an exec without one): `/dev/tty` then opens for no one (ENXIO). */
  tty?: boolean;
}

/** What the checks read of a guest's filesystem: its entries and their owners. */
export interface Entries {
  memory: Pick<InMemoryFs, 'lstat' | 'stat' | 'realpath'>;
  ownerOf(path: string): Ids;
}

/** The character devices a container's /dev has that everyone may write. */
const worldDevices = new Set(['/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom', '/dev/tty']);

/** Whether `who` has all of `want` (4 read, 2 write, 1 search) on an entry of `mode` owned by `owner`, by its owner, group or other bits. */
function permits(mode: number, owner: Ids, who: Ids, want: number): boolean {
  const shift = owner.uid === who.uid ? 6 : owner.gid === who.gid ? 3 : 0;
  return ((mode >> shift) & want) === want;
}

/** A path's directories from `/` down to the path itself. */
function lineage(path: string): string[] {
  const chain = [path];
  while (chain[0] !== '/') chain.unshift(posix.dirname(chain[0]!));
  return chain;
}

/**
 * The kernel's permission checks for a command that is not root (root passes them all), over the
 * guest's owners and modes: what open(2), mkdir(2), unlink(2), rename(2), link(2), chmod(2) and
 * utimes(2) refuse with EACCES ('Permission denied') or EPERM ('Operation not permitted'); search
 * permission on the directories leading to a path (every call on it), read permission to open a file
 * for reading and to list a directory. The user's groups are its one gid: `lxc exec --user --group`
 * gives a command no supplementary groups (the beds' /proc/self/status: `Groups:` empty).
 */
export class Access {
  constructor(
    private readonly fs: Entries,
    private readonly who: Ids,
  ) {}

  /** Whether the process has a controlling terminal (an exec with one): its standard streams are the terminal, not the host's pipes. */
  get hasTerminal(): boolean {
    return this.who.tty !== false;
  }

  private get root(): boolean {
    return this.who.uid === 0;
  }

  /**
   * Path resolution: search (x) on every directory leading to `path`, those its symlinks lead
   * through too (EACCES); a missing or non-directory component is left to the call's own error.
   */
  async search(path: string): Promise<void> {
    if (this.root) return;
    const checked = new Set<string>();
    const lexical = posix.resolve('/', path);
    if (lexical === '/') return;
    // The directories from the top down; each one's real path (where its symlinks lead) with its own directories.
    for (const dir of lineage(posix.dirname(lexical))) {
      const real = await this.fs.memory.realpath(dir).catch(() => undefined);
      if (real === undefined) return;
      for (const at of lineage(real)) {
        if (checked.has(at)) continue;
        checked.add(at);
        const st = await this.fs.memory.stat(at).catch(() => undefined);
        if (!st?.isDirectory) return;
        if (!permits(st.mode, this.fs.ownerOf(at), this.who, 1)) throw fsError('EACCES', path);
      }
    }
  }

  /** open(O_RDONLY) of a file, opendir(3) of a directory: search on the way, then the entry's read bit. */
  async read(path: string): Promise<void> {
    this.terminal(path);
    if (this.root) return;
    await this.search(path);
    if (worldDevices.has(path)) return;
    const t = await this.target(path);
    if (t && !permits(t.st.mode, this.fs.ownerOf(t.real), this.who, 4)) throw fsError('EACCES', path);
  }

  /** open(2) of `/dev/tty` by a process without a controlling terminal: ENXIO, for root too. */
  terminal(path: string): void {
    if (path === '/dev/tty' && this.who.tty === false) throw fsError('ENXIO', path, 'open');
  }

  /** chdir(2): search on the way and on the directory itself (EACCES), which root passes. */
  async enter(path: string): Promise<void> {
    if (this.root) return;
    await this.search(path);
    const t = await this.target(path);
    if (t?.st.isDirectory && !permits(t.st.mode, this.fs.ownerOf(t.real), this.who, 1)) throw fsError('EACCES', path);
  }

  /**
   * busybox test's `-r`, `-w`, `-x` (its test_eaccess, not access(2)): whether the entry `path` leads
   * to has the bit `want` (4, 2, 1) for the user, by its owner's, group's or others' bits; root may
   * read and write anything and execute what has an x bit (a directory too: `d---------` is not -x).
   * The devices everyone reads and writes (crw-rw-rw- on the beds, files here) are not -x. False
   * where the path cannot be reached.
   */
  async allows(path: string, want: number): Promise<boolean> {
    const reached = await this.search(path).then(
      () => true,
      () => false,
    );
    const t = reached ? await this.target(path) : undefined;
    if (!t) return false;
    if (worldDevices.has(path)) return want !== 1;
    if (this.root) return want !== 1 || (t.st.mode & 0o111) !== 0;
    return permits(t.st.mode, this.fs.ownerOf(t.real), this.who, want);
  }

  /** The entry `path` leads to (its symlinks followed): its real path and status; undefined when there is none. */
  private async target(path: string): Promise<{ real: string; st: FsStat } | undefined> {
    const real = await this.fs.memory.realpath(path).catch(() => undefined);
    const st = real === undefined ? undefined : await this.fs.memory.stat(real).catch(() => undefined);
    return st && real !== undefined ? { real, st } : undefined;
  }

  /** open(O_WRONLY) of an existing file: its write bit (the devices everyone writes, crw-rw-rw- on the beds, are files here). */
  async write(path: string): Promise<void> {
    this.terminal(path);
    if (this.root || worldDevices.has(path)) return;
    const st = await this.fs.memory.stat(path).catch(() => undefined);
    if (st && !st.isDirectory && !permits(st.mode, this.fs.ownerOf(path), this.who, 2)) throw fsError('EACCES', path);
  }

  /** Making, removing or renaming an entry in `dir`: write and search on it. */
  async changeIn(dir: string): Promise<void> {
    if (this.root) return;
    const st = await this.fs.memory.stat(dir).catch(() => undefined);
    if (st && !permits(st.mode, this.fs.ownerOf(dir), this.who, 3)) throw fsError('EACCES', dir);
  }

  /** unlink(2), rmdir(2), the source of rename(2): the directory's permission, then its sticky bit (the entry's or the directory's owner only). */
  async remove(path: string): Promise<void> {
    if (this.root) return;
    const dir = posix.dirname(path);
    await this.changeIn(dir);
    const st = await this.fs.memory.stat(dir).catch(() => undefined);
    if (st && st.mode & 0o1000 && this.fs.ownerOf(path).uid !== this.who.uid && this.fs.ownerOf(dir).uid !== this.who.uid)
      throw fsError('EPERM', path);
  }

  /** chmod(2), chown(2), utimes(2) with a time given: the owner only. */
  async own(path: string): Promise<void> {
    // An entry of an id the container does not map (a device bound in from the host): root's capabilities do not reach it.
    if (this.fs.ownerOf(path).uid === overflowId) throw fsError('EPERM', path);
    if (this.root) return;
    if (this.fs.ownerOf(path).uid !== this.who.uid) throw fsError('EPERM', path);
  }

  /** utimes(2) to now (touch): the owner, or whoever may write the file. */
  async touch(path: string): Promise<void> {
    if (this.root || this.fs.ownerOf(path).uid === this.who.uid) return;
    await this.write(path);
  }

  /** link(2) under protected_hardlinks: a file the user does not own must be readable and writable by them. */
  async link(existing: string, name: string): Promise<void> {
    if (this.root) return;
    await this.changeIn(posix.dirname(name));
    const st = await this.fs.memory.lstat(existing).catch(() => undefined);
    const owner = this.fs.ownerOf(existing);
    if (st && owner.uid !== this.who.uid && !(st.isFile && permits(st.mode, owner, this.who, 6))) throw fsError('EPERM', existing);
  }
}

/** Whether an error is a permission refusal (EACCES) of the guest's filesystem. */
export const isRefusal = (e: unknown): boolean => (e as { code?: string } | undefined)?.code === 'EACCES';

/**
 * Whether a call on `path` through a filesystem that checks permissions (GuestFs.as, GuestFs.seenBy)
 * fails for want of permission: its look-up (search on its directories), or with `open` set opening
 * it to read. Where a program says why a file is not there, this is `Permission denied`.
 */
export async function refused(fs: Pick<IFileSystem, 'lstat' | 'readFileBuffer'>, path: string, open = false): Promise<boolean> {
  if (await fs.lstat(path).then(() => false, isRefusal)) return true;
  // A named pipe is not read to see whether it opens: the read would wait for a writer and take what it writes.
  if (open && (await isNamedPipe(fs, path))) return false;
  return open && fs.readFileBuffer(path).then(() => false, isRefusal);
}

/** Whether `path` is a named pipe (through a final symlink, as open(2) goes). */
async function isNamedPipe(fs: Pick<IFileSystem, 'lstat'> & Partial<Pick<IFileSystem, 'stat'>>, path: string): Promise<boolean> {
  const st = await (fs.stat ?? fs.lstat).call(fs, path).catch(() => undefined);
  return st !== undefined && isFifoMode(st.mode);
}

/**
 * Why opening `path` to read fails where it is there, in strerror's words: `Permission denied` (see
 * {@link refused}), or `No such device or address` for `/dev/tty` without a controlling terminal;
 * undefined when it does not fail so.
 */
export async function openRefusal(fs: Pick<IFileSystem, 'lstat' | 'readFileBuffer'>, path: string): Promise<string | undefined> {
  if (await refused(fs, path)) return 'Permission denied';
  // A named pipe opens (its read would wait for a writer, and take what it writes); a descriptor's node opens as its descriptor does (guest-streams.ts).
  if (!mayBeDescriptor(path) && (await isNamedPipe(fs, path))) return undefined;
  // One read says both why it does not open and that it does.
  const code = await fs.readFileBuffer(path).then(
    () => undefined,
    (e: unknown) => (e as { code?: string } | undefined)?.code,
  );
  return code === 'EACCES' ? 'Permission denied' : code === 'ENXIO' ? 'No such device or address' : undefined;
}

/** The programs whose busybox names a file it cannot open `can't open 'F'` (libbb's xfopen and open_or_warn); the others say `F:`. */
const saysCantOpen = new Set(['md5sum', 'sha1sum', 'sha256sum', 'sha512sum', 'uniq', 'gzip', 'dd']);

/**
 * A just-bash program's messages about a file it could not open, in busybox's words: just-bash
 * calls a file it cannot open missing (`PROG: F: No such file or directory`) or prints node's error
 * (`PROG: ENXIO: no such device or address, open '/abs/F'`); busybox says why open(2) failed
 * (`Permission denied` for one the user may not reach or read, `No such device or address` for
 * `/dev/tty` without a terminal: {@link openRefusal}) as `PROG: F: why` or, for
 * {@link saysCantOpen}, `PROG: can't open 'F': why`, F as the command gave it (`operands`).
 */
export async function withRefusals(
  program: string,
  stderr: string,
  fs: Pick<IFileSystem, 'lstat' | 'readFileBuffer'>,
  cwd: string,
  operands: readonly string[] = [],
): Promise<string> {
  if (!stderr.includes(': No such file or directory') && !stderr.includes(`${program}: E`)) return stderr;
  // node's path is absolute, or hidden (`<path>`, just-bash's sanitising) where a file is missing: the first operand that is.
  const missing = async (): Promise<string | undefined> => {
    for (const a of operands)
      if (
        !a.startsWith('-') &&
        (await fs.lstat(posix.resolve(cwd, a)).then(
          () => false,
          () => true,
        ))
      )
        return a;
    return undefined;
  };
  const typed = async (path: string): Promise<string> =>
    path === '<path>' ? ((await missing()) ?? path) : (operands.find((a) => posix.resolve(cwd, a) === path) ?? path);
  let said = '';
  for (const line of stderr.split(/(?<=\n)/)) {
    const m = line.startsWith(`${program}: `) ? openMessage.exec(line.slice(program.length + 2)) : null;
    if (!m?.groups) {
      said += line;
      continue;
    }
    const { code, node, cant, short, end } = m.groups;
    const name = node === undefined ? (cant ?? short)! : await typed(node);
    const why =
      refusedWrite(program, posix.resolve(cwd, name)) ??
      (await openRefusal(fs, posix.resolve(cwd, name))) ??
      (code === undefined ? errnos.ENOENT : errnos[code as Errno]);
    if (why === undefined) said += line;
    else
      said +=
        cant !== undefined || saysCantOpen.has(program) ? `${program}: can't open '${name}': ${why}${end}` : `${program}: ${name}: ${why}${end}`;
  }
  return said;
}

/**
 * Why a program's write to a file it opened failed where the device refuses writes (`/dev/full`,
 * which just-bash's programs call missing): busybox's tee reports the file as its stdio leaves
 * errno after the failed flush (`tee: /dev/full: I/O error`), the others the write's ENOSPC.
 */
function refusedWrite(program: string, path: string): string | undefined {
  if (path !== '/dev/full') return undefined;
  return program === 'tee' ? 'I/O error' : errnos.ENOSPC;
}

/** What follows `PROG: ` in a just-bash message about a file it could not open: node's error, or a missing file in either wording. */
const openMessage =
  /^(?:(?<code>E[A-Z]+): [^,\n]*, (?:\w+ )?'(?<node>[^'\n]*)'|can't open '(?<cant>[^\n]*)': No such file or directory|(?<short>[^\n]*): No such file or directory)(?<end>\n?)$/;
