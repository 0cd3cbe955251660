import { posix } from 'node:path';
import type { CommandContext } from 'just-bash';
import { defaultUmask, newEntryMode, type GuestFs } from './guest-fs.js';

/**
 * What the busybox programs on files, archives and text need to know about the command running
 * them (the same as busybox-files.ts's `FilesHost`, which registers them).
 */
export interface ProgramHost {
  fs: GuestFs;
  uid: number;
  gid: number;
  /** The process's umask as its shell has it now (default 022). */
  umask?: () => number;
}

/** The umask of the command running a program. */
export const umaskOf = (host: { umask?: () => number }): number => host.umask?.() ?? defaultUmask;

/** The bytes of stdin, one character per byte (exec's stdin is given as bytes). */
export const stdinBytes = (ctx: CommandContext): Buffer => Buffer.from(String(ctx.stdin), 'latin1');

/** Makes a directory and its missing parents, owned by the command's user (mode: as mkdir(2) under the umask, unless given). */
export async function mkdirs(host: ProgramHost, path: string, mode?: number): Promise<void> {
  if (path === '/' || (await host.fs.entry(path))) return;
  await mkdirs(host, posix.dirname(path));
  await host.fs.mkdir(path, { uid: host.uid, gid: host.gid, mode: mode ?? newEntryMode(0o777, umaskOf(host)) });
}

/**
 * Writes a file, replacing one that is there (an existing file keeps its owner and mode, as
 * open(O_TRUNC) does); a new one gets `mode`, or open(O_CREAT)'s 0666 less the umask.
 */
export async function writeFile(host: ProgramHost, path: string, data: Buffer, mode?: number): Promise<void> {
  await host.fs.write(path, data, { uid: host.uid, gid: host.gid, mode: mode ?? newEntryMode(0o666, umaskOf(host)) });
}
