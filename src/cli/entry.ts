import { CommanderError } from 'commander';
import type { ErrorCode } from '../errors/codes.js';
import { ReflexError } from '../errors/reflex-error.js';
import { buildProgram } from './main.js';

/** Exit codes of the `reflex` command, documented in docs/reference.md. */
export const exitCodes = { ok: 0, failure: 1, usage: 2, config: 3, unavailable: 4 } as const;

/** The exit code of each error code that is not a plain failure (1). */
const exitOfCode: Partial<Record<ErrorCode, keyof typeof exitCodes>> = {
  CONFIG_INVALID: 'config',
  TARGET_INVALID: 'config',
  RULES_MISSING: 'config',
  RULE_INVALID: 'config',
  HTTP_BIND_FAILED: 'config',
  REDIS_UNAVAILABLE: 'unavailable',
  TARGET_UNREACHABLE: 'unavailable',
};

/** Runs the CLI; prints a clear message instead of a stack trace for errors Reflex knows. */
export async function main(argv: string[]): Promise<void> {
  try {
    await (await buildProgram(argv)).parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has printed the message (or the help, or the version) already. Every error it
      // raises is a usage error: unknown command or option, missing or invalid value, conflict;
      // `reflex` alone prints the help and counts as one too.
      process.exitCode = err.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
      return;
    }
    if (err instanceof ReflexError) {
      process.stderr.write(`reflex: ${err.message}\n`);
      process.exitCode = exitCodes[exitOfCode[err.code] ?? 'failure'];
      return;
    }
    const sys = err as NodeJS.ErrnoException;
    if (typeof sys.code === 'string' && typeof sys.path === 'string') {
      // A file a command was told to read or write (`audit export --out`, `rules test --event`):
      // Node's message names the call, the file and the reason in one line.
      process.stderr.write(`reflex: ${sys.message}\n`);
      process.exitCode = exitCodes.failure;
      return;
    }
    // Anything else is a bug: its stack is what a report needs.
    process.stderr.write(`reflex: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = exitCodes.failure;
  }
}
