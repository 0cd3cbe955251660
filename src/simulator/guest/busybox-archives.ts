import { posix } from 'node:path';
import AdmZip from 'adm-zip';
import libbzip2, { type Bzip2, type Bzip2Module } from 'libbzip2-wasm';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import type { ProgramHost } from './program-host.js';

const ok = (stdout = '', stderr = ''): ExecResult => ({ stdout, stderr, exitCode: 0 });
const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });
const banner = 'BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\n';

const cpioUsage =
  `${banner}Usage: cpio [-dmvu] [-F FILE] [-R USER[:GRP]] [-H newc] [-tio] [EXTR_FILE]...\n\n` +
  'Extract (-i) or list (-t) files from a cpio archive, or\ntake file list from stdin and create an archive (-o)\n\n' +
  'Main operation mode:\n\t-t\tList\n\t-i\tExtract EXTR_FILEs (or all)\n\t-o\tCreate (requires -H newc)\n' +
  'Options:\n\t-H newc\tArchive format\n\t-d\tMake leading directories\n\t-m\tRestore mtime\n\t-v\tVerbose\n\t-u\tOverwrite\n' +
  '\t-F FILE\tInput (-t,-i,-p) or output (-o) file\n\t-R USER[:GRP]\tSet owner of created files\n\t-L\tDereference symlinks\n' +
  '\t-0\tNUL terminated input\n\t--ignore-devno\n\t--renumber-inodes\n';

/** The bytes of stdin, one character per byte (exec's stdin is given as bytes). */
const stdinBytes = (ctx: CommandContext): Buffer => Buffer.from(String(ctx.stdin), 'latin1');

/** Output that is bytes, which pipes and redirections pass on as they are. */
function bytesOut(host: ProgramHost, data: Buffer, stderr = '', exitCode = 0): ExecResult {
  host.rawOutput();
  return { stdout: data.toString('latin1'), stderr, exitCode, stdoutKind: 'bytes' };
}

/** Makes a directory and its missing parents, owned by the command's user. */
async function mkdirs(host: ProgramHost, path: string, mode = 0o755): Promise<void> {
  if (path === '/' || (await host.fs.entry(path))) return;
  await mkdirs(host, posix.dirname(path));
  await host.fs.mkdir(path, { uid: host.uid, gid: host.gid, mode });
}

/** Writes a file, replacing one that is there (an existing file keeps its owner and mode, as open(O_TRUNC) does). */
async function writeFile(host: ProgramHost, path: string, data: Buffer, mode = 0o644): Promise<void> {
  await host.fs.write(path, data, { uid: host.uid, gid: host.gid, mode });
}

let bzip2Module: Promise<Bzip2> | undefined;

/**
 * libbzip2 itself (compiled to WebAssembly; its compressed bytes are busybox's), made on first use.
 * Its `then` is emscripten's and hands back the module, itself a thenable: taken off before resolving.
 */
function bzip2(): Promise<Bzip2> {
  bzip2Module ??= new Promise((resolve) => {
    const module = libbzip2();
    const ready = (m: Bzip2Module): void => {
      delete m.then;
      resolve({ compressBZ2: (...a) => m.compressBZ2(...a), decompressBZ2: (...a) => m.decompressBZ2(...a) });
    };
    if (module.then) module.then(ready);
    else ready(module);
  });
  return bzip2Module;
}

const bz2Suffix = '.bz2';

/** What busybox's bunzip says of data that is not a whole bzip2 stream (libbzip2 only says that it is not). */
function bunzipError(data: Buffer, libError: number): string {
  if (data.length < 3 || data.subarray(0, 3).toString('latin1') !== 'BZh') return 'invalid magic';
  const level = data[3];
  if (level === undefined) return 'bunzip error -3';
  if (level < 0x31 || level > 0x39) return 'bunzip error -2';
  if (data.length < 10) return 'bunzip error -3';
  const magic = data.subarray(4, 10).toString('hex');
  if (magic !== '314159265359' && magic !== '177245385090') return 'bunzip error -2';
  return libError === -7 ? 'bunzip error -3' : 'bunzip error -5';
}

/** Compresses (blocks of 900k, busybox's default) or decompresses; throws busybox's message on bad data. */
async function bzip2Codec(data: Buffer, decompress: boolean): Promise<Buffer> {
  const lib = await bzip2();
  if (!decompress) return Buffer.from(lib.compressBZ2(new Uint8Array(data), 9, 30).output);
  const result = data.length < 3 ? { error: -5, output: new Uint8Array() } : lib.decompressBZ2(new Uint8Array(data), 0);
  if (result.error !== 0) throw new Error(bunzipError(data, result.error));
  return Buffer.from(result.output);
}

/**
 * busybox's `bzip2`, `bunzip2` and `bzcat` (bbunzip.c): files are replaced by their (de)compressed
 * form named with or without `.bz2` unless `-c` or `-k`; an existing output is refused without
 * `-f`; `-t` tests; no file: stdin to stdout.
 */
function bzipProgram(host: ProgramHost, name: 'bzip2' | 'bunzip2' | 'bzcat'): Command {
  return {
    name,
    async execute(args, ctx) {
      const flags = new Set<string>(name === 'bzcat' ? ['c', 'd'] : name === 'bunzip2' ? ['d'] : []);
      const files: string[] = [];
      for (const a of args) {
        if (a.startsWith('-') && a !== '-') for (const c of a.slice(1)) flags.add(c);
        else files.push(a);
      }
      const decompress = flags.has('d') || flags.has('t');
      const toStdout = flags.has('c');
      let out = Buffer.alloc(0);
      let stderr = '';
      let code = 0;
      const failed = (message: string): void => {
        stderr += `${name}: ${message}\n`;
        code = 1;
      };
      for (const file of files.length ? files : ['-']) {
        let data: Buffer;
        let path: string | undefined;
        if (file === '-') data = stdinBytes(ctx);
        else {
          path = posix.resolve(ctx.cwd, file);
          const entry = await host.fs.entry(path);
          if (!entry) {
            failed(`${file}: No such file or directory`);
            continue;
          }
          if (entry.type === 'directory') {
            failed('read error: Is a directory');
            continue;
          }
          data = await host.fs.read(path);
        }
        let target: string | undefined;
        if (path && !toStdout && !flags.has('t')) {
          if (decompress && !file.endsWith(bz2Suffix)) {
            failed(`${file}: unknown suffix - ignored`);
            continue;
          }
          target = decompress ? path.slice(0, -bz2Suffix.length) : path + bz2Suffix;
          if (!flags.has('f') && (await host.fs.entry(target))) {
            failed(`can't open '${decompress ? file.slice(0, -bz2Suffix.length) : file + bz2Suffix}': File exists`);
            continue;
          }
        }
        let result: Buffer;
        try {
          result = await bzip2Codec(data, decompress);
        } catch (err) {
          failed((err as Error).message);
          continue;
        }
        if (flags.has('t')) continue;
        if (!target) {
          out = Buffer.concat([out, result]);
          continue;
        }
        const mode = (await host.fs.entry(path!))!.mode;
        await writeFile(host, target, result, mode);
        if (!flags.has('k')) await host.fs.remove(path!);
      }
      return out.length ? bytesOut(host, out, stderr, code) : { stdout: '', stderr, exitCode: code };
    },
  };
}

const two = (n: number): string => String(n).padStart(2, '0');

/**
 * busybox's `unzip` (adm-zip reads the archive): `-l` lists, `-p` writes to stdout, `-j` drops
 * paths, `-d DIR` extracts there, `-o`/`-n` overwrite or keep what is there (neither: it asks, and
 * an exec's stdin at its end answers nothing), `-x` excludes, `-q` quietens, `-t` tests.
 */
function unzipProgram(host: ProgramHost): Command {
  return {
    name: 'unzip',
    async execute(args, ctx) {
      const flags = new Set<string>();
      const names: string[] = [];
      const excluded: string[] = [];
      let dir: string | undefined;
      let excluding = false;
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '-d') dir = args[++i];
        else if (a === '-x') excluding = true;
        else if (a.startsWith('-') && a.length > 1) for (const c of a.slice(1)) flags.add(c);
        else if (excluding) excluded.push(a);
        else names.push(a);
      }
      const [archive, ...wanted] = names;
      if (archive === undefined)
        return fail(
          `${banner}Usage: unzip [-lnojpq] FILE[.zip] [FILE]... [-x FILE]... [-d DIR]\n\nExtract FILEs from ZIP archive\n\n` +
            '\t-l\tList contents (with -q for short form)\n\t-n\tNever overwrite files (default: ask)\n\t-o\tOverwrite\n' +
            '\t-j\tDo not restore paths\n\t-p\tWrite to stdout\n\t-t\tTest\n\t-q\tQuiet\n\t-x FILE\tExclude FILEs\n\t-d DIR\tExtract into DIR\n',
        );
      let shown = archive;
      let path = posix.resolve(ctx.cwd, archive);
      if ((await host.fs.entry(path))?.type !== 'file') {
        shown = `${archive}.zip`;
        path = `${path}.zip`;
        if ((await host.fs.entry(path))?.type !== 'file') return fail(`unzip: can't open ${archive}[.zip]\n`);
      }
      const quiet = flags.has('q') || flags.has('p') || flags.has('t');
      let stdout = quiet ? '' : `Archive:  ${shown}\n`;
      let entries: AdmZip.IZipEntry[];
      try {
        entries = new AdmZip(await host.fs.read(path)).getEntries();
      } catch {
        return { stdout, stderr: 'unzip: short read\n', exitCode: 1 };
      }
      const picked = entries.filter((e) => (wanted.length === 0 || wanted.includes(e.entryName)) && !excluded.includes(e.entryName));
      if (flags.has('l')) {
        stdout += '  Length      Date    Time    Name\n---------  ---------- -----   ----\n';
        let total = 0;
        for (const e of picked) {
          const t = e.header.time;
          total += e.header.size;
          stdout += `${String(e.header.size).padStart(9)}  ${two(t.getMonth() + 1)}-${two(t.getDate())}-${t.getFullYear()} ${two(t.getHours())}:${two(t.getMinutes())}   ${e.entryName}\n`;
        }
        // busybox counts every entry of the archive here, listed or not.
        stdout += ` --------                     -------\n${String(total).padStart(9)}                     ${entries.length} files\n`;
        return ok(stdout);
      }
      if (flags.has('t')) return ok(stdout);
      if (flags.has('p')) return bytesOut(host, Buffer.concat(picked.filter((e) => !e.isDirectory).map((e) => e.getData())));
      const base = dir === undefined ? ctx.cwd : posix.resolve(ctx.cwd, dir);
      if (dir !== undefined) await mkdirs(host, base);
      for (const e of picked) {
        const name = flags.has('j') ? posix.basename(e.entryName) : e.entryName;
        const target = posix.join(base, name);
        const unixMode = (e.attr >>> 16) & 0o7777;
        if (e.isDirectory) {
          if (flags.has('j')) continue;
          if (await host.fs.entry(target)) continue;
          if (!quiet) stdout += `   creating: ${e.entryName}\n`;
          await mkdirs(host, target, unixMode || 0o755);
          continue;
        }
        if (await host.fs.entry(target)) {
          if (flags.has('n')) continue;
          if (!flags.has('o')) {
            // It asks on stdin, which an exec without input has at its end.
            stdout += `replace ${name}? [y]es, [n]o, [A]ll, [N]one, [r]ename: `;
            return { stdout, stderr: "unzip: can't read standard input\n", exitCode: 1 };
          }
        }
        if (!quiet) stdout += `${e.header.method === 0 ? ' extracting' : '  inflating'}: ${name}\n`;
        await mkdirs(host, posix.dirname(target));
        await writeFile(host, target, e.getData(), unixMode || 0o644);
      }
      return ok(stdout);
    },
  };
}

/** One entry of a newc cpio archive. */
interface CpioEntry {
  name: string;
  mode: number;
  uid: number;
  gid: number;
  mtime: number;
  data: Buffer;
}

const cpioMagic = '070701';
const pad4 = (n: number): number => (4 - (n % 4)) % 4;

/** The entries of a newc archive, and how many bytes up to its trailer; a string: busybox's message. */
function readCpio(archive: Buffer): { entries: CpioEntry[]; length: number } | string {
  const entries: CpioEntry[] = [];
  let at = 0;
  for (;;) {
    if (archive.length - at < 110) return 'short read';
    const header = archive.subarray(at, at + 110).toString('latin1');
    if (header.slice(0, 6) !== cpioMagic && header.slice(0, 6) !== '070702') return 'unsupported cpio format, use newc or crc';
    const field = (i: number): number => parseInt(header.slice(6 + i * 8, 14 + i * 8), 16);
    const nameSize = field(11);
    const size = field(6);
    const nameAt = at + 110;
    const name = archive.subarray(nameAt, nameAt + nameSize - 1).toString('utf8');
    const dataAt = nameAt + nameSize + pad4(110 + nameSize);
    if (dataAt + size > archive.length) return 'short read';
    at = dataAt + size + pad4(size);
    if (name === 'TRAILER!!!') return { entries, length: dataAt + size };
    entries.push({ name, mode: field(1), uid: field(2), gid: field(3), mtime: field(5), data: archive.subarray(dataAt, dataAt + size) });
  }
}

/** The newc records of the entries, and the trailer after them when `trailer` (busybox pads nothing). */
function writeCpio(entries: CpioEntry[], trailer: boolean): Buffer {
  const parts: Buffer[] = [];
  const add = (e: CpioEntry, ino: number): void => {
    const name = Buffer.from(`${e.name}\0`, 'utf8');
    const fields = [ino, e.mode, e.uid, e.gid, 1, e.mtime, e.data.length, 0, 0, 0, 0, name.length, 0];
    parts.push(Buffer.from(cpioMagic + fields.map((f) => f.toString(16).toUpperCase().padStart(8, '0')).join(''), 'latin1'));
    parts.push(name, Buffer.alloc(pad4(110 + name.length)), e.data, Buffer.alloc(pad4(e.data.length)));
  };
  entries.forEach((e, i) => add(e, i + 1));
  if (trailer) add({ name: 'TRAILER!!!', mode: 0, uid: 0, gid: 0, mtime: 0, data: Buffer.alloc(0) }, 0);
  return Buffer.concat(parts);
}

const blocks = (bytes: number): string => `${Math.ceil(bytes / 512)} blocks\n`;

/** `ls -l`'s type and permission letters of a mode. */
function modeLetters(mode: number): string {
  const type = { 0o040000: 'd', 0o120000: 'l', 0o010000: 'p', 0o020000: 'c', 0o060000: 'b' }[mode & 0o170000] ?? '-';
  const rwx = (bits: number): string => `${bits & 4 ? 'r' : '-'}${bits & 2 ? 'w' : '-'}${bits & 1 ? 'x' : '-'}`;
  return type + rwx(mode >> 6) + rwx(mode >> 3) + rwx(mode);
}

/** A name pattern of cpio's EXTR_FILE (shell wildcards `*` and `?`). */
function matches(pattern: string, name: string): boolean {
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${re}$`).test(name);
}

/**
 * busybox's `cpio` in the newc format: `-o -H newc` archives the names read on stdin, `-t` lists
 * (`-v` long), `-i` extracts (`-d` makes directories, `-u` replaces what is there, `-m` keeps
 * mtimes), `-F` names the archive; "N blocks" on stderr as busybox counts them.
 */
function cpioProgram(host: ProgramHost): Command {
  return {
    name: 'cpio',
    async execute(args, ctx) {
      const flags = new Set<string>();
      const patterns: string[] = [];
      let format: string | undefined;
      let file: string | undefined;
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (a === '-H') format = args[++i];
        else if (a === '-F') file = args[++i];
        else if (a.startsWith('--')) continue;
        else if (a.startsWith('-') && a.length > 1) {
          for (const [j, c] of [...a.slice(1)].entries()) {
            if (c === 'H' || c === 'F') {
              const value = a.slice(j + 2) || args[++i];
              if (c === 'H') format = value;
              else file = value;
              break;
            }
            if (!'tiodmvuL0'.includes(c)) return fail(`cpio: invalid option -- '${c}'\n${cpioUsage}`);
            flags.add(c);
          }
        } else patterns.push(a);
      }
      if (flags.has('o')) {
        if (format !== 'newc') return fail(cpioUsage);
        const names = String(ctx.stdin)
          .split(flags.has('0') ? '\0' : '\n')
          .filter((n) => n !== '');
        const entries: CpioEntry[] = [];
        // busybox writes each entry as it goes and stops at the first name it cannot read (no trailer then).
        let missing: string | undefined;
        for (const name of names) {
          const path = posix.resolve(ctx.cwd, name);
          const entry = await host.fs.entry(path);
          if (!entry) {
            missing = `cpio: ${name}: No such file or directory\n`;
            break;
          }
          const type = entry.type === 'directory' ? 0o040000 : entry.type === 'symlink' ? 0o120000 : 0o100000;
          entries.push({
            name: name.replace(/^\.\/(?=.)/, ''),
            mode: type | entry.mode,
            uid: entry.uid,
            gid: entry.gid,
            mtime: Math.floor(entry.mtime.getTime() / 1000),
            data: entry.type === 'directory' ? Buffer.alloc(0) : await host.fs.read(path),
          });
        }
        const archive = writeCpio(entries, missing === undefined);
        const code = missing === undefined ? 0 : 1;
        if (file !== undefined) {
          await writeFile(host, posix.resolve(ctx.cwd, file), archive);
          return { stdout: '', stderr: missing ?? '', exitCode: code };
        }
        return bytesOut(host, archive, missing ?? '', code);
      }
      if (!flags.has('t') && !flags.has('i')) return fail(cpioUsage);
      let data: Buffer;
      if (file === undefined) data = stdinBytes(ctx);
      else {
        const path = posix.resolve(ctx.cwd, file);
        if (!(await host.fs.entry(path))) return fail(`cpio: can't open '${file}': No such file or directory\n`);
        data = await host.fs.read(path);
      }
      const archive = readCpio(data);
      if (typeof archive === 'string') return fail(`cpio: ${archive}\n`);
      const picked = archive.entries.filter((e) => patterns.length === 0 || patterns.some((p) => matches(p, e.name)));
      let stdout = '';
      let stderr = '';
      for (const e of picked) {
        const symlink = (e.mode & 0o170000) === 0o120000;
        if (flags.has('t')) {
          if (!flags.has('v')) stdout += `${e.name}\n`;
          else {
            const t = new Date(e.mtime * 1000);
            const date = `${t.getFullYear()}-${two(t.getMonth() + 1)}-${two(t.getDate())} ${two(t.getHours())}:${two(t.getMinutes())}:${two(t.getSeconds())}`;
            const size = symlink || (e.mode & 0o170000) === 0o040000 ? 0 : e.data.length;
            stdout += `${modeLetters(e.mode)} ${e.uid}/${e.gid} ${String(size).padStart(9)} ${date} ${e.name}${symlink ? ` -> ${e.data.toString('utf8')}` : ''}\n`;
          }
          continue;
        }
        const target = posix.resolve(ctx.cwd, e.name);
        const existing = await host.fs.entry(target);
        if (flags.has('v')) stderr += `${e.name}\n`;
        if ((e.mode & 0o170000) === 0o040000) {
          if (!existing) {
            if (flags.has('d')) await mkdirs(host, posix.dirname(target));
            await host.fs.mkdir(target, { uid: host.uid, gid: host.gid, mode: e.mode & 0o7777 });
          }
          continue;
        }
        if (existing) {
          if (!flags.has('u')) {
            stderr += `cpio: ${e.name} not created: newer or same age file exists\n`;
            continue;
          }
          await host.fs.remove(target);
        }
        if (flags.has('d')) await mkdirs(host, posix.dirname(target));
        else if (!(await host.fs.entry(posix.dirname(target)))) {
          stderr += `cpio: can't open '${e.name}': No such file or directory\n`;
          continue;
        }
        if (symlink) await host.fs.symlink(e.data.toString('utf8'), target, host);
        else await writeFile(host, target, e.data, e.mode & 0o7777);
        if (flags.has('m') && !symlink) await host.fs.memory.utimes(target, new Date(e.mtime * 1000), new Date(e.mtime * 1000));
      }
      stderr += blocks(archive.length);
      return { stdout, stderr, exitCode: 0 };
    },
  };
}

/**
 * busybox's archive programs that just-bash lacks: `unzip`, `cpio` (newc) and `bzip2`/`bunzip2`/
 * `bzcat`. Their output, messages and exit codes are busybox 1.35's on the LXD 5.0.2 test bed.
 */
export function busyboxArchives(host: ProgramHost): Command[] {
  return [bzipProgram(host, 'bzip2'), bzipProgram(host, 'bunzip2'), bzipProgram(host, 'bzcat'), unzipProgram(host), cpioProgram(host)];
}
