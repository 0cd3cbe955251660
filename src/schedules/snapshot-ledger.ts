import type { RedisConnection } from '../redis/connect.js';
import { z } from 'zod';
import type { InstanceRef, ScheduleKeys } from '../redis/key-space.js';
import type { SnapshotInfo } from './housekeeping/retention-plan.js';

/**
 * The record of the snapshots Reflex made, per instance: the only proof of ownership. LXD 5.0
 * gives a snapshot no field of its own to mark it (`PATCH` changes only `expires_at`; its config is
 * the instance's), and a name proves nothing: anyone can make a snapshot called `auto-…`.
 *
 * A tick *claims* a name before it queues the job that makes it, only for a name no snapshot had
 * when the tick listed them. The next tick *settles* the claim: the job made it (the snapshot is
 * there and the job ended `done`) → confirmed, with the daemon's `created_at`; the job failed or
 * never ran → forgotten. A confirmed snapshot stays Reflex's only while the snapshot of that name
 * has that creation time: deleted and made again by someone else, it is theirs.
 */
export const ledgerEntrySchema = z.object({
  /** The schedule that made it. */
  schedule: z.string(),
  /** Due time of the tick that claimed it (ms). */
  tickAt: z.number(),
  /** When the claim was written (ms, Reflex's clock). */
  claimedAt: z.number(),
  /** The housekeeping job that makes it. */
  jobId: z.string(),
  /** The daemon's creation time, once a later tick saw the snapshot made by that job. */
  createdAt: z.number().optional(),
  /** A tick planned to delete it, in this job. */
  deleting: z.object({ tickAt: z.number(), jobId: z.string() }).optional(),
});
export type LedgerEntry = z.infer<typeof ledgerEntrySchema>;

/** How a housekeeping job ended, as far as the ledger cares. `unknown`: no such job (never queued, or removed). */
export type JobState = 'pending' | 'done' | 'skipped' | 'failed' | 'unknown';

/** How a housekeeping job ended, and the snapshot it made when it named it when it ran (it ran late) instead of as claimed. */
export interface JobReport {
  state: JobState;
  snapshot?: string;
  /**
   * Every name the job recorded, before it sent the snapshot, that it would take its snapshot under
   * when it ran late, over all its attempts. An attempt whose answer was lost (its wait timed out or
   * was cut, its worker stalled and another resumed the operation) may have made one that the job's
   * outcome does not name.
   */
  named?: string[];
  /** Whether the job may have run late (its steps then named the snapshot when they took it): its recorded names are then read. */
  ranLate?: boolean;
  /** When the job ended (ms, Reflex's clock): a snapshot created later is not the job's. */
  endedAt?: number;
}

/** Slack between the daemon's clock (a snapshot's created_at) and Reflex's (a job's end). */
const CLOCK_SLACK_MS = 60_000;

/** The ledger of one deployment. */
export class SnapshotLedger {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: ScheduleKeys,
  ) {}

  /** Every entry of an instance, by snapshot name; unreadable entries are left out (they prove nothing). */
  async read(ref: InstanceRef): Promise<Map<string, LedgerEntry>> {
    const raw = await this.redis.hgetall(this.keys.ledger(ref));
    const out = new Map<string, LedgerEntry>();
    for (const [name, json] of Object.entries(raw)) {
      try {
        const parsed = ledgerEntrySchema.safeParse(JSON.parse(json));
        if (parsed.success) out.set(name, parsed.data);
      } catch {
        // Not JSON: not a record of ours.
      }
    }
    return out;
  }

  /** Writes and removes entries of one instance in one round trip. */
  async apply(ref: InstanceRef, write: Map<string, LedgerEntry>, forget: string[]): Promise<void> {
    if (write.size === 0 && forget.length === 0) return;
    const key = this.keys.ledger(ref);
    const tx = this.redis.multi();
    if (forget.length) tx.hdel(key, ...forget);
    for (const [name, entry] of write) tx.hset(key, name, JSON.stringify(entry));
    await tx.exec();
  }
}

/** What settling a schedule's entries of one instance decided. Pure data. */
export interface Settlement {
  /** Snapshots on the server this schedule proved to have made, by name. */
  owned: Map<string, LedgerEntry>;
  /** Entries to write back (confirmed, or a deletion that did not happen cleared). */
  write: Map<string, LedgerEntry>;
  /** Entries to remove (the snapshot is gone, or it was never ours). */
  forget: string[];
  /** Of those, the ones whose snapshot is still listed: no longer taken for this schedule's, and why (the trail says so). */
  disowned: { name: string; why: string }[];
  /** Every name the ledger holds for the instance, any schedule: reserved, never reused for a new snapshot. */
  reserved: Set<string>;
  /** Due times of this schedule's ticks that already claimed a snapshot (a tick run again makes none). */
  claimedTicks: Set<number>;
  /** Outcomes found since the last tick, for the metrics. */
  made: string[];
  pruned: string[];
  failed: { name: string; step: 'create' | 'delete' }[];
  /** Entries whose job is still running: checked again next tick. */
  pending: string[];
  /** This schedule's jobs that have not ended yet, with the due time of the tick that queued each. */
  waiting: { jobId: string; tickAt: number }[];
}

/**
 * Settles `schedule`'s entries of one instance against its snapshots as listed and the state of
 * the jobs that made or deleted them. Pure; the tick writes the result, `reflex housekeeping plan`
 * only reads it. Entries of other schedules are left to their own ticks (counted once).
 */
export function settleLedger(
  schedule: string,
  entries: Map<string, LedgerEntry>,
  snapshots: SnapshotInfo[],
  jobState: (jobId: string) => JobState | JobReport,
): Settlement {
  const present = new Map(snapshots.map((s) => [s.name, s]));
  const out: Settlement = {
    owned: new Map(),
    write: new Map(),
    forget: [],
    disowned: [],
    reserved: new Set(entries.keys()),
    claimedTicks: new Set(),
    made: [],
    pruned: [],
    failed: [],
    pending: [],
    waiting: [],
  };
  const wait = (jobId: string, tickAt: number) => {
    if (!out.waiting.some((w) => w.jobId === jobId)) out.waiting.push({ jobId, tickAt });
  };
  for (const [name, entry] of entries) {
    if (entry.schedule !== schedule) continue;
    const snap = present.get(name);
    if (entry.createdAt === undefined) {
      // A claim: the job that makes it may have run.
      const report = reportOf(jobState(entry.jobId));
      const state = report.state;
      if (state === 'pending') {
        out.pending.push(name);
        out.claimedTicks.add(entry.tickAt);
        wait(entry.jobId, entry.tickAt);
        continue;
      }
      // The job ran late and named its snapshot when it took it: the claim moves to that name, on the
      // job's word: its outcome, and the names it recorded before sending (an attempt whose answer was
      // lost made one its outcome does not name; the job may even have failed after it). Each is the
      // job's only if nobody else's claim holds it and the daemon made it before the job ended.
      const late = new Set(report.named ?? []);
      if (state === 'done' && report.snapshot !== undefined) late.add(report.snapshot);
      late.delete(name);
      if (late.size > 0) {
        out.forget.push(name);
        if (snap) out.disowned.push({ name, why: `its job ran late and took its snapshot as ${[...late].join(', ')}` });
        let took = 0;
        for (const made of late) {
          const s = present.get(made);
          const other = entries.get(made);
          if (!s || (other && other.jobId !== entry.jobId)) continue;
          if (report.endedAt !== undefined && s.createdAt > report.endedAt + CLOCK_SLACK_MS) continue;
          const moved = { ...entry, createdAt: s.createdAt };
          out.reserved.add(made);
          out.write.set(made, moved);
          out.owned.set(made, moved);
          out.claimedTicks.add(entry.tickAt);
          out.made.push(made);
          took++;
        }
        if (took === 0 && (state === 'failed' || state === 'unknown')) out.failed.push({ name, step: 'create' });
        continue;
      }
      if (snap && state === 'done') {
        const confirmed = { ...entry, createdAt: snap.createdAt };
        out.write.set(name, confirmed);
        out.owned.set(name, confirmed);
        out.claimedTicks.add(entry.tickAt);
        out.made.push(name);
        continue;
      }
      // Failed, skipped, or no such job: if a snapshot of that name exists, someone else made it.
      out.forget.push(name);
      if (snap)
        out.disowned.push({
          name,
          why: `the job that was to make it ${state === 'done' ? 'ended done before the listing, which did not show it' : `is ${state}`}`,
        });
      if (state === 'failed' || state === 'unknown') out.failed.push({ name, step: 'create' });
      continue;
    }
    if (!snap) {
      out.forget.push(name);
      if (entry.deleting) out.pruned.push(name);
      continue;
    }
    if (snap.createdAt !== entry.createdAt) {
      // Deleted and made again under the same name, not by this schedule.
      out.forget.push(name);
      out.disowned.push({
        name,
        why: `it is listed as made at ${new Date(snap.createdAt).toISOString()}, the ledger confirmed it made at ${new Date(entry.createdAt).toISOString()}`,
      });
      continue;
    }
    out.claimedTicks.add(entry.tickAt);
    let kept = entry;
    if (entry.deleting) {
      const state = reportOf(jobState(entry.deleting.jobId)).state;
      if (state === 'pending') {
        out.pending.push(name);
        wait(entry.deleting.jobId, entry.deleting.tickAt);
      } else {
        if (state !== 'skipped') out.failed.push({ name, step: 'delete' });
        const { deleting: _, ...rest } = entry;
        kept = rest;
        out.write.set(name, kept);
      }
    }
    out.owned.set(name, kept);
  }
  return out;
}

function reportOf(r: JobState | JobReport): JobReport {
  return typeof r === 'string' ? { state: r } : r;
}

/** Names of the snapshots any schedule proved Reflex made (confirmed, same creation time as listed). */
export function provenNames(entries: Map<string, LedgerEntry>, snapshots: SnapshotInfo[]): Set<string> {
  const out = new Set<string>();
  for (const s of snapshots) {
    const e = entries.get(s.name);
    if (e?.createdAt !== undefined && e.createdAt === s.createdAt) out.add(s.name);
  }
  return out;
}
