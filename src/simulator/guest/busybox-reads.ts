import type { Command, CommandContext, ExecResult, IFileSystem } from 'just-bash';
import { Files } from './busybox-file-calls.js';
import { apart, banner, suffixed } from './busybox-getopt.js';
import { openRefusal } from './guest-access.js';
import { bytesOutput } from './bytes-output.js';
import { stdinBytes, type ProgramHost } from './program-host.js';
import { ProgramOutput } from './program-output.js';
import { stdinOnce } from './stdin-once.js';
import { errnos } from './fs-error.js';

/**
 * Why open(2) of `name` for reading fails for the command's user, in strerror's words (a path it
 * cannot reach, a symlink loop, a missing component, a file it may not read), or undefined when it
 * opens. A directory opens: reading it is what fails.
 */
export async function openFailure(fs: IFileSystem, cwd: string, name: string): Promise<string | undefined> {
  const files = new Files(fs, cwd);
  if (!(await files.stat(name))) return errnos[await files.missing(name)];
  return openRefusal(fs, files.abs(name));
}

/** Whether an operand names a directory (through symlinks). */
export const isDirectory = async (fs: IFileSystem, cwd: string, name: string): Promise<boolean> =>
  (await new Files(fs, cwd).stat(name))?.kind === 'directory';

/**
 * A file operand as busybox's programs open and read it: `-` is stdin (read once, stdin-once.ts), a
 * directory opens and its read fails (each program says that its own way, or reads nothing), and
 * one that does not open gives open(2)'s reason.
 */
export async function readOperand(ctx: CommandContext, f: string): Promise<Buffer | { error: string } | { directory: true }> {
  if (f === '-') return stdinOnce(ctx);
  const why = await openFailure(ctx.fs, ctx.cwd, f);
  if (why) return { error: why };
  if (await isDirectory(ctx.fs, ctx.cwd, f)) return { directory: true };
  return Buffer.from(await ctx.fs.readFileBuffer(ctx.fs.resolvePath(ctx.cwd, f)));
}

const notFound = (name: string): ExecResult => ({ stdout: '', stderr: `sh: ${name}: not found\n`, exitCode: 127 });

const headUsage =
  `${banner}Usage: head [OPTIONS] [FILE]...\n\nPrint first 10 lines of FILEs (or stdin).\n` +
  'With more than one FILE, precede each with a filename header.\n\n\t-n N[bkm]\tPrint first N lines\n' +
  '\t-n -N[bkm]\tPrint all except N last lines\n\t-c [-]N[bkm]\tPrint first N bytes\n\t\t\t(b:*512 k:*1024 m:*1024^2)\n' +
  '\t-q\t\tNever print headers\n\t-v\t\tAlways print headers\n';

/** busybox's xatoul_sfx over head's counts: digits with a b (512), k (1024) or m (1024²) suffix, `-` for all but the last N. */
function headCount(text: string): { n: number; allBut: boolean } | undefined {
  const allBut = text.startsWith('-');
  const n = suffixed(allBut ? text.slice(1) : text, { b: 512, k: 1024, m: 1024 * 1024 });
  return n === undefined ? undefined : { n, allBut };
}

/** The first `n` lines of `data` (the last may lack its newline), or with `allBut` all but the last `n`. */
function firstLines(data: Buffer, n: number, allBut: boolean): Buffer {
  const ends: number[] = [];
  for (let at = data.indexOf(10); at >= 0; at = data.indexOf(10, at + 1)) ends.push(at + 1);
  if (ends.at(-1) !== data.length && data.length > 0) ends.push(data.length);
  const keep = allBut ? Math.max(0, ends.length - n) : Math.min(n, ends.length);
  return data.subarray(0, keep === 0 ? 0 : ends[keep - 1]);
}

/**
 * busybox's `head` (coreutils/head.c): `-n [-]N`, `-c [-]N` with b/k/m suffixes, a first `-N`, `-q`,
 * `-v`; a header (`==> F <==`, after the first with a blank line before it, whether the first
 * opened or not) when more than one file is given; stdin (`-` or none) is `standard input`. A file
 * it cannot open is `head: F: why` and the next is read; a directory opens, and reading it fails
 * (`Input/output error`). Status 1 when one failed.
 */
function headCommand(host: ProgramHost): Command {
  return {
    name: 'head',
    async execute(args, ctx) {
      let count = { n: 10, allBut: false };
      let bytes = false;
      let headers = 1;
      const files: string[] = [];
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (i === 0 && /^-\d+$/.test(a)) {
          count = { n: Number(a.slice(1)), allBut: false };
          continue;
        }
        if (a === '--') {
          files.push(...args.slice(i + 1));
          break;
        }
        if (!a.startsWith('-') || a === '-') {
          files.push(a);
          continue;
        }
        for (let j = 1; j < a.length; j++) {
          const c = a[j]!;
          if (c === 'n' || c === 'c') {
            const value = j + 1 < a.length ? a.slice(j + 1) : args[++i];
            if (value === undefined) return { stdout: '', stderr: `head: option requires an argument -- '${c}'\n${headUsage}`, exitCode: 1 };
            const parsed = headCount(value);
            if (!parsed) return { stdout: '', stderr: `head: invalid number '${value}'\n`, exitCode: 1 };
            count = parsed;
            bytes = c === 'c';
            break;
          }
          if (c === 'q') headers = Number.POSITIVE_INFINITY;
          else if (c === 'v') headers = -1;
          else return { stdout: '', stderr: `head: invalid option -- '${c}'\n${headUsage}`, exitCode: 1 };
        }
      }
      if (files.length === 0) files.push('-');
      const withHeaders = files.length > headers;
      const out = new ProgramOutput();
      let first = true;
      for (const f of files) {
        const header = `${first ? '' : '\n'}==> ${f === '-' ? 'standard input' : f} <==\n`;
        first = false;
        if (f !== '-') {
          const why = await openFailure(ctx.fs, ctx.cwd, f);
          if (why) {
            out.err(`head: ${f}: ${why}\n`);
            continue;
          }
        }
        if (withHeaders) out.bytes(Buffer.from(header));
        if (f !== '-' && (await isDirectory(ctx.fs, ctx.cwd, f))) {
          out.err(`head: ${f}: Input/output error\n`);
          continue;
        }
        const data = f === '-' ? stdinBytes(ctx) : Buffer.from(await ctx.fs.readFileBuffer(ctx.fs.resolvePath(ctx.cwd, f)));
        out.bytes(bytes ? data.subarray(0, count.allBut ? Math.max(0, data.length - count.n) : count.n) : firstLines(data, count.n, count.allBut));
      }
      return out.result(out.stderr ? 1 : 0);
    },
  };
}

/** tail's options that take a value in the next argument (getopt32's `c:n:s:`). */
const tailValued = new Set(['-c', '-n', '-s']);

const tailUsage =
  'Usage: tail [OPTIONS] [FILE]...\n\nPrint last 10 lines of FILEs (or stdin) to.\nWith more than one FILE, precede each with a filename header.\n\n' +
  '\t-c [+]N[bkm]\tPrint last N bytes\n\t-n N[bkm]\tPrint last N lines\n\t-n +N[bkm]\tStart on Nth line and print the rest\n' +
  '\t\t\t(b:*512 k:*1024 m:*1024^2)\n\t-q\t\tNever print headers\n\t-v\t\tAlways print headers\n\t-f\t\tPrint data as file grows\n' +
  '\t-F\t\tSame as -f, but keep retrying\n\t-s SECONDS\tWait SECONDS between reads with -f\n';

/**
 * tail's command line with each cluster of short options apart (`-qn1` is `-q -n 1`), for
 * just-bash's tail: an option busybox's lacks is its usage, a count xatol_sfx refuses is said as
 * busybox says it (`tail: invalid number 'c1'`), and `-n -2` is `-n 2` (the sign read away).
 */
const tailOptions = (args: readonly string[]): string[] | ExecResult =>
  apart(args, 'cns', '', (c, value) => {
    if (!'cnsfqvF'.includes(c)) return { stdout: '', stderr: `tail: invalid option -- '${c}'\n${banner}${tailUsage}`, exitCode: 1 };
    if (value === undefined || c === 's') return undefined;
    if (!/^[+-]?\d+[bkm]?$/.test(value)) return { stdout: '', stderr: `tail: invalid number '${value}'\n`, exitCode: 1 };
    return value.startsWith('-') ? value.slice(1) : value;
  });

/**
 * `tail` as busybox's opens its files: all of them first, each that fails said (`tail: can't open
 * 'F': Permission denied`) and dropped, so the headers count only those left; none left is `tail:
 * no files`. Status 1 when one failed. The reading itself is just-bash's, on the files that opened,
 * but for busybox's counts it lacks: a first `+N` (-n +N), `-c +N` (from the Nth byte), `-` (stdin).
 */
function tailCommand(host: ProgramHost): Command {
  return {
    name: 'tail',
    async execute(given, ctx: CommandContext) {
      if (!ctx.origCommand) return notFound('tail');
      const args = tailOptions(given);
      if (!Array.isArray(args)) return args;
      const kept: string[] = [];
      let operands = 0;
      let opened = 0;
      let stderr = '';
      let operandsOnly = false;
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (!operandsOnly && a === '--') {
          operandsOnly = true;
          kept.push(a);
        } else if ((!operandsOnly && a.startsWith('-') && a !== '-') || (i === 0 && /^\+\d/.test(a))) {
          // busybox takes a first `+N` (and `-N`) as -n's count, the legacy syntax; just-bash's tail knows `-n +N` only.
          kept.push(...(a.startsWith('+') ? ['-n', a] : [a]));
          if (tailValued.has(a) && i + 1 < args.length) kept.push(args[++i]!);
        } else {
          operands++;
          const why = a === '-' ? undefined : await openFailure(ctx.fs, ctx.cwd, a);
          if (why) stderr += `tail: can't open '${a}': ${why}\n`;
          else if (a !== '-' && (await isDirectory(ctx.fs, ctx.cwd, a))) {
            // It opens; its read(2) fails and ends tail.
            return { stdout: '', stderr: `${stderr}tail: read error: Is a directory\n`, exitCode: 1 };
          } else {
            opened++;
            kept.push(a);
          }
        }
      }
      if (operands > 0 && opened === 0) return { stdout: '', stderr: `${stderr}tail: no files\n`, exitCode: 1 };
      // `-c +N` from the Nth byte (counted from 1) of one input: just-bash's tail takes it as the last N bytes.
      const from = kept.findIndex((k, i) => k === '-c' && /^\+\d+$/.test(kept[i + 1] ?? ''));
      if (from >= 0 && operands <= 1) {
        const file = kept.find((k, i) => i !== from + 1 && !k.startsWith('-') && !k.startsWith('+'));
        const data = file === undefined ? stdinBytes(ctx) : Buffer.from(await ctx.fs.readFileBuffer(ctx.fs.resolvePath(ctx.cwd, file)));
        const start = Math.max(0, Number(kept[from + 1]!.slice(1)) - 1);
        return bytesOutput(data.subarray(start), stderr, stderr ? 1 : 0);
      }
      // `-` alone is stdin, which just-bash's tail reads when it is given no file.
      const result = await ctx.origCommand(operands === 1 && kept.includes('-') ? kept.filter((k) => k !== '-') : kept);
      const out = new ProgramOutput();
      out.err(stderr);
      out.append(result);
      return out.result(stderr ? 1 : result.exitCode);
    },
  };
}

/** busybox's `head` and `tail` over just-bash's, with busybox's handling of the files they cannot open. */
export function busyboxReads(host: ProgramHost): Command[] {
  return [headCommand(host), tailCommand(host)];
}
