import { posix } from 'node:path';
import AdmZip from 'adm-zip';
import type { Command, ExecResult } from 'just-bash';
import { cpioProgram } from './busybox-cpio.js';
import { banner } from './busybox-getopt.js';
import { busyboxUnpackers } from './busybox-unpack.js';
import { busyboxGzip } from './busybox-gzip.js';
import { tarCommand } from './busybox-tar.js';
import { mkdirs, writeFile, type ProgramHost } from './program-host.js';
import { bytesOutput } from './bytes-output.js';

const ok = (stdout = '', stderr = ''): ExecResult => ({ stdout, stderr, exitCode: 0 });
const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });

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
      if (flags.has('p')) return bytesOutput(Buffer.concat(picked.filter((e) => !e.isDirectory).map((e) => e.getData())));
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

const arUsage =
  `${banner}Usage: ar x|p|t [-ov] ARCHIVE [FILE]...\n\nExtract or list FILEs from an ar archive\n\n` +
  '\tx\tExtract\n\tp\tExtract to stdout\n\tt\tList\n\t-o\tRestore mtime\n\t-v\tVerbose\n';

/** One member of an ar archive. */
export interface ArMember {
  name: string;
  mtime: number;
  uid: number;
  gid: number;
  mode: number;
  data: Buffer;
}

/** The members of a common (System V / GNU) ar archive, or busybox's message for what is not one. */
export function readAr(archive: Buffer): ArMember[] | string {
  if (archive.length < 8 || archive.subarray(0, 8).toString('latin1') !== '!<arch>\n') return 'short read';
  const members: ArMember[] = [];
  for (let at = 8; at < archive.length;) {
    // A header cut short ends the archive, as busybox's get_header_ar takes it.
    if (archive.length - at < 60) break;
    const header = archive.subarray(at, at + 60).toString('latin1');
    const field = (from: number, length: number): string => header.slice(from, from + length).trim();
    const size = Number(field(48, 10));
    const data = archive.subarray(at + 60, at + 60 + size);
    if (data.length < size) return 'short read';
    members.push({
      name: field(0, 16).replace(/\/$/, ''),
      mtime: Number(field(16, 12)),
      uid: Number(field(28, 6)),
      gid: Number(field(34, 6)),
      mode: parseInt(field(40, 8), 8),
      data,
    });
    at += 60 + size + (size % 2);
  }
  return members;
}

/** `ls -l`'s permission letters (without the type) of a mode. */
const permissions = (mode: number): string =>
  [6, 3, 0].map((s) => `${mode & (4 << s) ? 'r' : '-'}${mode & (2 << s) ? 'w' : '-'}${mode & (1 << s) ? 'x' : '-'}`).join('');

const monthNames = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * `ar`'s options and operands as busybox's getopt32 reads them: the first argument is options even
 * without its `-`, an option anywhere else counts too (GNU getopt's permutation), `--` ends them;
 * a letter it does not know is its message and the usage.
 */
function arArguments(args: string[]): { letters: string; operands: string[] } | string {
  let letters = '';
  const operands: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = i === 0 && args[0] !== '' && !args[0]!.startsWith('-') ? `-${args[0]}` : args[i]!;
    if (arg === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      operands.push(arg);
      continue;
    }
    const bad = [...arg.slice(1)].find((c) => !'vocptx'.includes(c));
    if (bad !== undefined) return `ar: invalid option -- '${bad}'\n${arUsage}`;
    letters += arg.slice(1);
  }
  return { letters, operands };
}

/**
 * busybox's `ar`, which reads archives only: `t` lists (`v`: long), `p` writes members to stdout,
 * `x` extracts them with their modes and owners (`o`: their mtimes too), refusing a file that is
 * there; named members only when names are given. `c` is taken and changes nothing; `v` lists
 * the members `p` and `x` handle, and after `p` the list comes after all the members' bytes
 * (busybox writes those straight to stdout and its list through stdio, flushed at exit).
 */
function arProgram(host: ProgramHost): Command {
  return {
    name: 'ar',
    async execute(args, ctx) {
      const parsed = arArguments(args);
      if (typeof parsed === 'string') return fail(parsed);
      const { letters, operands } = parsed;
      const [archiveName, ...names] = operands;
      const actions = new Set([...letters].filter((c) => 'xpt'.includes(c)));
      if (actions.size !== 1 || archiveName === undefined) return fail(arUsage);
      const [action] = actions;
      const path = posix.resolve(ctx.cwd, archiveName);
      if ((await host.fs.entry(path))?.type !== 'file') return fail(`ar: can't open '${archiveName}': No such file or directory\n`);
      const members = readAr(await host.fs.read(path));
      if (typeof members === 'string') return fail(`ar: ${members}\n`);
      const verbose = letters.includes('v');
      let stdout = '';
      const bytes: Buffer[] = [];
      for (const m of members) {
        if (names.length && !names.includes(m.name)) continue;
        if (action === 't' || verbose) {
          const t = new Date(m.mtime * 1000);
          const date = `${monthNames[t.getMonth()]} ${String(t.getDate()).padStart(2)} ${two(t.getHours())}:${two(t.getMinutes())} ${t.getFullYear()}`;
          stdout += verbose ? `${permissions(m.mode)} ${m.uid}/${m.gid} ${String(m.data.length).padStart(6)} ${date} ${m.name}\n` : `${m.name}\n`;
        }
        if (action === 'p') bytes.push(m.data);
        if (action !== 'x') continue;
        const target = posix.resolve(ctx.cwd, m.name);
        if (await host.fs.entry(target)) return { stdout, stderr: `ar: can't open '${m.name}': File exists\n`, exitCode: 1 };
        // Root keeps the archive's owners, as busybox's extraction does; anyone else owns what it makes.
        const owner = host.uid === 0 ? { uid: m.uid, gid: m.gid } : { uid: host.uid, gid: host.gid };
        await host.fs.write(target, m.data, { ...owner, mode: m.mode & 0o7777 });
        if (letters.includes('o')) await host.fs.memory.utimes(target, new Date(m.mtime * 1000), new Date(m.mtime * 1000));
      }
      return action === 'p' ? bytesOutput(Buffer.concat([...bytes, Buffer.from(stdout, 'latin1')])) : ok(stdout);
    },
  };
}

/**
 * busybox's archive programs, where just-bash lacks them or its own are not busybox's: `tar`, `gzip`/`gunzip`/`zcat`, `unzip`, `cpio` (newc), `ar` (reading), `bzip2`/`bunzip2`/`bzcat`
 * and `xz`/`unxz`/`xzcat` (decompression only, as busybox's). Their output, messages and exit
 * codes are busybox 1.35's on the LXD 5.0.2 test bed.
 */
export function busyboxArchives(host: ProgramHost): Command[] {
  return [...busyboxUnpackers(host), ...busyboxGzip(host), tarCommand(host), unzipProgram(host), cpioProgram(host), arProgram(host)];
}
