import { formatDuration } from './duration-text.js';
import { selectGfs, type GfsCounts } from './gfs.js';

/** What retention needs to know about one snapshot. */
export interface SnapshotInfo {
  name: string;
  /** Creation time in epoch ms; 0 when unknown (it then ranks oldest). */
  createdAt: number;
  /** Expiry in epoch ms; undefined when the snapshot never expires. */
  expiresAt?: number;
  /** A snapshot this tick is about to create: not on the server yet, always kept. */
  planned?: boolean;
}

/** A retention policy for the snapshots one schedule owns on one instance. */
export interface RetentionPolicy {
  /** Keep the newest N good snapshots. */
  keepLast?: number;
  /** Keep the newest snapshot of each of the most recent N hours, days, weeks, months, years. */
  gfs?: GfsCounts;
  /** Keep every good snapshot taken within this many ms before now (restic's `--keep-within`). */
  keepWithinMs?: number;
  /** Time zone the GFS periods follow. Default UTC. */
  tz?: string;
}

/** The verdict on every snapshot of an instance. */
export interface RetentionPlan {
  /** Owned snapshots kept, newest first, each with why. */
  keep: { name: string; reasons: string[] }[];
  /** Owned snapshots to delete, oldest first, each with why. */
  delete: { name: string; reason: string }[];
  /** Snapshots the schedule does not own: never touched. */
  unowned: string[];
}

/** Newest first; ties by name (descending) so the order is total and the plan deterministic. A planned snapshot is the newest. */
function newestFirst(a: SnapshotInfo, b: SnapshotInfo): number {
  if (Boolean(a.planned) !== Boolean(b.planned)) return a.planned ? -1 : 1;
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.name < b.name ? 1 : a.name > b.name ? -1 : 0;
}

/** Whether a snapshot is good at `now`: it has not expired (an expired one is the daemon's to remove). */
export function isGood(s: SnapshotInfo, now: number): boolean {
  return s.planned === true || s.expiresAt === undefined || s.expiresAt > now;
}

/**
 * Decides which of an instance's snapshots to keep and which to delete. Pure.
 *
 * - Only snapshots `isOwned` accepts are considered; the others are listed as unowned and never deleted.
 * - Among owned good snapshots (not expired), a snapshot is kept when `keepLast`, `keepWithinMs`
 *   or a GFS period selects it; the newest good one is always kept, whatever the policy says.
 * - Owned snapshots that already expired are deleted (reason "expired").
 */
export function planRetention(snapshots: SnapshotInfo[], policy: RetentionPolicy, isOwned: (name: string) => boolean, now: number): RetentionPlan {
  const owned = snapshots.filter((s) => isOwned(s.name));
  const unowned = snapshots.filter((s) => !isOwned(s.name)).map((s) => s.name);
  const good = owned.filter((s) => isGood(s, now)).sort(newestFirst);
  const reasons = good.map<string[]>(() => []);
  if (good.length > 0) reasons[0]!.push(good[0]!.planned ? 'new' : 'newest');
  const keepLast = policy.keepLast ?? 0;
  for (let i = 0; i < Math.min(keepLast, good.length); i++) reasons[i]!.push(`last ${keepLast}`);
  if (policy.keepWithinMs !== undefined) {
    good.forEach((s, i) => {
      if (s.planned || s.createdAt >= now - policy.keepWithinMs!) reasons[i]!.push(`within ${formatDuration(policy.keepWithinMs!)}`);
    });
  }
  if (policy.gfs) {
    for (const [i, r] of selectGfs(
      good.map((s) => s.createdAt),
      policy.gfs,
      policy.tz,
    ))
      reasons[i]!.push(...r);
  }
  const keep: RetentionPlan['keep'] = [];
  const del: RetentionPlan['delete'] = [];
  good.forEach((s, i) => {
    if (reasons[i]!.length > 0) keep.push({ name: s.name, reasons: reasons[i]! });
    else if (!s.planned) del.push({ name: s.name, reason: 'not selected by the retention policy' });
  });
  for (const s of owned) {
    if (!isGood(s, now)) del.push({ name: s.name, reason: `expired at ${new Date(s.expiresAt!).toISOString()}` });
  }
  del.sort((a, b) => newestFirst(byName(snapshots, b.name), byName(snapshots, a.name)));
  return { keep, delete: del, unowned };
}

function byName(list: SnapshotInfo[], name: string): SnapshotInfo {
  return list.find((s) => s.name === name)!;
}
