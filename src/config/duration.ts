import { ReflexError } from '../errors/reflex-error.js';

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `500ms`, `40s`, `2m`, `24h`, `7d` or a bare number of milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) throw new ReflexError('CONFIG_INVALID', `"${text}" is not a duration (expected e.g. 500ms, 40s, 2m, 24h, 7d)`);
  return Math.round(Number(m[1]) * units[m[2] ?? 'ms']!);
}
