import { ReflexError } from '../errors/reflex-error.js';
import { alertValue, type Alert } from './alert.js';
import { alertKinds, currentKind, type AlertKindEntry } from './catalogue.js';

/**
 * Compiles `match` (key → value, or any of several values) and `matchRe` (key → anchored regular
 * expression) into one test on alerts, as routes and inhibition rules use them. Keys are alert
 * fields or labels (see {@link alertValue}); a kind matches by its current or former spelling. `where` names the setting in CONFIG_INVALID errors.
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
  // A kind's former spelling (alerts/catalogue.ts) matches it still.
  const equals = Object.entries(match ?? {}).map(([k, want]) => [k, k === 'kind' ? [want].flat().map(currentKind) : [want].flat()] as const);
  return (a) =>
    equals.every(([k, want]) => {
      const v = alertValue(a, k);
      return v !== undefined && want.includes(k === 'kind' ? currentKind(v) : v);
    }) && res.every(([k, re]) => re.test(alertValue(a, k) ?? '') || (k === 'kind' && re.test(formerSpelling(a.kind) ?? '')));
}

function formerSpelling(kind: string): string | undefined {
  return (alertKinds as Record<string, AlertKindEntry>)[currentKind(kind)]?.formerly;
}
