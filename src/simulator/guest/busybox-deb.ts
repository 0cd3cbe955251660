import { posix } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { CommandContext } from 'just-bash';
import { unpackTar, type TarHeader } from 'modern-tar';
import { readAr } from './busybox-archives.js';
import { bunzip, unxz } from './busybox-unpack.js';
import { unpackLzma } from './lz-streams.js';
import { stdinBytes, type ProgramHost } from './program-host.js';
import { stampText, type Zone } from './guest-zone.js';

/** A program that stops with busybox's message (bb_error_msg_and_die): what it wrote before stays. */
export class Died extends Error {}

/** One entry of a tar archive with its bytes. */
export interface TarItem {
  header: TarHeader;
  data: Buffer;
}

/** Which part of a .deb: its control.tar.* or its data.tar.* member. */
export type DebPart = 'control' | 'data';

/**
 * The bytes of a file operand as busybox's xopen reads them (`-` as stdin where `stdin` allows);
 * throws busybox's message for a file it cannot open.
 */
export async function openFile(host: ProgramHost, ctx: CommandContext, file: string, stdin = false): Promise<Buffer> {
  if (stdin && file === '-') return stdinBytes(ctx);
  const path = posix.resolve(ctx.cwd, file);
  const entry = await host.fs.entry(path);
  if (!entry) throw new Died(`can't open '${file}': No such file or directory`);
  // Reading a directory fails as a read shorter than asked.
  if (entry.type === 'directory') return Buffer.alloc(0);
  return host.fs.read(path);
}

/** A tar member's bytes decompressed by its name's suffix, as busybox's filter_accept_list_reassign picks the unpacker. */
async function untarMember(name: string, data: Buffer): Promise<TarItem[]> {
  let tar = data;
  if (name.endsWith('.gz')) {
    try {
      tar = gunzipSync(data);
    } catch {
      throw new Died('invalid magic');
    }
  } else if (name.endsWith('.bz2')) tar = await bunzip(data).catch((err: Error) => Promise.reject(new Died(err.message)));
  else if (name.endsWith('.xz')) tar = await unxz(data).catch((err: Error) => Promise.reject(new Died(err.message)));
  else if (name.endsWith('.lzma')) {
    const unpacked = unpackLzma(data);
    if (unpacked.error !== undefined) throw new Died(unpacked.error);
    tar = unpacked.output;
  }
  const entries = await unpackTar(new Uint8Array(tar));
  return entries.map((e) => ({ header: e.header, data: Buffer.from(e.data ?? new Uint8Array()) }));
}

/**
 * The tar entries of a .deb's control or data member (`control.tar[.gz|.bz2|.xz]`, `.lzma` where
 * `lzma` says the program takes it), as busybox's unpack_ar_archive reaches it; none when the
 * package has no such member. Throws busybox's message for what is not an ar archive.
 */
export async function debTar(deb: Buffer, part: DebPart, lzma = true): Promise<TarItem[]> {
  if (deb.length < 7) throw new Died('short read');
  if (deb.subarray(0, 7).toString('latin1') !== '!<arch>') throw new Died('invalid ar magic');
  const members = readAr(deb);
  if (typeof members === 'string') throw new Died(members);
  const wanted = ['', '.gz', '.bz2', '.xz', ...(lzma ? ['.lzma'] : [])].map((suffix) => `${part}.tar${suffix}`);
  const member = members.find((m) => wanted.includes(m.name));
  return member ? untarMember(member.name, member.data) : [];
}

/** `ls -l`'s type and permission letters (bb_mode_string) of a tar entry. */
export function modeString(header: TarHeader): string {
  const letters: Record<string, string> = { directory: 'd', symlink: 'l', 'character-device': 'c', 'block-device': 'b', fifo: 'p' };
  const type = letters[header.type ?? 'file'] ?? '-';
  const mode = header.mode ?? 0;
  const bit = (on: number, special: number, letter: string): string =>
    mode & special ? (mode & on ? letter : letter.toUpperCase()) : mode & on ? 'x' : '-';
  const rw = (s: number): string => `${mode & (4 << s) ? 'r' : '-'}${mode & (2 << s) ? 'w' : '-'}`;
  return `${type}${rw(6)}${bit(0o100, 0o4000, 's')}${rw(3)}${bit(0o010, 0o2000, 's')}${rw(0)}${bit(0o001, 0o1000, 't')}`;
}

/** busybox's header_verbose_list line of a tar entry (dpkg-deb -c), its time in `zone`. */
export function verboseLine({ header, data }: TarItem, zone: Zone): string {
  const date = stampText(zone, (header.mtime ?? new Date(0)).getTime());
  const user = header.uname || String(header.uid ?? 0);
  const group = header.gname || String(header.gid ?? 0);
  const link = header.type === 'symlink' || header.type === 'link' ? ` -> ${header.linkname}` : '';
  return `${modeString(header)} ${user}/${group} ${String(data.length).padStart(9)} ${date} ${header.name}${link}\n`;
}

/** A link busybox makes once the whole archive is out: a hard link, or a symlink that points out of it. */
export interface PendingLink {
  hard: boolean;
  /** The link's target as the archive has it (a hard link's: relative to the program's directory). */
  target: string;
  path: string;
  /** The link's name in busybox's message. */
  shown: string;
}

/** How {@link extractEntry} treats what is already there, and where it leaves the links it makes last. */
export interface ExtractOptions {
  /** Replaces an existing file (ARCHIVE_UNLINK_OLD); otherwise it is busybox's "File exists". */
  unlinkOld?: boolean;
  links: PendingLink[];
}

/**
 * One tar entry written where `target` says, as busybox's data_extract_all does without leading
 * directories: its mode, and root keeps the archive's owners (anyone else owns what it makes);
 * hard links and symlinks out of the archive (absolute, or through `..`) wait in `links` for
 * {@link makeLinks}. Throws busybox's message (naming `shown`) for what it cannot make.
 */
export async function extractEntry(host: ProgramHost, target: string, shown: string, item: TarItem, options: ExtractOptions): Promise<void> {
  const { header } = item;
  const owner = host.uid === 0 ? { uid: header.uid ?? 0, gid: header.gid ?? 0 } : { uid: host.uid, gid: host.gid };
  const mode = (header.mode ?? 0o644) & 0o7777;
  const existing = await host.fs.entry(target);
  if (header.type === 'directory') {
    if (!existing) {
      if (!(await host.fs.entry(posix.dirname(target)))) throw new Died(`can't make dir ${shown}: No such file or directory`);
      await host.fs.mkdir(target, { ...owner, mode });
    }
    if ((await host.fs.entry(target))?.type === 'directory') await host.fs.setMeta(target, { ...owner, mode });
    return;
  }
  if (existing && options.unlinkOld && existing.type !== 'directory') await host.fs.remove(target);
  const linkTarget = header.linkname ?? '';
  if (header.type === 'link' || (header.type === 'symlink' && (linkTarget.startsWith('/') || linkTarget.includes('..')))) {
    options.links.push({ hard: header.type === 'link', target: linkTarget, path: target, shown });
    return;
  }
  const there = options.unlinkOld ? undefined : existing;
  if (header.type === 'symlink') {
    if (there || (await host.fs.entry(posix.dirname(target)))?.type !== 'directory')
      throw new Died(`can't create symlink '${shown}' to '${linkTarget}': ${there ? 'File exists' : 'No such file or directory'}`);
    await host.fs.symlink(linkTarget, target, owner);
    return;
  }
  if (there) throw new Died(`can't open '${shown}': File exists`);
  if ((await host.fs.entry(posix.dirname(target)))?.type !== 'directory') throw new Died(`can't open '${shown}': No such file or directory`);
  await host.fs.write(target, item.data, { ...owner, mode });
}

/** The links {@link extractEntry} left, made in order (a hard link's target found from `cwd`); busybox stops at one it cannot make. */
export async function makeLinks(host: ProgramHost, cwd: string, links: PendingLink[]): Promise<void> {
  for (const link of links.splice(0)) {
    const failed = new Died(`can't create ${link.hard ? 'hard' : 'sym'}link '${link.shown}' to '${link.target}'`);
    if ((await host.fs.entry(link.path)) || (await host.fs.entry(posix.dirname(link.path)))?.type !== 'directory') throw failed;
    if (!link.hard) {
      await host.fs.symlink(link.target, link.path, { uid: host.uid, gid: host.gid });
      continue;
    }
    const source = posix.resolve(cwd, link.target);
    const entry = await host.fs.entry(source);
    if (!entry || entry.type === 'directory') throw failed;
    await host.fs.memory.link(source, link.path);
    await host.fs.setMeta(link.path, entry);
  }
}
