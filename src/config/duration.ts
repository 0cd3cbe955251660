import { z } from 'zod';
import { ReflexError } from '../errors/reflex-error.js';

const units: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const term = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g;

/** What a duration looks like, for error messages and help texts. */
export const durationExamples = '500ms, 90s, 15m, 1h30m, 7d, 2w';

/**
 * The one duration parser of Reflex: `500ms`, `90s`, `15m`, `1h30m`, `24h`, `7d`, `2w` (units ms,
 * s, m, h, d, w, which may be combined largest first or in any order) or a bare number of
 * milliseconds. Returns undefined for anything else (`soon`, `-5s`, `1 h`, ``).
 */
export function readDuration(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t));
  if (!new RegExp(`^(${term.source})+$`).test(t)) return undefined;
  let ms = 0;
  for (const [, n, unit] of t.matchAll(term)) ms += Number(n) * units[unit!]!;
  return Math.round(ms);
}

/** {@link readDuration}, throwing CONFIG_INVALID when the text is not a duration. */
export function parseDuration(text: string): number {
  const ms = readDuration(text);
  if (ms === undefined) throw new ReflexError('CONFIG_INVALID', `"${text}" is not a duration (expected e.g. ${durationExamples})`);
  return ms;
}

/**
 * A config field in milliseconds that also takes a duration string (`resyncIntervalMs: 30s`).
 * Numbers go to `schema` unchanged; a string that is not a duration is an issue naming the forms.
 */
export function durationMs<T extends z.ZodType<number>>(schema: T) {
  return z
    .preprocess((value, ctx) => {
      if (typeof value !== 'string') return value;
      const ms = readDuration(value);
      if (ms === undefined) ctx.addIssue({ code: 'custom', message: `not a duration (a number of ms, or e.g. ${durationExamples})`, input: value });
      return ms ?? value;
    }, schema)
    .meta({ format: 'duration' });
}
