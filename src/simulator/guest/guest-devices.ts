/** The type bits of a character device (S_IFCHR), kept in the in-memory file's mode above its permissions, as a named pipe's are. */
export const charBits = 0o020000;

/** Whether a mode the in-memory filesystem keeps is a character device's. */
export const isCharMode = (mode: number): boolean => (mode & 0o170000) === charBits;

/**
 * The id a container shows for a host id it does not map (the kernel's overflow uid and gid). The
 * devices LXC binds in from the host belong to the host's root, so the container sees them owned
 * by 65534, which its root does not own (chmod is `Operation not permitted`).
 */
export const overflowId = 65534;

/** A character device of a container's /dev: its number, mode and owner. */
export interface Device {
  path: string;
  major: number;
  minor: number;
  perm: number;
  uid: number;
  gid: number;
  /**
   * A mount point: LXC binds the host's node over an empty file (a devpts node over `/dev/console`
   * and `/dev/ptmx`), so unlinking it is EBUSY.
   */
  mounted: boolean;
  /** The filesystem the node is on: the host's devtmpfs, or the container's devpts (which refuses an unlink, EPERM). */
  on: 'devtmpfs' | 'devpts';
}

/** What stat(2) says of each filesystem's devices: st_dev (the beds' devpts is numbered per container: Incus's) and st_blksize. */
export const deviceFilesystems = { devtmpfs: { dev: 6, blksize: 4096 }, devpts: { dev: 0x3b, blksize: 1024 } } as const;

const host = (path: string, major: number, minor: number, perm = 0o666): Device => ({
  path,
  major,
  minor,
  perm,
  uid: overflowId,
  gid: overflowId,
  mounted: true,
  on: 'devtmpfs',
});

const pty = (path: string, minor: number, mounted: boolean): Device =>
  minor === 0
    ? { path, major: 136, minor: 0, perm: 0o700, uid: 0, gid: 5, mounted, on: 'devpts' }
    : { path, major: 5, minor: 2, perm: 0o666, uid: 0, gid: 0, mounted, on: 'devpts' };

/**
 * The character devices of a container's /dev, as the beds' LXD 5.0.2 and Incus 6.0.4 give an
 * unprivileged busybox container (`ls -l /dev /dev/net /dev/pts`, `stat -c '%t %T %a %u %g'`): the
 * host's nodes bound in (owned by {@link overflowId}), the console (the first pty, tty group 5)
 * and the devpts multiplexer.
 */
export const containerDevices: readonly Device[] = [
  pty('/dev/console', 0, true),
  host('/dev/full', 1, 7),
  host('/dev/fuse', 10, 229, 0o600),
  host('/dev/net/tun', 10, 200, 0o600),
  host('/dev/null', 1, 3),
  pty('/dev/ptmx', 2, true),
  pty('/dev/pts/0', 0, false),
  pty('/dev/pts/ptmx', 2, false),
  host('/dev/random', 1, 8),
  host('/dev/tty', 5, 0),
  host('/dev/urandom', 1, 9),
  host('/dev/zero', 1, 5),
];

const byPath = new Map(containerDevices.map((d) => [d.path, d]));

/**
 * The device at `path` (physical), when a character device is there. mknod(2) of a device is
 * refused in the beds' containers and a device cannot be moved (EBUSY), so the only device nodes
 * a guest has are these, where the container has them.
 */
export function deviceAt(path: string): Device | undefined {
  return byPath.get(path);
}
