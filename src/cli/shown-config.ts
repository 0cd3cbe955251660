import { redact } from '../audit/redact.js';
import type { Config } from '../config/config.js';
import { shownReceiverUrl } from '../notify/receiver-config.js';

/**
 * Whether a field names where a secret is (an environment variable, a file) rather than holding
 * it: `tokenEnv`, `secretEnv`, `urlFile`, `postgresUrlEnv`…, a header's source in `headersFrom`,
 * and `clientKey`, the path of the key file. Its value is shown, though its name sounds secret.
 */
function namesASecret(path: readonly string[]): boolean {
  const field = path.at(-1) ?? '';
  return /(Env|File)$/.test(field) || field === 'clientKey' || path.at(-2) === 'headersFrom';
}

/**
 * The configuration as `reflex run --print-config` shows it: every secret value redacted (the
 * dashboard tokens, a password in the Redis URL, a receiver's URL past its origin), every name of
 * a secret shown (the variables and files it is read from), so an operator can check what is read
 * from where without seeing what it holds.
 */
export function shownConfig(config: Config): Record<string, unknown> {
  const shown = redact(config) as unknown as Record<string, unknown>;
  // Walked with a stack, not recursion: the config file's nesting is the user's.
  const stack: { given: unknown; into: Record<string, unknown> | unknown[]; path: string[] }[] = [{ given: config, into: shown, path: [] }];
  while (stack.length) {
    const { given, into, path } = stack.pop()!;
    if (!given || typeof given !== 'object') continue;
    for (const [k, v] of Object.entries(given)) {
      const at = [...path, k];
      const target = into as Record<string, unknown>;
      if (namesASecret(at) && v !== undefined) target[k] = v;
      else if (v && typeof v === 'object' && target[k] && typeof target[k] === 'object')
        stack.push({ given: v, into: target[k] as Record<string, unknown>, path: at });
    }
  }
  const receivers = (shown.notifications as { receivers?: Record<string, unknown>[] } | undefined)?.receivers;
  config.notifications?.receivers.forEach((given, i) => {
    if ('url' in given && given.url !== undefined && receivers?.[i]) receivers[i]!.url = shownReceiverUrl(given.url);
  });
  return shown;
}
