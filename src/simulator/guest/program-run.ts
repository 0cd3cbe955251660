import type { CommandContext, ExecResult } from 'just-bash';
import { execFailure, type OrderedResult } from './program-output.js';

/** A word as the shell reads it back unchanged: single-quoted, a quote in it as `'\''`. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs `argv` as an applet that execs a program does (`setsid`, `time`: libbb's BB_EXECVP_or_die):
 * through the shell, with the applet's stdin, and a program it cannot run said as `say` words it
 * ({@link execFailure}).
 */
export async function execProgram(ctx: CommandContext, argv: string[], say: (why: string) => string): Promise<OrderedResult> {
  const ran: ExecResult = await ctx.exec!(argv.map(shellQuote).join(' '), {
    cwd: ctx.cwd,
    stdin: String(ctx.stdin),
    stdinKind: 'bytes',
  } as Parameters<NonNullable<CommandContext['exec']>>[1]);
  return execFailure(ran, argv[0]!, say);
}
