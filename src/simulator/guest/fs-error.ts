const texts = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
  EEXIST: 'file already exists',
  EPERM: 'operation not permitted',
  EACCES: 'permission denied',
  ELOOP: 'too many symbolic links encountered',
  ENXIO: 'no such device or address',
} as const;

export type FsErrorCode = keyof typeof texts;

/**
 * A failed system call of the guest's filesystem, as node:fs words one (`CODE: text, syscall 'path'`)
 * and with its `code`: what just-bash's programs and its patched redirections read the errno from.
 */
export function fsError(code: FsErrorCode, path: string, syscall?: string): Error & { code: FsErrorCode } {
  return Object.assign(new Error(`${code}: ${texts[code]}, ${syscall ? `${syscall} ` : ''}'${path}'`), { code });
}
