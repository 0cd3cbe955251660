import { posix } from 'node:path';
import AdmZip from 'adm-zip';
import type { Command, ExecResult } from 'just-bash';
import { cpioProgram } from './busybox-cpio.js';
import { busyboxUnpackers } from './busybox-unpack.js';
import { bytesOut, mkdirs, writeFile, type ProgramHost } from './program-host.js';

const ok = (stdout = '', stderr = ''): ExecResult => ({ stdout, stderr, exitCode: 0 });
const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });
const banner = 'BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\n';

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

/**
 * busybox's archive programs that just-bash lacks: `unzip`, `cpio` (newc), `bzip2`/`bunzip2`/`bzcat`
 * and `xz`/`unxz`/`xzcat` (decompression only, as busybox's). Their output, messages and exit
 * codes are busybox 1.35's on the LXD 5.0.2 test bed.
 */
export function busyboxArchives(host: ProgramHost): Command[] {
  return [...busyboxUnpackers(host), unzipProgram(host), cpioProgram(host)];
}
