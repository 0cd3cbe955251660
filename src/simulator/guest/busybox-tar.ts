import type { Command, CommandContext, ExecResult, IFileSystem } from 'just-bash';
import { packTar, unpackTar, type TarEntry, type TarHeader } from 'modern-tar';
import { Files } from './busybox-file-calls.js';
import { banner } from './busybox-getopt.js';
import { openFailure } from './busybox-reads.js';
import { statusOf, type FileStatus } from './file-status.js';
import { isRefusal } from './guest-access.js';
import { stdinBytes, type ProgramHost } from './program-host.js';
import { codecOf, decode, encode, toCommand } from './busybox-tar-codecs.js';
import { extractOne, Run, TarDeath, why, type TarOptions } from './busybox-tar-extract.js';
import { errnos } from './fs-error.js';
import { stampText, zoneOf, type Zone } from './guest-zone.js';

const usage =
  `${banner}Usage: tar c|x|t [-ZzJjahmvokO] [-f TARFILE] [-C DIR] [FILE]...\n\nCreate, extract, or list files from a tar file\n\n` +
  '\tc\tCreate\n\tx\tExtract\n\tt\tList\n' +
  "\t-f FILE\tName of TARFILE ('-' for stdin/out)\n\t-C DIR\tChange to DIR before operation\n\t-v\tVerbose\n" +
  "\t-O\tExtract to stdout\n\t-m\tDon't restore mtime\n\t-o\tDon't restore user:group\n\t-k\tDon't replace existing files\n" +
  '\t-Z\t(De)compress using compress\n\t-z\t(De)compress using gzip\n\t-J\t(De)compress using xz\n\t-j\t(De)compress using bzip2\n' +
  '\t--lzma\t(De)compress using lzma\n\t-a\t(De)compress based on extension\n\t-h\tFollow symlinks\n' +
  '\t--overwrite\t\tReplace existing files\n\t--strip-components NUM\tNUM of leading components to strip\n' +
  "\t--no-recursion\t\tDon't descend in directories\n\t--numeric-owner\t\tUse numeric user:group\n" +
  "\t--no-same-permissions\tDon't restore access permissions\n\t--to-command COMMAND\tPipe files to COMMAND\n";

/** busybox's tar's option letters. */
const own = new Set([...'cxtfCOopvzjJZakmh']);
const ownLong = new Set([
  '--overwrite',
  '--no-recursion',
  '--numeric-owner',
  '--no-same-permissions',
  '--strip-components',
  '--lzma',
  '--to-command',
]);
/** The long options that take a value. */
const valued = new Set(['--strip-components', '--to-command']);

/** A command line tar refuses: what it says (status 1). */
interface Refusal {
  refused: string;
}

/**
 * busybox's reading of tar's command line (getopt32 with its long options): a first word without
 * `-` is options (`cvf`), values for -f and -C in order; an unknown option is refused with the
 * usage.
 */
function parse(args: string[]): TarOptions | Refusal {
  const argv = args.length && !args[0]!.startsWith('-') ? [`-${args[0]}`, ...args.slice(1)] : [...args];
  const flags = new Set<string>();
  const members: string[] = [];
  let file: string | undefined;
  let dir: string | undefined;
  let strip = 0;
  let command: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      members.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const [option, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
      if (!ownLong.has(option)) return { refused: `tar: unrecognized option '${a}'\n${usage}` };
      if (!valued.has(option)) {
        flags.add(option);
        continue;
      }
      const value = inline ?? argv[++i];
      if (value === undefined) return { refused: `tar: option '${option}' requires an argument\n${usage}` };
      if (option === '--to-command') command = value;
      else if (!/^\d+$/.test(value)) return { refused: `tar: invalid number '${value}'\n` };
      else strip = Number(value);
      continue;
    }
    if (!a.startsWith('-') || a === '-') {
      members.push(a);
      continue;
    }
    for (let j = 1; j < a.length; j++) {
      const c = a[j]!;
      if (!own.has(c)) return { refused: `tar: invalid option -- '${c}'\n${usage}` };
      if (c === 'f' || c === 'C') {
        const value = j + 1 < a.length ? a.slice(j + 1) : argv[++i];
        if (value === undefined) return { refused: `tar: option requires an argument -- '${c}'\n${usage}` };
        if (c === 'f') file = value;
        else dir = value;
        break;
      }
      flags.add(c);
    }
  }
  const modes = (['c', 'x', 't'] as const).filter((m) => flags.has(m));
  if (modes.length !== 1) return { refused: usage };
  return { mode: modes[0]!, flags, file, dir, strip, members, ...(command === undefined ? {} : { toCommand: command }) };
}

/** `drwxr-x---` of a tar header's type and mode (bb_mode_string). */
function modeString(header: TarHeader): string {
  const type = header.type === 'directory' ? 'd' : header.type === 'symlink' ? 'l' : '-';
  const m = header.mode ?? 0;
  const rwx = (bits: number, special: boolean, letter: string): string =>
    `${bits & 4 ? 'r' : '-'}${bits & 2 ? 'w' : '-'}${special ? (bits & 1 ? letter : letter.toUpperCase()) : bits & 1 ? 'x' : '-'}`;
  return type + rwx(m >> 6, (m & 0o4000) !== 0, 's') + rwx(m >> 3, (m & 0o2000) !== 0, 's') + rwx(m, (m & 0o1000) !== 0, 't');
}

/** header_verbose_list: mode, owner (names, else numbers), size in 9, time in `zone`, name, `-> target`. */
function verboseLine(header: TarHeader, zone: Zone): string {
  const when = stampText(zone, (header.mtime ?? new Date(0)).getTime());
  const owner = `${header.uname || header.uid || 0}/${header.gname || header.gid || 0}`;
  const size = header.type === 'file' || header.type === undefined ? header.size : 0;
  const target = header.linkname ? ` -> ${header.linkname}` : '';
  return `${modeString(header)} ${owner} ${String(size).padStart(9)} ${when} ${header.name}${target}\n`;
}

/** Names by id from /etc/passwd or /etc/group. */
async function names(fs: IFileSystem, file: string): Promise<Map<number, string>> {
  const text = await fs.readFile(file).catch(() => '');
  return new Map(
    text
      .split('\n')
      .map((l) => l.split(':'))
      .filter((f) => f.length > 2 && /^\d+$/.test(f[2]!))
      .map((f) => [Number(f[2]), f[0]!] as const),
  );
}

/**
 * The checks busybox's get_header_tar makes that modern-tar does not: the archive ends with a zero
 * block followed by another (less than a block is `short read`), a header without ustar's magic is
 * `invalid tar magic`, an entry whose data is cut short `short read`.
 */
function checkArchive(data: Uint8Array): void {
  let at = 0;
  for (;;) {
    if (data.length < at + 512) throw new TarDeath('short read');
    const block = data.subarray(at, at + 512);
    if (block.every((b) => b === 0)) {
      if (data.length < at + 1024) throw new TarDeath('short read');
      return;
    }
    if (Buffer.from(block.subarray(257, 262)).toString('latin1') !== 'ustar') throw new TarDeath('invalid tar magic');
    const size = parseInt(Buffer.from(block.subarray(124, 136)).toString('latin1').replace(/\0.*$/, '').trim() || '0', 8);
    const type = String.fromCharCode(block[156]!);
    const body = type === '1' || type === '2' || type === '5' ? 0 : size;
    at += 512 + Math.ceil(body / 512) * 512;
    if (data.length < at) throw new TarDeath('short read');
  }
}

/** A member's name as busybox stores and extracts it: leading `/` removed, said once. */
function stripLeadingSlash(run: Run, said: { done: boolean }, name: string): string {
  if (!name.startsWith('/')) return name;
  if (!said.done) run.warn("removing leading '/' from member names");
  said.done = true;
  return name.replace(/^\/+/, '');
}

/** Creating: each operand and what is under it, in the order the directories list them. */
async function create(
  host: ProgramHost,
  ctx: CommandContext,
  o: TarOptions,
  cwd: string,
  run: Run,
  archivePath: string | undefined,
): Promise<Buffer> {
  const files = new Files(ctx.fs, cwd);
  const users = await names(ctx.fs, '/etc/passwd');
  const groups = await names(ctx.fs, '/etc/group');
  const entries: TarEntry[] = [];
  const linked = new Map<number, string>();
  const said = { done: false };
  const follow = o.flags.has('h');
  const verboseTo = (line: string): void => {
    if (!o.flags.has('v')) return;
    if (o.file === undefined || o.file === '-') run.err(line);
    else run.out(line);
  };
  const add = async (name: string): Promise<void> => {
    const path = files.abs(name);
    const st: FileStatus | undefined = await statusOf(host.fs, path, follow);
    if (!st) return run.error(`${name}: ${errnos[await files.missing(name)]}`);
    const stored = stripLeadingSlash(run, said, name);
    if (archivePath !== undefined && st.type === 'file' && (await host.fs.memory.realpath(path).catch(() => path)) === archivePath)
      return run.warn(`${name}: file is the archive; skipping`);
    const header: TarHeader = {
      name: st.type === 'directory' ? `${stored.replace(/\/*$/, '')}/` : stored,
      size: 0,
      mode: st.perm,
      uid: st.uid,
      gid: st.gid,
      uname: users.get(st.uid) ?? '',
      gname: groups.get(st.gid) ?? '',
      mtime: new Date(Math.floor(st.mtime.getTime() / 1000) * 1000),
    };
    if (st.type === 'symlink') entries.push({ header: { ...header, type: 'symlink', linkname: st.target } });
    else if (st.type === 'file' && st.nlink > 1 && linked.has(st.ino))
      entries.push({ header: { ...header, type: 'link', linkname: linked.get(st.ino) } });
    else if (st.type === 'file') {
      let data: Uint8Array;
      try {
        data = await ctx.fs.readFileBuffer(path);
      } catch (e) {
        return run.error(`can't open '${name}': ${isRefusal(e) ? errnos.EACCES : errnos.ENOENT}`);
      }
      if (st.nlink > 1) linked.set(st.ino, stored);
      entries.push({ header: { ...header, type: 'file', size: data.length }, body: data });
    } else entries.push({ header: { ...header, type: 'directory' } });
    verboseTo(`${stored}${st.type === 'directory' && !stored.endsWith('/') ? '/' : ''}\n`);
    if (st.type !== 'directory' || o.flags.has('--no-recursion')) return;
    let list: string[];
    try {
      list = await host.fs.list(await host.fs.memory.realpath(path));
    } catch (e) {
      if (!isRefusal(e)) throw e;
      return run.error(`${name}: ${errnos.EACCES}`);
    }
    for (const entry of list) await add(name.endsWith('/') ? `${name}${entry}` : `${name}/${entry}`);
  };
  for (const m of o.members) await add(m);
  return Buffer.from(await packTar(entries));
}

/** Whether a member is one the operands name: the name itself or a directory holding it. */
const wanted = (members: string[], name: string): string | undefined =>
  members.find((m) => {
    const bare = m.replace(/\/+$/, '');
    const n = name.replace(/\/+$/, '');
    return n === bare || n.startsWith(`${bare}/`);
  });

/**
 * busybox 1.35's `tar` (archival/tar.c) over the guest's files: `c`, `x`, `t` with `-f -C -v -O
 * -o -p -k -m -h`, `--overwrite --no-recursion --numeric-owner --no-same-permissions
 * --strip-components --to-command`, and the compressors `-z -j -J -Z --lzma -a` (busybox-tar-codecs.ts:
 * the guest's own codecs and applets, so `-J`, `--lzma` and `-Z` create nothing, as this busybox's
 * cannot); modern-tar writes and reads the ustar format.
 * It keeps symlinks and hard links as such and, extracting, restores them, and restores modes:
 * as they are for root, less the umask for another user (and their owners for root); a file it
 * cannot read, a directory it cannot list, and a missing operand are said and end it with status 1
 * at the end (`error exit delayed from previous errors`), an archive it cannot open at once; a
 * decompressor that fails says why, and tar reads what it wrote before, and ends with 1.
 */
export function tarCommand(host: ProgramHost): Command {
  return {
    name: 'tar',
    async execute(args, ctx): Promise<ExecResult> {
      if (args.length === 1 && args[0] === '--help') return { stdout: '', stderr: usage, exitCode: 0 };
      const o = parse(args);
      if ('refused' in o) return { stdout: '', stderr: o.refused, exitCode: 1 };
      const run = new Run();
      const files = new Files(ctx.fs, ctx.cwd);
      const codec = codecOf(o.flags, o.mode, o.file);
      // A decompressor that failed fails tar at its end (check_errors_in_children).
      let childFailed = false;
      // --to-command with -v: tar's own lines, held in its stdio buffer until it ends.
      let held = '';
      const result = (raw?: Buffer): ExecResult => {
        if (run.delayed) run.warn('error exit delayed from previous errors');
        const exitCode = run.delayed || childFailed ? 1 : 0;
        if (raw) run.bytes(raw);
        return run.result(exitCode);
      };
      try {
        let cwd = ctx.cwd;
        if (o.mode === 'c') {
          if (o.members.length === 0) throw new TarDeath('empty archive');
          const toFile = o.file !== undefined && o.file !== '-';
          const archivePath = toFile ? files.abs(o.file!) : undefined;
          if (toFile) {
            try {
              await ctx.fs.writeFile(archivePath!, new Uint8Array());
            } catch (e) {
              throw new TarDeath(`can't open '${o.file}': ${why(e)}`);
            }
          }
          if (o.dir !== undefined) cwd = await changeDir(files, o.dir);
          const tar = await create(host, ctx, o, cwd, run, archivePath && (await host.fs.memory.realpath(archivePath).catch(() => archivePath)));
          const encoded = codec ? await encode(host, ctx, codec, tar) : { data: tar };
          if ('failed' in encoded) {
            run.err(encoded.failed);
            return run.result(1);
          }
          if (!toFile) return result(encoded.data);
          await ctx.fs.writeFile(archivePath!, encoded.data);
          return result();
        }
        let data: Buffer;
        if (o.file === undefined || o.file === '-') data = stdinBytes(ctx);
        else {
          const failure = await openFailure(ctx.fs, ctx.cwd, o.file);
          if (failure) throw new TarDeath(`can't open '${o.file}': ${failure}`);
          try {
            data = Buffer.from(await ctx.fs.readFileBuffer(files.abs(o.file)));
          } catch (e) {
            throw new TarDeath(`read error: ${why(e)}`);
          }
        }
        if (o.dir !== undefined) cwd = await changeDir(files, o.dir);
        if (codec) {
          const decoded = await decode(codec, data);
          if (decoded.error !== undefined) {
            run.warn(decoded.error);
            childFailed = true;
          }
          data = decoded.data;
        }
        checkArchive(data);
        const said = { done: false };
        const found = new Set<string>();
        let out = Buffer.alloc(0);
        for (const entry of await unpackTar(data)) {
          const header = { ...entry.header, name: stripLeadingSlash(run, said, entry.header.name) };
          if (o.strip) {
            const parts = header.name.split('/').filter(Boolean);
            if (parts.length <= o.strip) continue;
            header.name = parts.slice(o.strip).join('/') + (header.type === 'directory' ? '/' : '');
          }
          if (o.members.length) {
            const hit = wanted(o.members, header.name);
            if (hit === undefined) continue;
            found.add(hit);
          }
          const regular = header.type === 'file' || header.type === undefined;
          const listed =
            o.mode === 't' ? (o.flags.has('v') ? verboseLine(header, zoneOf(ctx)) : `${header.name}\n`) : o.flags.has('v') ? `${header.name}\n` : '';
          // --to-command takes each file's data whatever else was asked (`t`, `-O`): tar's own lines
          // wait in its stdio buffer (written as it ends), where the command writes at once.
          if (o.toCommand !== undefined) {
            held += listed;
            if (regular) await pipeTo(ctx, run, o.toCommand, header, entry.data);
            continue;
          }
          run.out(listed);
          if (o.mode === 't') continue;
          if (o.flags.has('O')) {
            if (entry.data && regular) out = Buffer.concat([out, Buffer.from(entry.data)]);
            continue;
          }
          await extractOne(host, ctx, o, cwd, run, header, entry.data);
        }
        run.out(held);
        held = '';
        const missing = o.members.find((m) => !found.has(m));
        if (missing !== undefined) throw new TarDeath(`${missing}: not found in archive`);
        return out.length ? result(out) : result();
      } catch (e) {
        if (!(e instanceof TarDeath)) throw e;
        run.out(held);
        run.warn(e.message);
        return run.result(1);
      }
    },
  };
}

/** -C DIR: the directory to work in, or busybox's `can't change directory to 'DIR'`. */
async function changeDir(files: Files, dir: string): Promise<string> {
  const st = await files.stat(dir);
  if (!st) throw new TarDeath(`can't change directory to '${dir}': ${errnos[await files.missing(dir)]}`);
  if (st.kind !== 'directory') throw new TarDeath(`can't change directory to '${dir}': ${errnos.ENOTDIR}`);
  return files.abs(dir);
}

/** --to-command for one regular file: the command's output is tar's, and a status that is not 0 ends tar. */
async function pipeTo(ctx: CommandContext, run: Run, command: string, header: TarHeader, data: Uint8Array | undefined): Promise<void> {
  const member = {
    name: header.name,
    mode: header.mode ?? 0o644,
    size: header.size ?? 0,
    uid: header.uid ?? 0,
    gid: header.gid ?? 0,
    uname: header.uname ?? '',
    gname: header.gname ?? '',
  };
  const ran = await toCommand(ctx, command, member, data ?? new Uint8Array());
  run.append(ran);
  if (ran.exitCode !== 0) throw new TarDeath(`'${command}' returned status ${ran.exitCode}`);
}
