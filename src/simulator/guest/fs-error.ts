const texts = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
  EEXIST: 'file already exists',
  EPERM: 'operation not permitted',
  EACCES: 'permission denied',
  ELOOP: 'too many symbolic links encountered',
  ENXIO: 'no such device or address',
  ENOSPC: 'no space left on device',
  EBUSY: 'resource busy or locked',
  EXDEV: 'cross-device link not permitted',
  EINVAL: 'invalid argument',
  ENODEV: 'no such device',
} as const;

export type FsErrorCode = keyof typeof texts;

/**
 * A failed system call of the guest's filesystem, as node:fs words one (`CODE: text, syscall 'path'`)
 * and with its `code`: what just-bash's programs and its patched redirections read the errno from.
 */
export function fsError(code: FsErrorCode, path: string, syscall?: string): Error & { code: FsErrorCode } {
  return Object.assign(new Error(`${code}: ${texts[code]}, ${syscall ? `${syscall} ` : ''}'${path}'`), { code });
}

/** strerror(3)'s words for each errno the guest's programs print (busybox's `PROG: F: why`). */
export const errnos = {
  ENOENT: 'No such file or directory',
  ENOTDIR: 'Not a directory',
  EEXIST: 'File exists',
  EISDIR: 'Is a directory',
  ENOTEMPTY: 'Directory not empty',
  EBUSY: 'Device or resource busy',
  EINVAL: 'Invalid argument',
  EPERM: 'Operation not permitted',
  ELOOP: 'Too many levels of symbolic links',
  EACCES: 'Permission denied',
  ENXIO: 'No such device or address',
  ENOSPC: 'No space left on device',
  ENODEV: 'No such device',
} as const;
export type Errno = keyof typeof errnos;

/**
 * The errno a failed call of the guest's filesystem carries: its `code` (`fsError`, node's), or the
 * head of its message (just-bash's in-memory filesystem: `ENOSPC: …`); undefined when it names none.
 */
export function errnoOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | undefined)?.code ?? /^(E[A-Z]+)[:,]/.exec(String((e as Error | undefined)?.message))?.[1];
  return typeof code === 'string' ? code : undefined;
}
