import { ReflexError } from '../errors/reflex-error.js';
import { alertValue, type Alert } from './alert.js';

/**
 * Compiles `match` (key → value, or any of several values) and `matchRe` (key → anchored regular
 * expression) into one test on alerts, as routes and inhibition rules use them. Keys are alert
 * fields or labels (see {@link alertValue}). `where` names the setting in CONFIG_INVALID errors.
 */
export function alertMatcher(
  match: Record<string, string | string[]> | undefined,
  matchRe: Record<string, string> | undefined,
  where: string,
): (a: Alert) => boolean {
  const res = Object.entries(matchRe ?? {}).map(([k, re]) => {
    try {
      return [k, new RegExp(`^(?:${re})$`)] as const;
    } catch (err) {
      throw new ReflexError('CONFIG_INVALID', `${where}: matchRe.${k} is not a regular expression: ${(err as Error).message}`);
    }
  });
  const equals = Object.entries(match ?? {});
  return (a) =>
    equals.every(([k, want]) => {
      const v = alertValue(a, k);
      return v !== undefined && (Array.isArray(want) ? want.includes(v) : want === v);
    }) && res.every(([k, re]) => re.test(alertValue(a, k) ?? ''));
}
