import { posix } from 'node:path';
import type { ExecResult, IFileSystem } from 'just-bash';
import { symlinkLoop } from './file-status.js';
import { refused } from './guest-access.js';
import { ProgramOutput } from './program-output.js';

/**
 * What busybox's programs on files share (getopt32's reading of a command line is busybox-getopt.ts's): the system calls
 * they make over the guest's files with the errno each failure gives, perror's wording, y/n prompts.
 */

import { errnoOf, errnos, type Errno } from './fs-error.js';

/** A system call's failure, with the errno busybox prints. */
export class SysError extends Error {
  constructor(readonly errno: Errno) {
    super(errnos[errno]);
  }
}

export type Kind = 'file' | 'directory' | 'symlink';

/** The guest's files as system calls see them: lstat, stat, and why a path cannot be reached. */
export class Files {
  constructor(
    readonly fs: IFileSystem,
    private readonly cwd: string,
  ) {}

  abs(path: string): string {
    return posix.resolve(this.cwd, path);
  }

  // A Date that just-bash hands a command belongs to its context, which is revoked once the command
  // ends: a copy is what may be kept (a time set from it is read by later commands).

  /** What is at the path, not following a final symlink (undefined: nothing). */
  async lstat(path: string): Promise<{ kind: Kind; mode: number; mtime: Date } | undefined> {
    try {
      const st = await this.fs.lstat(this.abs(path));
      return {
        kind: st.isSymbolicLink ? 'symlink' : st.isDirectory ? 'directory' : 'file',
        mode: st.mode & 0o7777,
        mtime: new Date(st.mtime.getTime()),
      };
    } catch {
      return undefined;
    }
  }

  /** What the path leads to, following symlinks (undefined: nothing). */
  async stat(path: string): Promise<{ kind: Kind; mode: number; mtime: Date } | undefined> {
    try {
      const st = await this.fs.stat(this.abs(path));
      return { kind: st.isDirectory ? 'directory' : 'file', mode: st.mode & 0o7777, mtime: new Date(st.mtime.getTime()) };
    } catch {
      return undefined;
    }
  }

  async isDir(path: string): Promise<boolean> {
    return (await this.stat(path))?.kind === 'directory';
  }

  /** Why a path that is not there cannot be reached: a missing component, or one that is not a directory. */
  async missing(path: string): Promise<Errno> {
    const abs = this.abs(path);
    if (await refused(this.fs, abs)) return 'EACCES';
    if (await symlinkLoop(this.fs, abs, true)) return 'ELOOP';
    let at = '/';
    for (const part of abs.split('/').filter(Boolean).slice(0, -1)) {
      at = posix.join(at, part);
      const st = await this.stat(at);
      if (!st) return 'ENOENT';
      if (st.kind !== 'directory') return 'ENOTDIR';
    }
    // A trailing slash on a file: `f/`.
    if (path.endsWith('/') && (await this.stat(abs))?.kind === 'file') return 'ENOTDIR';
    return 'ENOENT';
  }

  /** Throws why a new entry cannot be made at the path (its parent is missing or not a directory). */
  async parentReady(path: string): Promise<void> {
    const parent = await this.stat(posix.dirname(this.abs(path)));
    if (!parent) throw new SysError(await this.missing(posix.dirname(this.abs(path))));
    if (parent.kind !== 'directory') throw new SysError('ENOTDIR');
  }

  /** rmdir(2). */
  async rmdir(path: string): Promise<void> {
    const abs = this.abs(path);
    const st = await this.lstat(path);
    if (!st) throw new SysError(await this.missing(path));
    if (st.kind !== 'directory') throw new SysError('ENOTDIR');
    if (abs === '/') throw new SysError('EBUSY');
    if (posix.basename(path.replace(/\/+$/, '')) === '.') throw new SysError('EINVAL');
    // The kernel checks permissions first: a directory one may not remove is EPERM/EACCES, empty or not.
    try {
      await this.fs.rm(abs);
    } catch (e) {
      if (errnoText(e) === errnos.ENOTEMPTY) throw new SysError('ENOTEMPTY');
      throw e;
    }
  }

  /** mkdir(2). */
  async mkdir(path: string, mode: number): Promise<void> {
    if (await this.lstat(path)) throw new SysError('EEXIST');
    await this.parentReady(path);
    await this.fs.mkdir(this.abs(path));
    await this.fs.chmod(this.abs(path), mode);
  }

  /** rename(2). */
  async rename(from: string, to: string): Promise<void> {
    const src = this.abs(from);
    const dest = this.abs(to);
    const s = await this.lstat(from);
    if (!s) throw new SysError(await this.missing(from));
    const d = await this.lstat(to);
    if (!d) await this.parentReady(to);
    if (src === dest) return;
    if (s.kind === 'directory' && (dest + '/').startsWith(src + '/')) throw new SysError('EINVAL');
    if (d) {
      if (d.kind === 'directory' && s.kind !== 'directory') throw new SysError('EISDIR');
      if (d.kind !== 'directory' && s.kind === 'directory') throw new SysError('ENOTDIR');
      if (d.kind === 'directory' && (await this.fs.readdir(dest)).length > 0) throw new SysError('ENOTEMPTY');
      await this.fs.rm(dest, { recursive: true });
    }
    await this.fs.mv(src, dest);
  }
}

/** busybox's perror: `PROGRAM: WHAT: the errno's words`. */
export const say = (program: string, what: string, e: unknown): string => `${program}: ${what}: ${errnoText(e)}\n`;

/** The words of a failed call's errno: a SysError's, or the code the guest's filesystem gave (ENOENT when it gave none). */
function errnoText(e: unknown): string {
  if (e instanceof SysError) return e.message;
  const code = errnoOf(e);
  return code !== undefined && code in errnos ? errnos[code as Errno] : errnos.ENOENT;
}

/** Answers to busybox's y/n prompts, read a line at a time from the command's stdin. */
export class Answers {
  private at = 0;
  constructor(private readonly input: string) {}

  /** Whether the next line says yes (it starts with y or Y); end of input is no. */
  yes(): boolean {
    if (this.at >= this.input.length) return false;
    const end = this.input.indexOf('\n', this.at);
    const line = this.input.slice(this.at, end < 0 ? undefined : end);
    this.at = end < 0 ? this.input.length : end + 1;
    return /^\s*[yY]/.test(line);
  }
}

/** The last component of a path without its trailing slashes (`/` stays `/`). */
export function lastComponent(path: string): string {
  const stripped = path.replace(/\/+$/, '');
  return stripped === '' ? (path === '' ? '' : '/') : stripped.slice(stripped.lastIndexOf('/') + 1);
}

/** busybox's concat_path_file: `dir/name` with one slash between. */
export const joinPath = (dir: string, name: string): string => (dir.endsWith('/') ? `${dir}${name}` : `${dir}/${name}`);

/** A file program's output, in the order written (program-output.ts), and whether an operand failed. */
export type Outcome = ProgramOutput & { failed: boolean };

export const outcome = (): Outcome => Object.assign(new ProgramOutput(), { failed: false });
/** The program's result: status 1 when an operand failed (`failed`, unless given). */
export const done = (o: Outcome, failed = o.failed): ExecResult => o.result(failed ? 1 : 0);
