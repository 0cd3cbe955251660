import type { Command, CommandContext, ExecResult } from 'just-bash';
import { banner, helpAsked } from './busybox-getopt.js';
import { errnos, type Errno } from './fs-error.js';
import { ProgramOutput } from './program-output.js';
import { execProgram } from './program-run.js';

const timeUsage =
  'Usage: time [-vpa] [-o FILE] PROG ARGS\n\nRun PROG, display resource usage when it exits\n\n' +
  '\t-v\tVerbose\n\t-p\tPOSIX output format\n\t-f FMT\tCustom format\n\t-o FILE\tWrite result to FILE\n\t-a\tAppend (else overwrite)\n';

const defaultFormat = 'real\t%E\nuser\t%u\nsys\t%T';
const posixFormat = 'real %e\nuser %U\nsys %S';
const longFormat = [
  '\tCommand being timed: "%C"',
  '\tUser time (seconds): %U',
  '\tSystem time (seconds): %S',
  '\tPercent of CPU this job got: %P',
  '\tElapsed (wall clock) time (h:mm:ss or m:ss): %E',
  '\tAverage shared text size (kbytes): %X',
  '\tAverage unshared data size (kbytes): %D',
  '\tAverage stack size (kbytes): %p',
  '\tAverage total size (kbytes): %K',
  '\tMaximum resident set size (kbytes): %M',
  '\tAverage resident set size (kbytes): %t',
  '\tMajor (requiring I/O) page faults: %F',
  '\tMinor (reclaiming a frame) page faults: %R',
  '\tVoluntary context switches: %w',
  '\tInvoluntary context switches: %c',
  '\tSwaps: %W',
  '\tFile system inputs: %I',
  '\tFile system outputs: %O',
  '\tSocket messages sent: %s',
  '\tSocket messages received: %r',
  '\tSignals delivered: %k',
  '\tPage size (bytes): %Z',
  '\tExit status: %x',
].join('\n');

/** What `time` measured: the wall-clock milliseconds, the command and its status (the guest counts no CPU time or resource use: zeros). */
interface Run {
  elapsedMs: number;
  argv: string[];
  status: number;
}

/** `M:SS` as busybox prints a duration (`%E`, `%u`, `%T`): `0m 0.00s`, or `1h 2m 03s` from an hour. */
function minutes(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds >= 3600) return `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 60)}m ${seconds % 60}.${String(Math.floor(ms / 10) % 100).padStart(2, '0')}s`;
}

/**
 * busybox's summarize() over `format`: `%` and a letter is a figure, a backslash is dropped (its
 * escapes are compiled out), anything else is itself; a new line ends it.
 */
function summarize(format: string, run: Run): string {
  const figures: Record<string, () => string> = {
    C: () => run.argv.join(' '),
    E: () => minutes(run.elapsedMs),
    e: () => `${Math.floor(run.elapsedMs / 1000)}.${String(Math.floor(run.elapsedMs / 10) % 100).padStart(2, '0')}`,
    u: () => minutes(0),
    T: () => minutes(0),
    U: () => '0.00',
    S: () => '0.00',
    P: () => (run.elapsedMs > 0 ? '0%' : '?%'),
    Z: () => '4096',
    x: () => String(run.status & 0xff),
  };
  let said = '';
  for (let at = 0; at < format.length; at++) {
    const c = format[at]!;
    if (c === '\\') continue;
    if (c !== '%') {
      said += c;
      continue;
    }
    const letter = format[++at];
    if (letter === undefined) break;
    const figure = figures[letter];
    if (figure) said += figure();
    else if ('DFIKMORWXcknprstw'.includes(letter)) said += '0';
  }
  return `${said}\n`;
}

/**
 * busybox 1.35's `time` (miscutils/time.c), an applet and not a shell keyword, as in ash: `-v`,
 * `-p`, `-f FMT` (and `$TIME`), `-o FILE` (`-a` appends); options end at the first operand. It runs
 * the program, then writes `Command exited with non-zero status N` when it failed and the figures,
 * to stderr or the file, and exits with the program's status. The wall clock is measured; CPU times
 * and resource counts are zeros (the guest counts none).
 */
export function timeCommand(): Command {
  return {
    name: 'time',
    async execute(args, ctx) {
      const help = helpAsked(args, timeUsage);
      if (help) return help;
      let format = ctx.env.get('TIME') ?? defaultFormat;
      let file: string | undefined;
      let append = false;
      let verbose = false;
      let posix = false;
      let at = 0;
      options: for (; at < args.length; at++) {
        const a = args[at]!;
        if (a === '--') {
          at++;
          break;
        }
        if (!a.startsWith('-') || a === '-') break;
        for (let k = 1; k < a.length; k++) {
          const letter = a[k]!;
          if (letter === 'v') verbose = true;
          else if (letter === 'p') posix = true;
          else if (letter === 'a') append = true;
          else if (letter === 'o' || letter === 'f') {
            const value = k + 1 < a.length ? a.slice(k + 1) : args[++at];
            if (value === undefined) return refuse(`option requires an argument -- '${letter}'`);
            if (letter === 'o') file = value;
            else format = value;
            continue options;
          } else return refuse(`invalid option -- '${letter}'`);
        }
      }
      const argv = args.slice(at);
      if (argv.length === 0) return { stdout: '', stderr: `${banner}${timeUsage}`, exitCode: 1 };
      // -v and then -p win over -f and $TIME, as busybox applies them after reading the options.
      if (verbose) format = longFormat;
      if (posix) format = posixFormat;
      const output = file === undefined ? undefined : ctx.fs.resolvePath(ctx.cwd, file);
      if (output !== undefined) {
        const opened = await open(ctx, output, append);
        if (opened) return { stdout: '', stderr: `time: can't open '${file}': ${opened}\n`, exitCode: 1 };
      }
      const started = performance.now();
      const result = await execProgram(ctx, argv, (why) => `time: can't execute '${argv[0]}': ${why}\n`);
      const run: Run = { elapsedMs: Math.floor(performance.now() - started), argv, status: result.exitCode };
      const report = `${run.status !== 0 ? `Command exited with non-zero status ${run.status & 0xff}\n` : ''}${summarize(format, run)}`;
      const o = new ProgramOutput();
      o.append(result);
      if (output === undefined) o.err(report);
      else await ctx.fs.appendFile(output, report);
      return o.result(run.status & 0xff);
    },
  };
}

const refuse = (why: string): ExecResult => ({ stdout: '', stderr: `time: ${why}\n${banner}${timeUsage}`, exitCode: 1 });

/** Opens `-o FILE` as busybox does before the program runs (created, emptied unless `-a`): undefined, or why it does not open. */
async function open(ctx: CommandContext, path: string, append: boolean): Promise<string | undefined> {
  try {
    if (append) await ctx.fs.appendFile(path, '');
    else await ctx.fs.writeFile(path, '');
    return undefined;
  } catch (e) {
    const code = (e as { code?: string }).code ?? /^(E[A-Z]+)/.exec(String((e as Error).message))?.[1];
    return errnos[code as Errno] ?? errnos.ENOENT;
  }
}
