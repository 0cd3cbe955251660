import { civilTime, isoWeek } from './civil-time.js';

/** The calendar periods of a GFS (grandfather-father-son) policy. */
export const gfsPeriods = ['hourly', 'daily', 'weekly', 'monthly', 'yearly'] as const;
export type GfsPeriod = (typeof gfsPeriods)[number];

/** How many periods of each kind keep a snapshot; an omitted or 0 count keeps none by that period. */
export type GfsCounts = Partial<Record<GfsPeriod, number>>;

/**
 * The bucket an instant falls in for a period, as wall-clock text in `tz`: `2024-03-05T14` (hourly),
 * `2024-03-05` (daily), `2024-W10` (ISO week), `2024-03` (monthly), `2024` (yearly).
 */
export function periodKey(period: GfsPeriod, ms: number, tz = 'UTC'): string {
  const t = civilTime(ms, tz);
  const p = (n: number) => String(n).padStart(2, '0');
  switch (period) {
    case 'hourly':
      return `${t.year}-${p(t.month)}-${p(t.day)}T${p(t.hour)}`;
    case 'daily':
      return `${t.year}-${p(t.month)}-${p(t.day)}`;
    case 'weekly': {
      const w = isoWeek(t.year, t.month, t.day);
      return `${w.year}-W${p(w.week)}`;
    }
    case 'monthly':
      return `${t.year}-${p(t.month)}`;
    case 'yearly':
      return String(t.year);
  }
}

/**
 * GFS selection over items sorted newest first: for each period, the newest item of each of the
 * `counts[period]` most recent buckets that hold an item (restic's `--keep-daily` semantics: empty
 * periods do not use up the count). Returns, per kept index, the reasons it is kept.
 */
export function selectGfs(createdAtNewestFirst: number[], counts: GfsCounts, tz = 'UTC'): Map<number, string[]> {
  const reasons = new Map<number, string[]>();
  for (const period of gfsPeriods) {
    const want = counts[period] ?? 0;
    if (want <= 0) continue;
    const seen = new Set<string>();
    for (let i = 0; i < createdAtNewestFirst.length; i++) {
      const key = periodKey(period, createdAtNewestFirst[i]!, tz);
      if (seen.has(key)) continue;
      if (seen.size >= want) break;
      seen.add(key);
      const r = reasons.get(i) ?? [];
      r.push(`${period} ${key}`);
      reasons.set(i, r);
    }
  }
  return reasons;
}
