import { posix } from 'node:path';
import { writeFile, type ProgramHost } from './program-host.js';

/** A file a program opened: its bytes (one character per byte), or why open(2) failed, in strerror's words. */
export type Opened = { data: string } | { error: string };

/**
 * Opens a path as open(2) would for the command's user: a symlink followed, a directory read as
 * nothing here (ed's read() of it fails on its own), a file without the permission refused.
 */
export async function openPath(host: ProgramHost, cwd: string, name: string, access: 'read' | 'write'): Promise<Opened | { directory: true }> {
  if (name === '') return { error: 'No such file or directory' };
  const memory = host.fs.memory;
  const path = posix.resolve(cwd, name);
  let parent = '/';
  for (const part of posix.dirname(path).split('/').filter(Boolean)) {
    parent = posix.join(parent, part);
    const st = await memory.stat(parent).catch(() => undefined);
    if (!st) return { error: 'No such file or directory' };
    if (!st.isDirectory) return { error: 'Not a directory' };
  }
  const st = await memory.stat(path).catch(() => undefined);
  if (!st) {
    if (access === 'read') return { error: 'No such file or directory' };
    return allowed(host, parent, (await memory.stat(parent)).mode, 2) ? { data: '' } : { error: 'Permission denied' };
  }
  if (st.isDirectory) return access === 'read' ? { directory: true } : { error: 'Is a directory' };
  if (!allowed(host, path, st.mode, access === 'read' ? 4 : 2)) return { error: 'Permission denied' };
  return { data: access === 'read' ? Buffer.from(await memory.readFileBuffer(path)).toString('latin1') : '' };
}

/** Whether the command's user has a permission bit (4 read, 2 write) on an entry: root has them all. */
function allowed(host: ProgramHost, path: string, mode: number, bit: number): boolean {
  if (host.uid === 0) return true;
  const owner = host.fs.ownerOf(path);
  const shift = owner.uid === host.uid ? 6 : owner.gid === host.gid ? 3 : 0;
  return ((mode >> shift) & bit) !== 0;
}

/**
 * A program's output written to the file its `-o` names, as busybox's sort and shuf write it: the
 * file opened (O_WRONLY|O_CREAT|O_TRUNC) and moved onto stdout, then written through stdio, so a
 * device that refuses the bytes (`/dev/full`) fails at stdio's last flush: `PROG: standard output:
 * …`, the status unchanged. Gives why the open failed (the program words it), or what the write said.
 */
export async function writeToOption(
  host: ProgramHost,
  cwd: string,
  program: string,
  target: string,
  data: Buffer,
): Promise<{ openError: string } | { stderr: string }> {
  const opened = await openPath(host, cwd, target, 'write');
  if ('error' in opened) return { openError: opened.error };
  if ('directory' in opened) return { openError: 'Is a directory' };
  try {
    await writeFile(host, posix.resolve(cwd, target), data);
  } catch (err) {
    if ((err as { code?: string }).code !== 'ENOSPC') throw err;
    return { stderr: `${program}: standard output: No space left on device\n` };
  }
  return { stderr: '' };
}
