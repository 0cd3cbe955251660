// A child process that type-checks one rules folder ({@link typeCheckRulesApart}): the compiler
// and its trees live and die in its own memory, never in the long-running process.
import { ReflexError } from '../errors/reflex-error.js';
import { typeCheckRules } from './rule-checker.js';

const dir = process.argv[2]!;
const answer = (message: unknown): Promise<void> => new Promise((resolve) => process.send!(message, () => resolve()));
try {
  await answer({ problems: await typeCheckRules(dir, { keepParsedMs: 0 }) });
} catch (err) {
  await answer({
    error: err instanceof ReflexError ? { code: err.code, message: err.message } : { message: err instanceof Error ? err.message : String(err) },
  });
}
process.disconnect();
