import type { Command } from 'just-bash';
import type { CommandOutcome } from './scripted-commands.js';

/**
 * Shell builtins a test may script like a program (`test -f /run/ok`, `[ -f /run/ok ]`, `echo`,
 * `true`, …). The guest's shell runs its builtins before any program of that name, so a script of
 * one would never be asked: each scripted builtin is shadowed by a shell function that asks the
 * scripts first and runs the builtin itself when none answers the call.
 */
const scriptable = new Set(['test', '[', 'echo', 'printf', 'true', 'false', 'pwd', 'kill']);

/** The program the shadowing functions call. */
const asker = '__reflex_scripted_builtin';

/** The scripted programs among `programs` that are shell builtins. */
export function scriptedBuiltins(programs: Iterable<string>): string[] {
  return [...programs].filter((p) => scriptable.has(p));
}

/**
 * The shell functions that shadow `builtins`, on one line ending in `; `: put before a script, the
 * script's own line numbers stay as they are.
 */
export function builtinShadows(builtins: readonly string[]): string {
  return builtins.map((b) => `${b}() { ${asker} ${b} "$@"; }; `).join('');
}

/**
 * The program the shadows call: the scripted outcome of the call (as {@link scriptedCommand} gives
 * it), or the builtin itself when no script answers it.
 */
export function scriptedBuiltinCommand(
  take: (argv: string[]) => CommandOutcome | undefined,
  sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>,
  ended: (outcome: CommandOutcome, interrupted: boolean) => void,
): Command {
  return {
    name: asker,
    async execute(args, ctx) {
      const outcome = take(args);
      if (!outcome) {
        if (!ctx.exec) return { stdout: '', stderr: `sh: ${args[0]}: cannot run\n`, exitCode: 126 };
        return ctx.exec(`builtin ${args.map(quote).join(' ')}`, { cwd: ctx.cwd, stdin: String(ctx.stdin), stdinKind: 'bytes' });
      }
      if (outcome.hang) await sleep(Number.POSITIVE_INFINITY, ctx.signal);
      else if (outcome.delayMs) await sleep(outcome.delayMs, ctx.signal);
      ended(outcome, ctx.signal?.aborted === true);
      return { stdout: outcome.stdout ?? '', stderr: outcome.stderr ?? '', exitCode: outcome.exitCode ?? 0 };
    },
  };
}

function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
