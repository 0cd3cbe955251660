import { absolute, zoneOf } from './markup.js';

/** The console's time range: what the operator types, what the address carries, and zooming. No DOM. */

const unitMs: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const durationPattern = /^(\d+(?:\.\d+)?(?:ms|s|m|h|d|w))+$/;

/** A duration as the server reads it (`90m`, `1h30m`, `2d`) in ms, or undefined. */
export function durationMs(text: string): number | undefined {
  const t = text.trim();
  if (!durationPattern.test(t)) return undefined;
  let ms = 0;
  for (const [, n, unit] of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/g)) ms += Number(n) * unitMs[unit!]!;
  return ms;
}

/** A compact duration the server reads back: `90m`, `36h`, `3d`. */
export function durationArg(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  return `${Math.max(1, Math.round(ms / 60_000))}m`;
}

/**
 * What the operator typed into from or until, as the address and the API take it: '' (now, or the
 * preset), a duration back from now as typed (`90m`), or an ISO time. A time without a zone is in
 * the zone the page shows (UTC or the browser's). Undefined when it is neither.
 */
export function readTimeField(text: string): string | undefined {
  const t = text.trim();
  if (!t) return '';
  if (durationMs(t) !== undefined) return t;
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(t);
  if (m) {
    const [y, mo, d, h, mi, s] = m.slice(1).map((x) => Number(x ?? 0)) as [number, number, number, number, number, number];
    const ms = zoneOf() === 'utc' ? Date.UTC(y, mo - 1, d, h, mi, s) : new Date(y, mo - 1, d, h, mi, s).getTime();
    return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
  }
  if (!/^\d{4}-\d{2}-\d{2}T/.test(t)) return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** A `since` or `until` value in ms (a duration back from `now`, or a time). */
export function timeOf(v: string, now = Date.now()): number {
  const back = durationMs(v);
  return back !== undefined ? now - back : Date.parse(v);
}

/** The range in words: `last 24 h`, or `2026-11-25 18:00:00 UTC → 2026-11-25 20:00:00 UTC (2 h)`. */
export function rangeText(since: string, until: string, now = Date.now()): string {
  const back = durationMs(since);
  if (!until && back !== undefined) return `showing the last ${since.replace(/(\d)([a-z])/g, '$1 $2')}`;
  const from = timeOf(since, now);
  const to = until ? timeOf(until, now) : now;
  const hours = (to - from) / 3_600_000;
  const span = hours >= 48 ? `${Math.round(hours / 24)} days` : hours >= 1 ? `${Math.round(hours * 10) / 10} h` : `${Math.round(hours * 60)} min`;
  return `showing ${absolute(from)} → ${until ? absolute(to) : 'now'} (${span})`;
}

/** The range twice as wide around its middle (not past now); a range up to now stays relative. */
export function zoomOut(since: string, until: string, now = Date.now()): { since: string; until: string } {
  // An inverted range (until typed before since, or so in the address) zooms out around the same stretch.
  const a = timeOf(since, now);
  const b = until ? timeOf(until, now) : now;
  const from = Math.min(a, b);
  const to = Math.max(a, b);
  const width = Math.max(60_000, to - from);
  const nextTo = Math.min(now, to + width / 2);
  const nextFrom = nextTo - 2 * width;
  if (now - nextTo < 1_000) return { since: durationArg(Math.round((now - nextFrom) / 60_000) * 60_000), until: '' };
  return { since: new Date(nextFrom).toISOString(), until: new Date(nextTo).toISOString() };
}

/** The stretch of [from, to] between two x positions (viewBox units) of a plot drawn from x0 to x1. */
export function zoomTo(from: number, to: number, xa: number, xb: number, x0: number, x1: number): { since: string; until: string } {
  const at = (x: number) => from + ((Math.min(x1, Math.max(x0, x)) - x0) / (x1 - x0)) * (to - from);
  const a = Math.round(at(Math.min(xa, xb)) / 1_000) * 1_000;
  const b = Math.round(at(Math.max(xa, xb)) / 1_000) * 1_000;
  return { since: new Date(a).toISOString(), until: new Date(Math.max(b, a + 1_000)).toISOString() };
}
