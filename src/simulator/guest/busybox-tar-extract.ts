import { posix } from 'node:path';
import type { CommandContext, IFileSystem } from 'just-bash';
import type { TarHeader } from 'modern-tar';
import type { ProgramHost } from './program-host.js';
import { ProgramOutput } from './program-output.js';
import { errnos } from './fs-error.js';

/** A message that ends tar at once (bb_error_msg_and_die): status 1. */
export class TarDeath extends Error {}

/** A tar command line as busybox reads it. */
export interface TarOptions {
  mode: 'c' | 'x' | 't';
  /** The one-letter options, and the long ones with their dashes (`--overwrite`). */
  flags: Set<string>;
  /** -f: the archive (`-` or none: stdin or stdout). */
  file?: string;
  /** -C: the directory to work in. */
  dir?: string;
  /** --strip-components. */
  strip: number;
  /** --to-command: the shell command each regular file's data is piped to (extracting or listing, -O or not). */
  toCommand?: string;
  /** The operands: what to archive, or the members to list or extract. */
  members: string[];
}

/** What one run says and whether an error was delayed to its end (`error exit delayed from previous errors`). */
export class Run extends ProgramOutput {
  delayed = false;
  warn(message: string): void {
    this.err(`tar: ${message}\n`);
  }
  error(message: string): void {
    this.warn(message);
    this.delayed = true;
  }
}

/** The physical path a member extracts to, made under `cwd`. */
const target = (cwd: string, name: string): string => posix.resolve(cwd, name);

/** Extracting one entry as busybox's data_extract_all does, through the command's filesystem (its user's permissions and umask). */
export async function extractOne(
  host: ProgramHost,
  ctx: CommandContext,
  o: TarOptions,
  cwd: string,
  run: Run,
  header: TarHeader,
  data: Uint8Array | undefined,
): Promise<void> {
  const fs = ctx.fs;
  const name = header.name.replace(/\/+$/, '');
  const path = target(cwd, name);
  const root = host.uid === 0;
  // Root's tar restores the modes as they are (--no-same-permissions: as open(2) and mkdir(2) make them).
  const restores = root && !o.flags.has('--no-same-permissions');
  const umask = host.umask?.() ?? 0o022;
  const mode = (header.mode ?? 0o644) & 0o7777;
  // Leading directories: made as mkdir -p would (0777 less the umask).
  const parent = posix.dirname(path);
  if (!(await fs.exists(parent))) {
    const made = await mkdirs(fs, parent);
    if (made) run.warn(`can't create directory '${posix.dirname(name)}': ${made}`);
  }
  // unlink(2) of what is at the name, unless -k (ARCHIVE_UNLINK_OLD): a directory or a refusal ends tar.
  const remove = async (): Promise<void> => {
    const there = await fs.lstat(path).catch(() => undefined);
    if (!there) return;
    if (there.isDirectory) throw new TarDeath(`can't remove old file ${name}: ${errnos.EISDIR}`);
    await fs.rm(path).catch((e: unknown) => {
      throw new TarDeath(`can't remove old file ${name}: ${why(e)}`);
    });
  };
  try {
    if (header.type === 'directory') {
      const there = await fs.lstat(path).catch(() => undefined);
      if (!there) {
        try {
          await fs.mkdir(path);
        } catch (e) {
          run.warn(`can't make dir ${name}: ${why(e)}`);
          return;
        }
        await fs.chmod(path, restores ? mode : mode & ~umask);
      } else if (restores) await fs.chmod(path, mode);
    } else if (header.type === 'symlink') {
      if (!o.flags.has('k')) await remove();
      try {
        await fs.symlink(header.linkname ?? '', path);
      } catch (e) {
        run.warn(`can't create symlink '${name}' to '${header.linkname}': ${why(e)}`);
        return;
      }
    } else if (header.type === 'link') {
      if (!o.flags.has('k')) await remove();
      try {
        await fs.link(target(cwd, (header.linkname ?? '').replace(/^\/+/, '')), path);
      } catch (e) {
        run.warn(`can't create hardlink '${name}' to '${header.linkname}': ${why(e)}`);
        return;
      }
      return;
    } else {
      if (!o.flags.has('k') && !o.flags.has('--overwrite')) await remove();
      else if (o.flags.has('k') && (await fs.lstat(path).catch(() => undefined))) throw new TarDeath(`can't open '${name}': ${errnos.EEXIST}`);
      try {
        await fs.writeFile(path, data ?? new Uint8Array());
      } catch (e) {
        throw new TarDeath(`can't open '${name}': ${why(e)}`);
      }
      // open(O_CREAT, mode) under the umask; root's tar then restores the mode as it is.
      await fs.chmod(path, restores ? mode : mode & ~umask);
    }
    if (root && !o.flags.has('o')) {
      const entry = await host.fs.entry(path);
      const uid = (header.uname ? await idOf(fs, '/etc/passwd', header.uname) : undefined) ?? header.uid ?? 0;
      const gid = (header.gname ? await idOf(fs, '/etc/group', header.gname) : undefined) ?? header.gid ?? 0;
      if (entry)
        await host.fs.setMeta(path, {
          uid: o.flags.has('--numeric-owner') ? (header.uid ?? 0) : uid,
          gid: o.flags.has('--numeric-owner') ? (header.gid ?? 0) : gid,
          mode: entry.mode,
        });
    }
    if (!o.flags.has('m') && header.type !== 'symlink' && header.mtime) await fs.utimes(path, header.mtime, header.mtime).catch(() => undefined);
  } catch (e) {
    if (e instanceof TarDeath) throw e;
    throw new TarDeath(`${name}: ${why(e)}`);
  }
}

/** An id by name from /etc/passwd or /etc/group. */
async function idOf(fs: IFileSystem, file: string, name: string): Promise<number | undefined> {
  const line = (await fs.readFile(file).catch(() => ''))
    .split('\n')
    .map((l) => l.split(':'))
    .find((f) => f[0] === name);
  return line && /^\d+$/.test(line[2] ?? '') ? Number(line[2]) : undefined;
}

/** strerror of a guest filesystem's error. */
export function why(e: unknown): string {
  const code = (e as { code?: string } | undefined)?.code;
  return code && code in errnos ? errnos[code as keyof typeof errnos] : String((e as Error)?.message ?? e);
}

/** bb_make_directory with FILEUTILS_RECUR: the missing directories down to `path`, or why one could not be made. */
async function mkdirs(fs: IFileSystem, path: string): Promise<string | undefined> {
  if (await fs.exists(path)) return undefined;
  const up = await mkdirs(fs, posix.dirname(path));
  if (up) return up;
  try {
    await fs.mkdir(path);
  } catch (e) {
    return why(e);
  }
  return undefined;
}
