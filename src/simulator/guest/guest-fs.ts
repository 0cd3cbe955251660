import { posix } from 'node:path';
import type { FsStat, IFileSystem, InMemoryFs } from 'just-bash';

/** Who owns an entry of a guest's filesystem. */
export interface Owner {
  uid: number;
  gid: number;
}

/** What the files API tells about an entry (`X-LXD-type`, `-mode`, `-uid`, `-gid`, `-modified`). */
export interface GuestEntry extends Owner {
  type: 'file' | 'directory' | 'symlink';
  /** Permission bits (07777). */
  mode: number;
  size: number;
  mtime: Date;
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

/**
 * The root filesystem of one simulated instance: just-bash's in-memory filesystem (nothing on the
 * host's disk) plus the ownership it does not keep. Entries nobody claimed belong to root, as an
 * image's files do. The shell writes through {@link as}, so what a command creates belongs to
 * the user it runs as; the files API writes through {@link write} and {@link mkdir}.
 */
export class GuestFs {
  private readonly owners = new Map<string, Owner>();

  constructor(readonly memory: InMemoryFs) {}

  /**
   * A copy of the whole filesystem (what a snapshot keeps, what a restore or a copy starts from):
   * every entry with its bytes, mode, mtime and owner; later changes to either do not show in the other.
   */
  async clone(): Promise<GuestFs> {
    const Memory = this.memory.constructor as new () => InMemoryFs;
    const copy = new Memory();
    const paths = this.memory.getAllPaths().sort((a, b) => a.split('/').length - b.split('/').length || (a < b ? -1 : 1));
    const times: [string, Date][] = [];
    for (const path of paths) {
      if (path === '/') continue;
      const st = await this.memory.lstat(path);
      if (st.isSymbolicLink) await copy.symlink(await this.memory.readlink(path), path);
      else if (st.isDirectory) {
        copy.mkdirSync(path, { recursive: true });
        await copy.chmod(path, st.mode & 0o7777);
        times.push([path, st.mtime]);
      } else copy.writeFileSync(path, await this.memory.readFileBuffer(path), undefined, { mode: st.mode & 0o7777, mtime: st.mtime });
    }
    const top = await this.memory.stat('/');
    await copy.chmod('/', top.mode & 0o7777);
    times.push(['/', top.mtime]);
    // Directories last: adding their entries moved their mtimes.
    for (const [path, mtime] of times) await copy.utimes(path, mtime, mtime);
    const fs = new GuestFs(copy);
    for (const [path, owner] of this.owners) fs.owners.set(path, owner);
    return fs;
  }

  /** The owner of a path (root unless claimed). */
  ownerOf(path: string): Owner {
    return this.owners.get(path) ?? root;
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
    return { type, mode: type === 'symlink' ? 0o777 : st.mode & 0o7777, size, mtime: st.mtime, ...this.ownerOf(path) };
  }

  /** A file's bytes, or a symlink's target. */
  async read(path: string): Promise<Buffer> {
    const st = await this.memory.lstat(path);
    if (st.isSymbolicLink) return Buffer.from(await this.memory.readlink(path), 'utf8');
    return Buffer.from(await this.memory.readFileBuffer(path));
  }

  /** The names in a directory, in the order they were made. */
  list(path: string): Promise<string[]> {
    return this.memory.readdir(path);
  }

  /** Writes (or appends to) a file; a new file takes the owner and mode given, an existing one keeps its own. */
  async write(path: string, content: Uint8Array, spec: WriteSpec): Promise<void> {
    const existed = await this.memory.exists(path);
    if (spec.append && existed) await this.memory.appendFile(path, content);
    else await this.memory.writeFile(path, content);
    if (existed) return;
    await this.memory.chmod(path, spec.mode);
    this.claim(path, spec);
  }

  /** Makes a directory (its parent must exist); an existing one is left as it is. */
  async mkdir(path: string, spec: WriteSpec): Promise<void> {
    if (await this.memory.exists(path)) return;
    await this.memory.mkdir(path);
    await this.memory.chmod(path, spec.mode);
    this.claim(path, spec);
  }

  /** Makes a symlink to `target`, owned as given. */
  async symlink(target: string, path: string, owner: Owner): Promise<void> {
    await this.memory.symlink(target, path);
    this.claim(path, owner);
  }

  /** Sets the mode and owner of an existing entry. */
  async setMeta(path: string, spec: WriteSpec): Promise<void> {
    const st = await this.memory.lstat(path);
    if (!st.isSymbolicLink) await this.memory.chmod(path, spec.mode);
    this.claim(path, spec);
  }

  /** Removes a file, a symlink or an empty directory. */
  async remove(path: string): Promise<void> {
    await this.memory.rm(path);
    this.forget(path);
  }

  /**
   * The filesystem as a command running as `owner` sees it: entries it creates are its own,
   * entries it removes or moves take their ownership along.
   */
  as(owner: Owner): IFileSystem {
    const memory = this.memory;
    const creating =
      (fn: (path: string, ...rest: never[]) => Promise<void>) =>
      async (path: string, ...rest: never[]): Promise<void> => {
        const existed = await memory.exists(path);
        const changed = existed ? undefined : await this.firstMissing(path);
        await fn.call(memory, path, ...rest);
        if (existed) return;
        this.claim(path, owner);
        if (changed) await this.touchParent(changed);
      };
    const opening =
      (fn: (path: string, ...rest: never[]) => Promise<void>) =>
      async (path: string, ...rest: never[]): Promise<void> => {
        await this.openableIn(path);
        await creating(fn)(path, ...rest);
      };
    const overrides: Partial<Record<keyof InMemoryFs, unknown>> = {
      writeFile: opening(memory.writeFile),
      appendFile: opening(memory.appendFile),
      mkdir: creating(memory.mkdir),
      cp: async (src: string, dest: string, opts?: { recursive?: boolean }) => {
        const existed = await memory.exists(dest);
        await memory.cp(src, dest, opts);
        if (existed) return;
        this.claim(dest, owner);
        await this.touchParent(dest);
      },
      symlink: async (target: string, link: string) => {
        await memory.symlink(target, link);
        this.claim(link, owner);
        await this.touchParent(link);
      },
      rm: async (path: string, opts?: { recursive?: boolean; force?: boolean }) => {
        const existed = await this.exists(path);
        await memory.rm(path, opts);
        this.forget(path);
        if (existed) await this.touchParent(path);
      },
      mv: async (src: string, dest: string) => {
        await memory.mv(src, dest);
        this.move(src, dest);
        await this.touchParent(src);
        await this.touchParent(dest);
      },
    };
    return new Proxy(memory, {
      get(target, prop, receiver) {
        if (prop in overrides) return overrides[prop as keyof InMemoryFs];
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /**
   * A file is opened for writing only in a directory that exists, as open(2) does (ENOENT when the
   * parent is missing, ENOTDIR when it is not a directory): the in-memory filesystem would make the
   * parents, so `echo x > /nosuch/f` made `/nosuch`.
   */
  private async openableIn(path: string): Promise<void> {
    const parent = await this.memory.stat(posix.dirname(path)).catch(() => undefined);
    if (parent?.isDirectory) return;
    const code = parent ? 'ENOTDIR' : 'ENOENT';
    const text = parent ? 'not a directory' : 'no such file or directory';
    throw Object.assign(new Error(`${code}: ${text}, open '${path}'`), { code });
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

  /** A directory's mtime moves when an entry is made, removed or renamed in it, as on a real filesystem. */
  private async touchParent(path: string): Promise<void> {
    const now = new Date();
    await this.memory.utimes(posix.dirname(path), now, now).catch(() => undefined);
  }

  private claim(path: string, owner: Owner): void {
    if (owner.uid === 0 && owner.gid === 0) this.owners.delete(path);
    else this.owners.set(path, { uid: owner.uid, gid: owner.gid });
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
