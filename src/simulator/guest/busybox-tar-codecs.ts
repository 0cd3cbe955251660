import type { Command, CommandContext, ExecResult } from 'just-bash';
import { busyboxLz } from './busybox-lz.js';
import { gunzip, gzipStream } from './busybox-gzip.js';
import { bunzip, busyboxUnpackers, unxz } from './busybox-unpack.js';
import { unpackLzma, unpackZ } from './lz-streams.js';
import type { ProgramHost } from './program-host.js';

/** The compressors busybox 1.35's tar (de)compresses with, by the program it runs for each. */
export type TarCodec = 'gzip' | 'bzip2' | 'xz' | 'lzma' | 'compress';

/** The option that names each compressor: `-z`, `-j`, `-J`, `-Z`, `--lzma`. */
const byOption: [string, TarCodec][] = [
  ['Z', 'compress'],
  ['z', 'gzip'],
  ['j', 'bzip2'],
  ['--lzma', 'lzma'],
  ['J', 'xz'],
];

/** `-a` when creating: the archive's name's ending (is_suffixed_with, so `.tgz` and `.tbz2` count too, `.tbz` and `.Z` do not). */
const bySuffix: [string, TarCodec][] = [
  ['gz', 'gzip'],
  ['bz2', 'bzip2'],
  ['xz', 'xz'],
  ['lzma', 'lzma'],
];

/**
 * The compressor a tar command line names: its option, else, creating with `-a`, the archive's
 * name's ending. `-a` does nothing when reading (the Debian build has no autodetection:
 * `tar tf x.tar.bz2` is `short read`).
 */
export function codecOf(flags: ReadonlySet<string>, mode: 'c' | 'x' | 't', file: string | undefined): TarCodec | undefined {
  const named = byOption.find(([option]) => flags.has(option))?.[1];
  if (named || mode !== 'c' || !flags.has('a') || file === undefined) return named;
  return bySuffix.find(([suffix]) => file.endsWith(suffix))?.[1];
}

/** What the decompressing child gave tar to read, and what it said if it failed. */
export interface Decoded {
  data: Buffer;
  error?: string;
}

/**
 * An archive decompressed as tar's child decompressor (open_transformer) does: with busybox's own
 * decoders (the applets' here), what it wrote before failing is read on, and its message comes first.
 */
export async function decode(codec: TarCodec, data: Buffer): Promise<Decoded> {
  const settled = async (decoding: () => Promise<Buffer>): Promise<Decoded> => {
    try {
      return { data: await decoding() };
    } catch (e) {
      const partial = (e as { output?: unknown }).output;
      return { data: Buffer.isBuffer(partial) ? partial : Buffer.alloc(0), error: (e as Error).message };
    }
  };
  const unpacked = (u: { output: Buffer; error?: string }): Decoded =>
    u.error === undefined ? { data: u.output } : { data: u.output, error: u.error };
  switch (codec) {
    case 'gzip':
      return unpacked(gunzip(data));
    case 'bzip2':
      return settled(() => bunzip(data));
    case 'xz':
      return settled(() => unxz(data));
    case 'lzma':
      return unpacked(unpackLzma(data));
    case 'compress':
      return unpacked(unpackZ(data));
  }
}

/** The compressed archive, or what the compressor said and that tar fails (status 1). */
export type Encoded = { data: Buffer } | { failed: string };

/**
 * An archive compressed as busybox's tar does (vfork_compressor): it runs the compressor applet
 * as `NAME -f` over its output. bzip2 compresses; this busybox's `xz` and `lzma` only decompress,
 * and refuse with their usage; it has no `compress` at all. gzip is deflated here at once, as the
 * `gzip` applet would.
 */
export async function encode(host: ProgramHost, ctx: Parameters<Command['execute']>[1], codec: TarCodec, data: Buffer): Promise<Encoded> {
  if (codec === 'gzip') return { data: gzipStream(data) };
  if (codec === 'compress') return { failed: "tar: can't execute 'compress': No such file or directory\n" };
  const applet = [...busyboxUnpackers(host), ...busyboxLz(host)].find((c) => c.name === codec)!;
  const ran = await applet.execute(['-f'], { ...ctx, stdin: data.toString('latin1') as unknown as CommandContext['stdin'] });
  if (ran.exitCode !== 0) return { failed: ran.stderr };
  return { data: Buffer.from(ran.stdout, ran.stdoutKind === 'bytes' ? 'latin1' : 'utf8') };
}

/** A member's header as --to-command's environment gives it. */
export interface MemberInfo {
  name: string;
  mode: number;
  size: number;
  uid: number;
  gid: number;
  uname: string;
  gname: string;
}

/**
 * `--to-command COMMAND` for one regular file (data_extract_to_command): `/bin/sh -c COMMAND` with
 * the member's data on stdin and its header in `TAR_*` variables, its output tar's; a status that
 * is not 0 ends tar (`'COMMAND' returned status N`, thrown as the message).
 */
export async function toCommand(ctx: CommandContext, command: string, member: MemberInfo, data: Uint8Array): Promise<ExecResult> {
  if (!ctx.exec) return { stdout: '', stderr: "tar: can't execute '/bin/sh': No such file or directory\n", exitCode: 1 };
  const env: Record<string, string> = {
    ...(ctx.exportedEnv ?? {}),
    TAR_FILETYPE: 'f',
    TAR_MODE: (0o100000 | (member.mode & 0o7777)).toString(8),
    TAR_FILENAME: member.name,
    TAR_REALNAME: member.name,
    TAR_UNAME: member.uname,
    TAR_GNAME: member.gname,
    TAR_SIZE: String(member.size),
    TAR_UID: String(member.uid),
    TAR_GID: String(member.gid),
  };
  return ctx.exec('/bin/sh', {
    args: ['-c', command],
    cwd: ctx.cwd,
    env,
    replaceEnv: true,
    stdin: Buffer.from(data).toString('latin1'),
    stdinKind: 'bytes',
  });
}
