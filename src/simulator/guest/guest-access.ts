import { posix } from 'node:path';
import type { InMemoryFs } from 'just-bash';
import { fsError } from './fs-error.js';

/** A user and group a command runs as, or an entry belongs to. */
interface Ids {
  uid: number;
  gid: number;
}

/** What the checks read of a guest's filesystem: its entries and their owners. */
export interface Entries {
  memory: Pick<InMemoryFs, 'lstat' | 'stat'>;
  ownerOf(path: string): Ids;
}

/** The character devices a container's /dev has that everyone may write. */
const worldDevices = new Set(['/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom', '/dev/tty']);

/** Whether `who` has all of `want` (4 read, 2 write, 1 search) on an entry of `mode` owned by `owner`, by its owner, group or other bits. */
function permits(mode: number, owner: Ids, who: Ids, want: number): boolean {
  const shift = owner.uid === who.uid ? 6 : owner.gid === who.gid ? 3 : 0;
  return ((mode >> shift) & want) === want;
}

/**
 * The kernel's permission checks for a command that is not root (root passes them all), over the
 * guest's owners and modes: what open(2), mkdir(2), unlink(2), rename(2), link(2), chmod(2) and
 * utimes(2) refuse with EACCES ('Permission denied') or EPERM ('Operation not permitted'). Search
 * permission on the directories of a path is not checked.
 */
export class Access {
  constructor(
    private readonly fs: Entries,
    private readonly who: Ids,
  ) {}

  private get root(): boolean {
    return this.who.uid === 0;
  }

  /** open(O_WRONLY) of an existing file: its write bit (the devices everyone writes, crw-rw-rw- on the beds, are files here). */
  async write(path: string): Promise<void> {
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
