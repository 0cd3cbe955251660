import { posix } from 'node:path';
import type { Duplex } from 'node:stream';
import sftpProtocol, { type Ssh2Attrs, type Ssh2Name } from 'ssh2/lib/protocol/SFTP.js';
import type { GuestEntry, GuestFs } from '../guest/guest-fs.js';
import { filesystemOf, mountOf } from '../guest/busybox-stat.js';

const { SFTP, STATUS_CODE, OPEN_MODE } = sftpProtocol;

/** The errno texts Go's `os` errors end with, as the daemons' sftp server (pkg/sftp in forkfile) words them. */
const errnoText = {
  ENOENT: 'no such file or directory',
  EEXIST: 'file exists',
  ENOTEMPTY: 'directory not empty',
  EISDIR: 'is a directory',
  ENOTDIR: 'not a directory',
  EINVAL: 'invalid argument',
  EBUSY: 'device or resource busy',
  EBADF: 'bad file descriptor',
  EPERM: 'operation not permitted',
} as const;

type Errno = keyof typeof errnoText;

/**
 * A refusal as pkg/sftp's server sends it: ENOENT is SSH_FX_NO_SUCH_FILE (the client says "file
 * does not exist"), anything else SSH_FX_FAILURE with Go's error text (`remove tmp/d: directory not
 * empty`), which the client prints inside `sftp: "…" (SSH_FX_FAILURE)`.
 */
class FxError extends Error {
  constructor(
    readonly errno: Errno,
    text: string,
  ) {
    super(text);
  }
}

/** Go's `*os.PathError` text: `op path: errno` (the path as the client sent it). */
const pathError = (errno: Errno, op: string, path: string): FxError => new FxError(errno, `${op} ${path}: ${errnoText[errno]}`);

/** An open file or directory. */
interface Handle {
  /** The path as the client opened it (error texts name it so). */
  given: string;
  /** The absolute path it resolved to (symlinks followed). */
  path: string;
  directory: boolean;
  writable: boolean;
  readable: boolean;
  append: boolean;
  /** A file's bytes while it is open for writing (written back at each change's end: close). */
  data?: Buffer;
  /** A directory's entries not yet listed by READDIR. */
  pending?: string[];
}

/** pkg/sftp's server lists at most this many entries per READDIR. */
const readdirBatch = 128;

const typeBits = { file: 0o100000, directory: 0o040000, symlink: 0o120000 } as const;

/**
 * The extensions the daemons' sftp server advertises in its VERSION, in its order (pkg/sftp as
 * LXD 5.0.2 and Incus 6.0.4 run it; observed on both), with their versions.
 */
const extensions: [string, string][] = [
  ['hardlink@openssh.com', '1'],
  ['posix-rename@openssh.com', '1'],
  ['statvfs@openssh.com', '2'],
];

/** SSH_FXP_VERSION (version 3) with {@link extensions}: ssh2's server writes one without any. */
const versionPacket = ((): Buffer => {
  const body = [Buffer.from([2, 0, 0, 0, 3]), ...extensions.flatMap((pair) => pair.map(sshString))];
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.reduce((n, b) => n + b.length, 0));
  return Buffer.concat([length, ...body]);
})();

/** SSH_FXP_EXTENDED_REPLY, which ssh2's server has no call for. */
const extendedReply = 201;

/** statvfs(2)'s f_flag for the beds' mounts: ST_VALID and ST_RELATIME, and on /proc and /sys ST_NOSUID, ST_NODEV and ST_NOEXEC. */
const mountFlags = (mount: string): number => (mount === '/proc' || mount === '/sys' ? 0x102e : 0x1020);

/**
 * One SFTP connection (version 3) on an instance's filesystem, as `GET /1.0/instances/<n>/sftp`
 * upgrades to on Incus 6.0.4: the protocol straight on the connection, no SSH transport, the
 * instance's root as `/` and relative paths taken from it. The packets are read and written by
 * ssh2's SFTP implementation (its server side, fed the connection's bytes); what each request does
 * to the guest filesystem, and the errors it answers, are the daemon's sftp server's (pkg/sftp
 * run by `incusd forkfile` as root inside the instance). Requests are served one at a time in the
 * order they came, so a write the client pipelined lands before the close that follows it.
 */
export class SftpSession {
  private readonly handles = new Map<string, Handle>();
  private nextHandle = 1;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly fs: GuestFs,
    socket: Duplex,
  ) {
    let versioned = false;
    const sftp = new SFTP(
      {
        _protocol: {
          channelData: (_id, data) => {
            if (socket.destroyed) return;
            // The first packet is the VERSION: the daemons' advertises their extensions.
            if (!versioned && data[4] === 2) data = versionPacket;
            versioned = true;
            socket.write(data);
          },
          channelClose: () => socket.end(),
        },
      },
      {
        type: 'sftp',
        incoming: { id: 0, window: Infinity, packetSize: Infinity, state: 'open' },
        outgoing: { id: 0, window: Infinity, packetSize: Infinity, state: 'open' },
      },
      { server: true },
    );
    // A malformed packet is fatal to the session (ssh2 says why); the connection ends with it.
    sftp.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => sftp.push(chunk));
    socket.on('end', () => socket.end());
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      sftp.push(null);
      this.handles.clear();
    });

    const serve = (reqid: number, work: () => Promise<void>): void => {
      this.queue = this.queue.then(async () => {
        try {
          await work();
        } catch (err) {
          if (!(err instanceof FxError)) throw err;
          if (err.errno === 'ENOENT') sftp.status(reqid, STATUS_CODE.NO_SUCH_FILE, err.message);
          else sftp.status(reqid, STATUS_CODE.FAILURE, err.message);
        }
      });
      // Anything else (a bug) ends this connection, never the simulator.
      this.queue = this.queue.catch(() => {
        socket.destroy();
      });
    };
    const ok = (reqid: number): void => sftp.status(reqid, STATUS_CODE.OK);

    sftp.on('OPEN', (reqid: number, path: string, flags: number) =>
      serve(reqid, async () => sftp.handle(reqid, this.addHandle(await this.open(path, flags)))),
    );
    sftp.on('OPENDIR', (reqid: number, path: string) => serve(reqid, async () => sftp.handle(reqid, this.addHandle(await this.openDir(path)))));
    sftp.on('CLOSE', (reqid: number, id: Buffer) =>
      serve(reqid, async () => {
        const h = this.handle(id, 'close');
        this.handles.delete(id.toString('hex'));
        await this.flush(h);
        ok(reqid);
      }),
    );
    sftp.on('READ', (reqid: number, id: Buffer, offset: number, length: number) =>
      serve(reqid, async () => {
        const h = this.handle(id, 'read');
        if (h.directory) throw pathError('EISDIR', 'read', h.given);
        if (!h.readable) throw pathError('EBADF', 'read', h.given);
        const bytes = h.data ?? (await this.fs.read(h.path));
        if (offset >= bytes.length) return sftp.status(reqid, STATUS_CODE.EOF);
        sftp.data(reqid, bytes.subarray(offset, offset + length));
      }),
    );
    sftp.on('WRITE', (reqid: number, id: Buffer, offset: number, chunk: Buffer) =>
      serve(reqid, async () => {
        const h = this.handle(id, 'write');
        if (h.directory || !h.writable) throw pathError('EBADF', 'write', h.given);
        let data = h.data ?? (await this.fs.read(h.path));
        const at = h.append ? data.length : offset;
        if (at + chunk.length > data.length) data = Buffer.concat([data, Buffer.alloc(at + chunk.length - data.length)]);
        chunk.copy(data, at);
        h.data = data;
        ok(reqid);
      }),
    );
    sftp.on('READDIR', (reqid: number, id: Buffer) =>
      serve(reqid, async () => {
        const h = this.handle(id, 'readdir');
        if (!h.directory) throw pathError('ENOTDIR', 'readdirent', h.given);
        h.pending ??= await this.fs.list(h.path);
        if (h.pending.length === 0) return sftp.status(reqid, STATUS_CODE.EOF);
        const names: Ssh2Name[] = [];
        for (const name of h.pending.splice(0, readdirBatch)) {
          const entry = await this.fs.entry(posix.join(h.path, name));
          if (entry) names.push({ filename: name, longname: longName(name, entry), attrs: attrsOf(entry) });
        }
        sftp.name(reqid, names);
      }),
    );
    sftp.on('STAT', (reqid: number, path: string) => serve(reqid, async () => sftp.attrs(reqid, attrsOf(await this.stat(path, 'stat', true)))));
    sftp.on('LSTAT', (reqid: number, path: string) => serve(reqid, async () => sftp.attrs(reqid, attrsOf(await this.stat(path, 'lstat', false)))));
    sftp.on('FSTAT', (reqid: number, id: Buffer) =>
      serve(reqid, async () => {
        const h = this.handle(id, 'stat');
        const entry = await this.stat(h.path, 'stat', true);
        sftp.attrs(reqid, attrsOf(h.data ? { ...entry, size: h.data.length } : entry));
      }),
    );
    sftp.on('SETSTAT', (reqid: number, path: string, attrs: Ssh2Attrs) =>
      serve(reqid, async () => {
        await this.setStat(path, resolve(path), attrs);
        ok(reqid);
      }),
    );
    sftp.on('FSETSTAT', (reqid: number, id: Buffer, attrs: Ssh2Attrs) =>
      serve(reqid, async () => {
        const h = this.handle(id, 'chmod');
        await this.flush(h);
        await this.setStat(h.given, h.path, attrs);
        if (h.data && attrs.size !== undefined) h.data = await this.fs.read(h.path);
        ok(reqid);
      }),
    );
    sftp.on('MKDIR', (reqid: number, path: string) =>
      serve(reqid, async () => {
        const abs = resolve(path);
        if (await this.fs.entry(abs)) throw pathError('EEXIST', 'mkdir', path);
        await this.parentOf(abs, 'mkdir', path);
        // pkg/sftp ignores the request's attributes: 0755 under the server's umask (022).
        await this.fs.mkdir(abs, { uid: 0, gid: 0, mode: 0o755 });
        ok(reqid);
      }),
    );
    const remove = (reqid: number, path: string, directoryOnly: boolean): void =>
      serve(reqid, async () => {
        const abs = resolve(path);
        const entry = await this.fs.entry(abs);
        if (!entry) throw pathError('ENOENT', 'remove', path);
        if (abs === '/') throw pathError('EBUSY', 'remove', path);
        if (entry.type === 'directory' && (await this.fs.list(abs)).length > 0) throw pathError('ENOTEMPTY', 'remove', path);
        if (directoryOnly && entry.type !== 'directory') throw pathError('ENOTDIR', 'remove', path);
        await this.fs.remove(abs);
        ok(reqid);
      });
    // pkg/sftp's server removes with os.Remove for both: a file or an empty directory.
    sftp.on('REMOVE', (reqid: number, path: string) => remove(reqid, path, false));
    sftp.on('RMDIR', (reqid: number, path: string) => remove(reqid, path, false));
    // pkg/sftp renames with os.Rename, over an existing name, for RENAME as for posix-rename@openssh.com.
    sftp.on('RENAME', (reqid: number, from: string, to: string) =>
      serve(reqid, async () => {
        await this.rename(from, to);
        ok(reqid);
      }),
    );
    sftp.on('READLINK', (reqid: number, path: string) =>
      serve(reqid, async () => {
        const entry = await this.fs.entry(resolve(path));
        if (!entry) throw pathError('ENOENT', 'readlink', path);
        if (entry.type !== 'symlink') throw pathError('EINVAL', 'readlink', path);
        const target = (await this.fs.read(resolve(path))).toString('utf8');
        sftp.name(reqid, [{ filename: target, longname: target, attrs: {} }]);
      }),
    );
    // pkg/sftp (the incus client) sends the target first, as OpenSSH does; ssh2 hands the two over in that order.
    sftp.on('SYMLINK', (reqid: number, target: string, link: string) =>
      serve(reqid, async () => {
        const abs = resolve(link);
        const linkError = (errno: Errno): FxError => new FxError(errno, `symlink ${target} ${link}: ${errnoText[errno]}`);
        if (await this.fs.entry(abs)) throw linkError('EEXIST');
        const parent = await this.fs.entry(posix.dirname(abs));
        if (parent?.type !== 'directory') throw linkError(parent ? 'ENOTDIR' : 'ENOENT');
        await this.fs.symlink(target, abs, { uid: 0, gid: 0 });
        ok(reqid);
      }),
    );
    sftp.on('REALPATH', (reqid: number, path: string) =>
      serve(reqid, async () => {
        const abs = resolve(path);
        sftp.name(reqid, [{ filename: abs, longname: abs, attrs: {} }]);
      }),
    );
    sftp.on('EXTENDED', (reqid: number, name: string, data: Buffer | undefined) =>
      serve(reqid, async () => {
        const [first, second] = sshStrings(data ?? Buffer.alloc(0));
        if (name === 'posix-rename@openssh.com' && second !== undefined) {
          await this.rename(first!, second);
          return ok(reqid);
        }
        if (name === 'hardlink@openssh.com' && second !== undefined) {
          await this.hardlink(first!, second);
          return ok(reqid);
        }
        if (name === 'statvfs@openssh.com' && first !== undefined) {
          const real = await this.realPath(resolve(first));
          // os.PathError unwrapped: the errno's text alone.
          if (real === undefined) return sftp.status(reqid, STATUS_CODE.NO_SUCH_FILE, errnoText.ENOENT);
          return void socket.write(statvfsReply(reqid, mountOf(real)));
        }
        sftp.status(reqid, STATUS_CODE.OP_UNSUPPORTED, 'operation unsupported');
      }),
    );
  }

  /** os.Rename: over an existing name; `rename FROM TO: …` (the paths as sent) when it cannot. */
  private async rename(from: string, to: string): Promise<void> {
    const { src, dest } = await this.twoNames('rename', from, to);
    await this.fs.as({ uid: 0, gid: 0 }).mv(src, dest);
  }

  /** os.Link, in link(2)'s order of refusals: the existing name, then the new one, then a directory (EPERM). */
  private async hardlink(from: string, to: string): Promise<void> {
    const { src, dest, entry, refusal } = await this.twoNames('link', from, to);
    if (await this.fs.entry(dest)) throw refusal('EEXIST');
    if (entry.type === 'directory') throw refusal('EPERM');
    await this.fs.as({ uid: 0, gid: 0 }).link(src, dest);
  }

  /**
   * The checks os.Rename and os.Link share, as Go words their failure (`OP FROM TO: why`, the paths
   * as sent): the existing name must be there, the new one's directory too.
   */
  private async twoNames(
    op: 'rename' | 'link',
    from: string,
    to: string,
  ): Promise<{ src: string; dest: string; entry: GuestEntry; refusal: (errno: Errno) => FxError }> {
    const [src, dest] = [resolve(from), resolve(to)];
    const refusal = (errno: Errno): FxError => new FxError(errno, `${op} ${from} ${to}: ${errnoText[errno]}`);
    const entry = await this.fs.entry(src);
    if (!entry) throw refusal('ENOENT');
    const parent = await this.fs.entry(posix.dirname(dest));
    if (parent?.type !== 'directory') throw refusal(parent ? 'ENOTDIR' : 'ENOENT');
    return { src, dest, entry, refusal };
  }

  private addHandle(h: Handle): Buffer {
    const id = Buffer.alloc(4);
    id.writeUInt32BE(this.nextHandle++);
    this.handles.set(id.toString('hex'), h);
    return id;
  }

  private handle(id: Buffer, op: string): Handle {
    const h = this.handles.get(id.toString('hex'));
    if (!h) throw new FxError('EBADF', `${op}: ${errnoText.EBADF}`);
    return h;
  }

  /** Writes an open file's bytes back, keeping the mode and owner it has now (a chmod while open stays). */
  private async flush(h: Handle): Promise<void> {
    if (!h.data) return;
    const entry = await this.fs.entry(h.path);
    const spec = { uid: entry?.uid ?? 0, gid: entry?.gid ?? 0, mode: entry?.mode ?? 0o644 };
    await this.fs.write(h.path, h.data, spec);
    await this.fs.setMeta(h.path, spec);
  }

  /** os.OpenFile with the request's flags; a new file is root's, 0644 (pkg/sftp's default mode under umask 022). */
  private async open(given: string, flags: number): Promise<Handle> {
    const readable = (flags & OPEN_MODE.READ) !== 0;
    const writable = (flags & (OPEN_MODE.WRITE | OPEN_MODE.APPEND)) !== 0;
    const create = (flags & OPEN_MODE.CREAT) !== 0;
    let path = resolve(given);
    let entry = await this.fs.entry(path);
    if (entry?.type === 'symlink') {
      const real = await this.realPath(path);
      if (real === undefined) entry = undefined;
      else [path, entry] = [real, await this.fs.entry(real)];
    }
    if (entry && create && (flags & OPEN_MODE.EXCL) !== 0) throw pathError('EEXIST', 'open', given);
    if (!entry) {
      if (!create) throw pathError('ENOENT', 'open', given);
      await this.parentOf(path, 'open', given);
      await this.fs.write(path, Buffer.alloc(0), { uid: 0, gid: 0, mode: 0o644 });
    } else if (entry.type === 'directory') {
      if (writable) throw pathError('EISDIR', 'open', given);
      return { given, path, directory: true, readable, writable, append: false };
    } else if (writable && (flags & OPEN_MODE.TRUNC) !== 0) {
      await this.fs.write(path, Buffer.alloc(0), { uid: 0, gid: 0, mode: 0o644 });
    }
    return { given, path, directory: false, readable, writable, append: (flags & OPEN_MODE.APPEND) !== 0 };
  }

  private async openDir(given: string): Promise<Handle> {
    const entry = await this.stat(given, 'stat', true);
    if (entry.type !== 'directory') throw new FxError('ENOTDIR', ` ${given}: ${errnoText.ENOTDIR}`);
    return { given, path: (await this.realPath(resolve(given)))!, directory: true, readable: true, writable: false, append: false };
  }

  /** The entry at a path, a final symlink followed when `follow`; ENOENT as `op path: …`. */
  private async stat(given: string, op: string, follow: boolean): Promise<GuestEntry> {
    let path: string | undefined = resolve(given);
    if (follow) path = await this.realPath(path);
    const entry = path === undefined ? undefined : await this.fs.entry(path);
    if (!entry) throw pathError('ENOENT', op, given);
    return entry;
  }

  private async realPath(path: string): Promise<string | undefined> {
    try {
      return await this.fs.memory.realpath(path);
    } catch {
      return undefined;
    }
  }

  /** The parent directory of a path to create: ENOENT when missing, ENOTDIR when it is not one. */
  private async parentOf(path: string, op: string, given: string): Promise<void> {
    const parent = await this.fs.entry(posix.dirname(path));
    if (!parent) throw pathError('ENOENT', op, given);
    if (parent.type !== 'directory') throw pathError('ENOTDIR', op, given);
  }

  /** SETSTAT as pkg/sftp applies it: the size (truncate), the permission bits, the times, the owner. */
  private async setStat(given: string, path: string, attrs: Ssh2Attrs): Promise<void> {
    const real = await this.realPath(path);
    const entry = real === undefined ? undefined : await this.fs.entry(real);
    if (!real || !entry) throw pathError('ENOENT', attrs.size !== undefined ? 'truncate' : attrs.mode !== undefined ? 'chmod' : 'chown', given);
    if (attrs.size !== undefined) {
      if (entry.type === 'directory') throw pathError('EISDIR', 'truncate', given);
      const bytes = await this.fs.read(real);
      const resized = attrs.size <= bytes.length ? bytes.subarray(0, attrs.size) : Buffer.concat([bytes, Buffer.alloc(attrs.size - bytes.length)]);
      await this.fs.write(real, resized, { uid: entry.uid, gid: entry.gid, mode: entry.mode });
    }
    if (attrs.atime !== undefined && attrs.mtime !== undefined)
      await this.fs.utimes(real, new Date(attrs.atime * 1000), new Date(attrs.mtime * 1000));
    await this.fs.setMeta(real, {
      mode: attrs.mode === undefined ? entry.mode : attrs.mode & 0o7777,
      uid: attrs.uid ?? entry.uid,
      gid: attrs.gid ?? entry.gid,
    });
  }
}

/** A path as the server's working directory, `/`, resolves it. */
function resolve(path: string): string {
  return posix.resolve('/', path);
}

function attrsOf(entry: GuestEntry): Ssh2Attrs {
  const seconds = (time: Date): number => Math.floor(time.getTime() / 1000);
  return {
    size: entry.size,
    uid: entry.uid,
    gid: entry.gid,
    mode: typeBits[entry.type] | entry.mode,
    atime: seconds(entry.atime),
    mtime: seconds(entry.mtime),
  };
}

/** An SSH string: its length (uint32) and its bytes. */
function sshString(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** The SSH strings an EXTENDED request's data holds (as many as there are whole). */
function sshStrings(data: Buffer): string[] {
  const out: string[] = [];
  for (let at = 0; at + 4 <= data.length;) {
    const length = data.readUInt32BE(at);
    if (at + 4 + length > data.length) break;
    out.push(data.subarray(at + 4, at + 4 + length).toString('utf8'));
    at += 4 + length;
  }
  return out;
}

/**
 * The EXTENDED_REPLY to `statvfs@openssh.com`: the eleven figures of statvfs(2) for the mount a
 * path is on, as `stat -f` shows them in the guest ({@link filesystemOf}); pkg/sftp leaves the fsid 0.
 */
function statvfsReply(reqid: number, mount: string): Buffer {
  const fs = filesystemOf(mount);
  const figures = [4096, 4096, fs.blocks, fs.free, fs.avail, fs.files, fs.ffree, fs.ffree, 0, mountFlags(mount), 255];
  const packet = Buffer.alloc(4 + 1 + 4 + figures.length * 8);
  packet.writeUInt32BE(packet.length - 4, 0);
  packet[4] = extendedReply;
  packet.writeUInt32BE(reqid, 5);
  figures.forEach((n, i) => packet.writeBigUInt64BE(BigInt(n), 9 + i * 8));
  return packet;
}

/** An `ls -l` line for a READDIR entry (clients read the attributes; the long name is for people). */
function longName(name: string, entry: GuestEntry): string {
  const kind = entry.type === 'directory' ? 'd' : entry.type === 'symlink' ? 'l' : '-';
  const bits = [...'rwxrwxrwx'].map((c, i) => ((entry.mode >> (8 - i)) & 1 ? c : '-')).join('');
  return `${kind}${bits}    1 ${String(entry.uid).padEnd(8)} ${String(entry.gid).padEnd(8)} ${String(entry.size).padStart(8)} ${entry.mtime.toUTCString().slice(5, 22)} ${name}`;
}
