import type { Command, CommandContext, ExecResult } from 'just-bash';
import { getopt, isResult, usage } from './busybox-getopt.js';
import { jobDeath, signalNumbers } from './guest-commands.js';
import { NamedPipes } from './guest-pipes.js';
import { trappedByShellRunning } from './shell-builtins.js';
import { execFailure } from './program-output.js';
import { shellQuote } from './program-run.js';

const usageText =
  'Usage: timeout [-s SIG] [-k KILL_SECS] SECS PROG ARGS\n\n' +
  'Run PROG. Send SIG to it if it is not gone in SECS seconds.\nDefault SIG: TERM.If it still exists in KILL_SECS seconds, send KILL.\n\n';

/** A number of seconds as busybox's parse_duration_str reads it (a decimal number, then `s`, `m`, `h` or `d`), or undefined. */
function seconds(word: string): number | undefined {
  const m = /^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$/.exec(word);
  if (!m) return undefined;
  return Number(m[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] as '' | 's' | 'm' | 'h' | 'd'];
}

/** A signal as get_signum reads it: a number, or a name with or without `SIG`. */
function signalOf(word: string): number | undefined {
  if (/^\d+$/.test(word)) return Number(word) < 65 ? Number(word) : undefined;
  return signalNumbers[word.toUpperCase().replace(/^SIG/, '')];
}

/**
 * busybox's timeout (coreutils/timeout.c): PROG runs in timeout's place (exec, so it keeps its pid
 * and its status is the command's), and a watcher sends it SIG (TERM, `-s`) once SECS have passed:
 * PROG dies of it, so its shell sees a job a signal ended (128 + SIG, and ash's word for it:
 * `Terminated`, `Killed`; nothing for INT), what it wrote before kept, a nested `sh`'s too
 * (the patched shell hands it up with the abort, patches/README.md 78). Not GNU's 124 (just-bash's,
 * which also dropped what the program had written). A bad SECS is `invalid number 'X'`, a program
 * it cannot run `can't execute` (127). A program is killed outright, but for a shell PROG whose
 * trap takes SIG: its trap runs and the shell ends as that says, unless `-k`'s KILL comes first
 * (`Killed`, 137).
 */
export function timeoutCommand(): Command {
  return {
    name: 'timeout',
    async execute(args, ctx) {
      const line = getopt('timeout', usageText, args, '', 'sk', null, { untilOperand: true });
      if (isResult(line)) return line;
      const named = line.opts.get('s');
      const signal = typeof named === 'string' ? signalOf(named) : signalNumbers.TERM!;
      if (signal === undefined) return { stdout: '', stderr: `timeout: unknown signal '${String(named)}'\n`, exitCode: 1 };
      const kill = line.opts.get('k');
      if (typeof kill === 'string' && seconds(kill) === undefined) return invalidNumber(kill);
      const [secs, ...argv] = line.operands;
      if (secs === undefined || argv.length === 0) return usage(usageText);
      const limit = seconds(secs);
      if (limit === undefined) return invalidNumber(secs);
      const watcher = new AbortController();
      let killing: ReturnType<typeof setTimeout> | undefined;
      let died = signal;
      // A shell PROG that traps the signal takes it (its trap runs, and it ends as that says), but for `-k`'s KILL after.
      const timer = setTimeout(() => {
        if (!trappedByShellRunning(signal)) return watcher.abort();
        if (typeof kill === 'string')
          killing = setTimeout(
            () => {
              died = signalNumbers.KILL!;
              watcher.abort();
            },
            seconds(kill)! * 1000,
          );
      }, limit * 1000);
      try {
        const ran = await run(ctx, argv, ctx.signal ? AbortSignal.any([ctx.signal, watcher.signal]) : watcher.signal);
        if (!watcher.signal.aborted || ctx.signal?.aborted)
          return execFailure(ran, argv[0]!, (why) => `timeout: can't execute '${argv[0]}': ${why}\n`);
        // just-bash's word for the abort is not the guest's: the program died of the signal.
        // Nor is its complaint of a program that went on after the abort (one a named pipe's wait held): it died there.
        const stderr = ran.stderr.replace(/^(?:ba)?sh: (?:execution aborted|\S+ used its context after cancellation)\n/gm, '');
        return { stdout: ran.stdout, stderr: `${stderr}${jobDeath(died)}`, exitCode: 128 + died };
      } finally {
        clearTimeout(timer);
        clearTimeout(killing);
      }
    },
  };
}

/** PROG ARGS run through the shell with timeout's stdin until `signal` aborts it: its result, or what it wrote before it was killed. */
async function run(ctx: CommandContext, argv: string[], signal: AbortSignal): Promise<ExecResult> {
  try {
    // Its signal also ends a wait at a named pipe (`timeout 1 cat fifo`), as the kernel's signal ends open(2).
    return await NamedPipes.during(signal, () =>
      ctx.exec!(argv.map(shellQuote).join(' '), {
        cwd: ctx.cwd,
        stdin: String(ctx.stdin),
        stdinKind: 'bytes',
        signal,
      } as Parameters<NonNullable<CommandContext['exec']>>[1]),
    );
  } catch (e) {
    if (!signal.aborted) throw e;
    const sofar = e as { stdout?: string; stderr?: string };
    return { stdout: sofar.stdout ?? '', stderr: sofar.stderr ?? '', exitCode: 1 };
  }
}

const invalidNumber = (word: string): ExecResult => ({ stdout: '', stderr: `timeout: invalid number '${word}'\n`, exitCode: 1 });
