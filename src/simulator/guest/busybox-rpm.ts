import { posix } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { readCpio } from './busybox-cpio.js';
import { Died, openFile } from './busybox-deb.js';
import { banner, getopt, isResult } from './busybox-getopt.js';
import { bunzip, unxz } from './busybox-unpack.js';
import { unpackLzma } from './lz-streams.js';
import { mkdirs, stdinBytes, type ProgramHost } from './program-host.js';
import { bytesOutput } from './bytes-output.js';

const rpmUsageText =
  `Usage: rpm -i PACKAGE.rpm; rpm -qp[ildc] PACKAGE.rpm\n\nManipulate RPM packages\n\nCommands:\n` +
  '\t-i\tInstall package\n\t-qp\tQuery package\n\t-qpi\tShow information\n\t-qpl\tList contents\n\t-qpd\tList documents\n\t-qpc\tList config files\n';
const rpmUsage = `${banner}${rpmUsageText}`;

const tags = {
  name: 1000,
  version: 1001,
  release: 1002,
  summary: 1004,
  description: 1005,
  buildTime: 1006,
  buildHost: 1007,
  size: 1009,
  vendor: 1011,
  license: 1014,
  group: 1016,
  url: 1020,
  fileFlags: 1037,
  fileUserName: 1039,
  fileGroupName: 1040,
  sourceRpm: 1044,
  prefixes: 1098,
  dirIndexes: 1116,
  baseNames: 1117,
  dirNames: 1118,
  payloadCompressor: 1125,
} as const;

const fileConfig = 1;
const fileDoc = 2;

/** One entry of an rpm header's index: where its value lies in the file. */
interface RpmTag {
  tag: number;
  type: number;
  offset: number;
  count: number;
}

/** An rpm package as busybox's rpm_gettags reads it: the tags of both headers and where the payload starts. */
class RpmPackage {
  constructor(
    private readonly file: Buffer,
    private readonly index: RpmTag[],
    readonly payloadAt: number,
  ) {}

  /** Reads the lead, the signature header and the main header; throws busybox's message for what is not an rpm. */
  static read(file: Buffer, name: string): RpmPackage {
    const index: RpmTag[] = [];
    let at = 96;
    for (let pass = 0; pass < 2; pass++) {
      if (file.length < at + 16) throw new Died('short read');
      if (file.readUInt32BE(at) !== 0x8eade801) throw new Died(`invalid RPM header magic in '${name}'`);
      const count = file.readUInt32BE(at + 8);
      let size = file.readUInt32BE(at + 12);
      const store = at + 16 + count * 16;
      if (file.length < store) throw new Died('short read');
      for (let i = 0; i < count; i++) {
        const e = at + 16 + i * 16;
        const tag = file.readUInt32BE(e);
        // The signature's tags are moved below the main header's, as busybox does.
        index.push({
          tag: pass === 0 ? (tag - 743) >>> 0 : tag,
          type: file.readUInt32BE(e + 4),
          offset: store + file.readUInt32BE(e + 8),
          count: file.readUInt32BE(e + 12),
        });
      }
      if (pass === 0) size = Math.ceil(size / 8) * 8;
      at = store + size;
    }
    return new RpmPackage(file, index, at);
  }

  private find(tag: number): RpmTag | undefined {
    return this.index.find((t) => t.tag === tag);
  }

  /** The `item`th string of a string tag, or undefined (busybox's NULL). */
  str(tag: number, item = 0): string | undefined {
    const t = this.find(tag);
    if (!t || item >= t.count || ![6, 8, 9].includes(t.type)) return undefined;
    let at = t.offset;
    for (let n = 0; n < item; n++) at = this.file.indexOf(0, at) + 1;
    const end = this.file.indexOf(0, at);
    return this.file.subarray(at, end < 0 ? undefined : end).toString('utf8');
  }

  /** The `item`th number of an integer tag, or -1. */
  int(tag: number, item = 0): number {
    const t = this.find(tag);
    if (!t || item >= t.count) return -1;
    if (t.type === 4) return this.file.readInt32BE(t.offset + item * 4);
    if (t.type === 3) return this.file.readUInt16BE(t.offset + item * 2);
    if (t.type === 2) return this.file.readInt8(t.offset + item);
    return -1;
  }

  count(tag: number): number {
    return this.find(tag)?.count ?? 0;
  }

  /** The path of the `item`th file. */
  path(item: number): string {
    return `${this.str(tags.dirNames, this.int(tags.dirIndexes, item)) ?? '(null)'}${this.str(tags.baseNames, item) ?? '(null)'}`;
  }

  /**
   * The payload (a cpio archive) decompressed as busybox's setup_unzip_on_fd finds its format by
   * its magic; `lzma` (rpm2cpio's): an LZMA stream, which has none, where the header says so.
   */
  async payload(lzma = false): Promise<Buffer> {
    const data = this.file.subarray(this.payloadAt);
    if (lzma && this.str(tags.payloadCompressor) === 'lzma') {
      const unpacked = unpackLzma(data);
      if (unpacked.error !== undefined) throw new Died(unpacked.error);
      return unpacked.output;
    }
    const magic = data.subarray(0, 6).toString('hex');
    try {
      if (magic.startsWith('1f8b')) return gunzipSync(data);
      if (magic.startsWith('425a')) return await bunzip(data);
      if (magic === 'fd377a585a00') return await unxz(data);
    } catch (err) {
      throw new Died(err instanceof Died ? err.message : (err as Error).message.startsWith('bunzip') ? (err as Error).message : 'corrupted data');
    }
    if (data.length < 2) throw new Died('short read');
    throw new Died('no gzip/bzip2/xz magic');
  }
}

const show = (s: string | undefined): string => s ?? '(null)';

const weekdays = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number): string => String(n).padStart(2, '0');

/** strftime's "%a %d %b %Y %T %Z" in the guest's zone (UTC). */
function buildDate(seconds: number): string {
  const t = new Date(seconds * 1000);
  const time = `${two(t.getUTCHours())}:${two(t.getUTCMinutes())}:${two(t.getUTCSeconds())}`;
  return `${weekdays[t.getUTCDay()]} ${two(t.getUTCDate())} ${months[t.getUTCMonth()]} ${t.getUTCFullYear()} ${time} UTC`;
}

/** `rpm -qpi`'s description of a package. */
function info(rpm: RpmPackage): string {
  const line = (label: string, value: string): string => `${label.padEnd(12)}: ${value}\n`;
  let out = line('Name', show(rpm.str(tags.name))) + line('Version', show(rpm.str(tags.version))) + line('Release', show(rpm.str(tags.release)));
  out += line('Group', show(rpm.str(tags.group))) + line('Size', String(rpm.int(tags.size))) + line('License', show(rpm.str(tags.license)));
  out += line('Source RPM', rpm.str(tags.sourceRpm) ?? '(none)') + line('Build Date', buildDate(rpm.int(tags.buildTime)));
  out += line('Build Host', show(rpm.str(tags.buildHost))) + line('Relocations', rpm.str(tags.prefixes) ?? '(not relocatable)');
  const vendor = rpm.str(tags.vendor);
  if (vendor !== undefined) out += line('Vendor', vendor);
  const url = rpm.str(tags.url);
  if (url !== undefined) out += line('URL', url);
  return `${out}${line('Summary', show(rpm.str(tags.summary)))}Description :\n${show(rpm.str(tags.description))}\n`;
}

/** An id by name from the guest's passwd or group file, or undefined. */
async function idOf(host: ProgramHost, file: string, name: string | undefined): Promise<number | undefined> {
  if (name === undefined) return undefined;
  const text = await host.fs
    .read(file)
    .then((b) => b.toString('utf8'))
    .catch(() => '');
  const fields = text
    .split('\n')
    .map((l) => l.split(':'))
    .find((f) => f[0] === name);
  return fields ? Number(fields[2]) : undefined;
}

/**
 * `rpm -i`: config files that are there are kept as NAME.rpmorig, the payload is extracted (under /
 * for a binary package, the current directory for a source one) with leading directories, replacing
 * what is there and restoring mtimes, then each file is given its owner and group by name.
 */
async function install(host: ProgramHost, ctx: CommandContext, rpm: RpmPackage): Promise<void> {
  const files = rpm.count(tags.baseNames);
  for (let i = 0; i < files; i++) {
    if (!(rpm.int(tags.fileFlags, i) & fileConfig)) continue;
    const path = rpm.path(i);
    const entry = await host.fs.entry(path);
    if (entry?.type !== 'file') continue;
    const backup = `${path}.rpmorig`;
    if (await host.fs.entry(backup)) await host.fs.remove(backup);
    await host.fs.write(backup, await host.fs.read(path), entry);
    await host.fs.memory.utimes(backup, entry.mtime, entry.mtime);
    await host.fs.remove(path);
  }
  const base = rpm.str(tags.sourceRpm) === undefined ? ctx.cwd : '/';
  const archive = readCpio(await rpm.payload());
  if (typeof archive === 'string') throw new Died(archive);
  for (const e of archive.entries) {
    const target = posix.resolve(base, e.name);
    const type = e.mode & 0o170000;
    await mkdirs(host, posix.dirname(target));
    const existing = await host.fs.entry(target);
    const owner = host.uid === 0 ? { uid: e.uid, gid: e.gid } : { uid: host.uid, gid: host.gid };
    if (type === 0o040000) {
      if (!existing) await host.fs.mkdir(target, { ...owner, mode: e.mode & 0o7777 });
      else await host.fs.setMeta(target, { ...owner, mode: e.mode & 0o7777 });
    } else {
      if (existing && existing.type !== 'directory') await host.fs.remove(target);
      if (type === 0o120000) await host.fs.symlink(e.data.toString('utf8'), target, owner);
      else await host.fs.write(target, e.data, { ...owner, mode: e.mode & 0o7777 });
    }
    if (type !== 0o120000) await host.fs.memory.utimes(target, new Date(e.mtime * 1000), new Date(e.mtime * 1000));
  }
  if (host.uid !== 0) return;
  for (let i = 0; i < files; i++) {
    const path = rpm.path(i);
    const entry = await host.fs.entry(path);
    if (!entry) continue;
    const uid = (await idOf(host, '/etc/passwd', rpm.str(tags.fileUserName, i))) ?? host.uid;
    const gid = (await idOf(host, '/etc/group', rpm.str(tags.fileGroupName, i))) ?? host.gid;
    await host.fs.setMeta(path, { uid, gid, mode: entry.mode });
  }
}

/** What `-qp` with `l`, `d` or `c` lists: the files, the documents, the config files, or both of the last. */
function listing(rpm: RpmPackage, docs: boolean, configs: boolean): string {
  let out = '';
  for (let i = 0; i < rpm.count(tags.baseNames); i++) {
    const flags = rpm.int(tags.fileFlags, i);
    const wanted = docs && configs ? flags & (fileConfig | fileDoc) : docs ? flags & fileDoc : configs ? flags & fileConfig : 1;
    if (wanted) out += `${rpm.path(i)}\n`;
  }
  return out;
}

/**
 * busybox's `rpm`, which has no database: `-i` installs a package file, `-qp` names it, `-qpi`
 * describes it, `-qpl` lists its files (`-qpd` documents, `-qpc` config files); options as
 * busybox's getopt reads them (`-q` first, `-i` after it means information).
 */
function rpmProgram(host: ProgramHost): Command {
  return {
    name: 'rpm',
    async execute(args, ctx): Promise<ExecResult> {
      const usage = (): ExecResult => ({ stdout: '', stderr: rpmUsage, exitCode: 1 });
      let install_ = false;
      let query = false;
      let pkg = false;
      let infoWanted = false;
      let list = false;
      let docs = false;
      let configs = false;
      let started = false;
      const p = getopt('rpm', rpmUsageText, args, 'iqpldc', '', null, {
        onOption: (c) => {
          if (c === 'i') {
            if (!started) install_ = true;
            else infoWanted = true;
          } else if (c === 'q') {
            if (started) return usage();
            query = true;
          } else if (c === 'p') pkg = true;
          else if (c === 'l') list = true;
          else if (c === 'd') list = docs = true;
          else if (c === 'c') list = configs = true;
          started = true;
          return undefined;
        },
      });
      if (isResult(p)) return p;
      const files = p.operands;
      if (files.length === 0) return usage();
      let stdout = '';
      try {
        for (const file of files) {
          const rpm = RpmPackage.read(await openFile(host, ctx, file), file);
          if (install_) await install(host, ctx, rpm);
          else if (query && pkg) {
            if (!infoWanted && !list) stdout += `${show(rpm.str(tags.name))}-${show(rpm.str(tags.version))}-${show(rpm.str(tags.release))}\n`;
            if (infoWanted) stdout += info(rpm);
            if (list) stdout += listing(rpm, docs, configs);
          } else return { stdout, stderr: rpmUsage, exitCode: 1 };
        }
      } catch (err) {
        if (!(err instanceof Died)) throw err;
        return { stdout, stderr: `rpm: ${err.message}\n`, exitCode: 1 };
      }
      return { stdout, stderr: '', exitCode: 0 };
    },
  };
}

/**
 * busybox's `rpm2cpio`: the package's payload, decompressed, to stdout; the package is the first
 * operand, or stdin (which an exec's empty stdin cannot seek past the lead of).
 */
function rpm2cpioProgram(host: ProgramHost): Command {
  return {
    name: 'rpm2cpio',
    async execute(args, ctx): Promise<ExecResult> {
      const file = args[0];
      try {
        let data: Buffer;
        if (file === undefined) {
          data = stdinBytes(ctx);
          if (data.length === 0) throw new Died('lseek(96, 1): Illegal seek');
        } else data = await openFile(host, ctx, file);
        const rpm = RpmPackage.read(data, file ?? 'standard output');
        return bytesOutput(await rpm.payload(true));
      } catch (err) {
        if (!(err instanceof Died)) throw err;
        return { stdout: '', stderr: `rpm2cpio: ${err.message}\n`, exitCode: 1 };
      }
    },
  };
}

/** busybox's `rpm` and `rpm2cpio`. */
export function rpmPrograms(host: ProgramHost): Command[] {
  return [rpmProgram(host), rpm2cpioProgram(host)];
}
