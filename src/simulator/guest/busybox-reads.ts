import type { Command, CommandContext, ExecResult, IFileSystem } from 'just-bash';
import { errnos, Files } from './busybox-file-calls.js';
import { refused } from './guest-access.js';
import { bytesOut, stdinBytes, type ProgramHost } from './program-host.js';

/**
 * Why open(2) of `name` for reading fails for the command's user, in strerror's words (a path it
 * cannot reach, a symlink loop, a missing component, a file it may not read), or undefined when it
 * opens. A directory opens: reading it is what fails.
 */
export async function openFailure(fs: IFileSystem, cwd: string, name: string): Promise<string | undefined> {
  const files = new Files(fs, cwd);
  if (!(await files.stat(name))) return errnos[await files.missing(name)];
  return (await refused(fs, files.abs(name), true)) ? errnos.EACCES : undefined;
}

/**
 * just-bash's programs call any file they cannot open missing (`PROG: F: No such file or
 * directory`); busybox's head and wc say why open(2) failed (`Permission denied`, `Too many levels
 * of symbolic links`, ...) in the same words, and a directory, which opens, by why reading it
 * failed (`directory`: wc's `Is a directory`, head's `Input/output error`).
 */
export async function withOpenFailures(program: string, stderr: string, fs: IFileSystem, cwd: string, directory: string): Promise<string> {
  if (!stderr.includes(': No such file or directory')) return stderr;
  let said = '';
  for (const line of stderr.split(/(?<=\n)/)) {
    const m = line.startsWith(`${program}: `) ? /^[^:]*: (.*): No such file or directory(\n?)$/.exec(line) : null;
    const why = m ? ((await openFailure(fs, cwd, m[1]!)) ?? ((await isDirectory(fs, cwd, m[1]!)) ? directory : undefined)) : undefined;
    said += m && why ? `${program}: ${m[1]}: ${why}${m[2]}` : line;
  }
  return said;
}

/** Whether an operand names a directory (through symlinks). */
export const isDirectory = async (fs: IFileSystem, cwd: string, name: string): Promise<boolean> =>
  (await new Files(fs, cwd).stat(name))?.kind === 'directory';

const notFound = (name: string): ExecResult => ({ stdout: '', stderr: `sh: ${name}: not found\n`, exitCode: 127 });

/** `head`: just-bash's, with busybox's reasons for a file it cannot open. */
function headCommand(): Command {
  return {
    name: 'head',
    async execute(args, ctx) {
      if (!ctx.origCommand) return notFound('head');
      const result = await ctx.origCommand(args);
      // busybox's head starts each header but the first operand's with a blank line, whether that one opened or not.
      const first = args.find((a, i) => !a.startsWith('-') && !(i > 0 && (args[i - 1] === '-n' || args[i - 1] === '-c')));
      const blank = first !== undefined && result.stdout.startsWith('==> ') && !result.stdout.startsWith(`==> ${first} <==`);
      return {
        ...result,
        stdout: blank ? `\n${result.stdout}` : result.stdout,
        stderr: await withOpenFailures('head', result.stderr, ctx.fs, ctx.cwd, 'Input/output error'),
      };
    },
  };
}

/** tail's options that take a value in the next argument (getopt32's `c:n:s:`). */
const tailValued = new Set(['-c', '-n', '-s']);

/**
 * `tail` as busybox's opens its files: all of them first, each that fails said (`tail: can't open
 * 'F': Permission denied`) and dropped, so the headers count only those left; none left is `tail:
 * no files`. Status 1 when one failed. The reading itself is just-bash's, on the files that opened,
 * but for busybox's counts it lacks: a first `+N` (-n +N), `-c +N` (from the Nth byte), `-` (stdin).
 */
function tailCommand(host: ProgramHost): Command {
  return {
    name: 'tail',
    async execute(args, ctx: CommandContext) {
      if (!ctx.origCommand) return notFound('tail');
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
        return bytesOut(host, data.subarray(start), stderr, stderr ? 1 : 0);
      }
      // `-` alone is stdin, which just-bash's tail reads when it is given no file.
      const result = await ctx.origCommand(operands === 1 && kept.includes('-') ? kept.filter((k) => k !== '-') : kept);
      return { ...result, stderr: stderr + result.stderr, exitCode: stderr ? 1 : result.exitCode };
    },
  };
}

/** busybox's `head` and `tail` over just-bash's, with busybox's handling of the files they cannot open. */
export function busyboxReads(host: ProgramHost): Command[] {
  return [headCommand(), tailCommand(host)];
}
