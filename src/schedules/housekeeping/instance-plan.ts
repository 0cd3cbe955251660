import type { Instance, Snapshot } from '../../client/instance.js';
import { StatusCode } from '../../client/status-code.js';
import { evaluateFilter } from '../../filter/evaluator.js';
import { formatDuration as duration } from './duration-text.js';
import { planRetention, type SnapshotInfo } from './retention-plan.js';
import { formatSnapshotName, snapshotNameMatcher, uniqueSnapshotName } from './snapshot-name.js';
import type { Task } from './tasks.js';

/** One change a tick makes to an instance, in the order it runs. */
export type PlanStep =
  | { kind: 'create-snapshot'; task: 'snapshot'; name: string; expiresAt?: string; dryRun: boolean }
  | { kind: 'delete-snapshot'; task: 'retention' | 'prune-expired'; name: string; reason: string; dryRun: boolean }
  | { kind: 'delete-instance'; task: 'delete-stopped'; reason: string; dryRun: boolean };

/** What a tick will do to one instance, and why. Plain data: audited with every call it leads to. */
export interface InstancePlan {
  instance: string;
  project: string;
  /** Changes in execution order. */
  steps: PlanStep[];
  /** Owned snapshots retention keeps, newest first, with why. */
  keep: { name: string; reasons: string[] }[];
  /** Whether deletions run before the new snapshot (pool low on space) or after it. */
  order: 'create-first' | 'prune-first';
  orderReason: string;
  /** Tasks that did nothing here, and why. */
  notes: string[];
  /** Snapshots whose names look like the schedule's but that the ledger does not prove Reflex made: kept. */
  unproven: string[];
}

/** What the planner knows about an instance. */
export interface InstanceFacts {
  instance: Instance;
  project: string;
  snapshots: SnapshotInfo[];
  /** The instance's storage pool and its free fraction, when it could be read. */
  pool?: { name: string; freeRatio: number };
  /** What the ledger proves (schedules/snapshot-ledger.ts). Absent: nothing is proven, so retention deletes nothing. */
  ownership?: Ownership;
}

/** What the snapshot ledger says about an instance, after settling. */
export interface Ownership {
  /** Snapshots this schedule proved it made. */
  mine: Set<string>;
  /** Snapshots any schedule proved Reflex made (what a retention `owned` pattern narrows). */
  reflex: Set<string>;
  /** Names the ledger holds: never given to a new snapshot. */
  reserved: Set<string>;
  /** This tick (its due time) already claimed its snapshot: it is not taken twice. */
  tickClaimed: boolean;
  /** Entries this schedule holds for the instance (proven or still being made). */
  recorded: number;
}

const noOwnership: Ownership = { mine: new Set(), reflex: new Set(), reserved: new Set(), tickClaimed: false, recorded: 0 };

/** When the planner runs: `now` is the wall clock, `tickAt` the scheduled time that names snapshots. */
export interface PlanContext {
  now: number;
  tickAt: number;
  /** Time zone of snapshot names and GFS periods. */
  tz: string;
}

/** Epoch ms of an API timestamp; undefined for absent or the zero time (`0001-01-01T00:00:00Z`). */
export function apiTime(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || ms <= 0) return undefined;
  return ms;
}

/** Snapshot objects from the API as the planner sees them. */
export function snapshotInfos(snapshots: Snapshot[]): SnapshotInfo[] {
  return snapshots.map((s) => ({ name: s.name, createdAt: apiTime(s.created_at) ?? 0, expiresAt: apiTime(s.expires_at) }));
}

/** Whether a snapshot task takes snapshots of this instance (its filter matches; running, or includeStopped). */
export function snapshotApplies(task: Task & { task: 'snapshot' }, instance: Instance): boolean {
  if (task.filter && !evaluateFilter(task.filter, instance)) return false;
  return task.includeStopped || instance.status_code === StatusCode.Running || instance.status_code === StatusCode.Ready;
}

/** When the instance last ran (`last_used_at`), else when it was created; undefined if neither is known. */
export function lastActiveAt(instance: Instance): number | undefined {
  const rec = instance as Record<string, unknown>;
  return apiTime(rec.last_used_at as string | undefined) ?? apiTime(rec.created_at as string | undefined);
}

/** The storage pool of the instance's root disk (expanded devices), if it says. */
export function rootPool(instance: Instance): string | undefined {
  const devices = ((instance as Record<string, unknown>).expanded_devices ?? instance.devices) as Record<string, Record<string, string>> | undefined;
  for (const d of Object.values(devices ?? {})) if (d.type === 'disk' && d.path === '/' && d.pool) return d.pool;
  return undefined;
}

/**
 * Plans one tick on one instance. Pure: the same facts, tasks and times give the same plan.
 *
 * - delete-stopped wins: an instance it deletes gets no other step (its snapshots go with it).
 * - snapshot: skipped on an instance that is not running unless `includeStopped`, and when the
 *   ledger shows this tick already claimed its snapshot. A name already used (by any snapshot, or
 *   reserved in the ledger) gets a suffix: `-2`, `-3`…
 * - retention deletes only snapshots the ledger proves the schedule made (see `ownedBy`).
 * - retention plans over the existing snapshots plus the new one, so after the tick exactly the
 *   kept set remains; prune-expired adds expired snapshots it is allowed to touch.
 * - Deletions run first when the pool's free fraction is below the retention task's
 *   `pruneFirstBelow`, otherwise after the new snapshot exists.
 */
export function planInstance(facts: InstanceFacts, tasks: Task[], ctx: PlanContext): InstancePlan {
  const { instance } = facts;
  const plan: InstancePlan = {
    instance: instance.name,
    project: facts.project,
    steps: [],
    keep: [],
    order: 'create-first',
    orderReason: 'no retention task',
    notes: [],
    unproven: [],
  };
  const own = facts.ownership ?? noOwnership;
  const applicable: Task[] = [];
  for (const t of tasks) {
    if (t.filter && !evaluateFilter(t.filter, instance)) plan.notes.push(`${t.task}: instance not matched by the task's filter`);
    else applicable.push(t);
  }

  const deleter = applicable.find((t) => t.task === 'delete-stopped');
  if (deleter) {
    const last = lastActiveAt(instance);
    if (instance.status_code !== StatusCode.Stopped) plan.notes.push(`delete-stopped: instance is ${instance.status}, not Stopped`);
    else if (last === undefined) plan.notes.push('delete-stopped: the instance has no last-used or creation time; age unknown');
    else if (ctx.now - last < deleter.olderThanMs)
      plan.notes.push(`delete-stopped: idle ${duration(Math.max(0, ctx.now - last))}, not older than ${duration(deleter.olderThanMs)}`);
    else {
      plan.steps.push({
        kind: 'delete-instance',
        task: 'delete-stopped',
        reason: `stopped, last active ${new Date(last).toISOString()} (more than ${duration(deleter.olderThanMs)} ago)`,
        dryRun: deleter.dryRun,
      });
      plan.orderReason = 'instance deleted';
      return plan;
    }
  }

  const existing = new Set(facts.snapshots.map((s) => s.name));
  let created: SnapshotInfo | undefined;
  const creates: PlanStep[] = [];
  const snap = applicable.find((t) => t.task === 'snapshot');
  if (snap) {
    const base = formatSnapshotName(snap.namePattern, ctx.tickAt, ctx.tz);
    const name = uniqueSnapshotName(base, (n) => existing.has(n) || own.reserved.has(n));
    const running = instance.status_code === StatusCode.Running || instance.status_code === StatusCode.Ready;
    if (!running && !snap.includeStopped) plan.notes.push(`snapshot: instance is ${instance.status} (includeStopped is false)`);
    else if (own.tickClaimed) plan.notes.push(`snapshot: this tick's snapshot is already taken (the tick ran before)`);
    else {
      if (name !== base)
        plan.notes.push(`snapshot: ${base} is taken (by a snapshot Reflex did not make, or in an hour the clock repeats); taking ${name}`);
      const expiresAt = snap.expiryMs === undefined ? undefined : ctx.now + snap.expiryMs;
      created = { name, createdAt: ctx.now, expiresAt, planned: true };
      creates.push({
        kind: 'create-snapshot',
        task: 'snapshot',
        name,
        ...(expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt).toISOString() }),
        dryRun: snap.dryRun,
      });
    }
  }

  const deletes = new Map<string, PlanStep & { kind: 'delete-snapshot' }>();
  const retention = applicable.find((t) => t.task === 'retention');
  if (retention) {
    const isOwned = ownedBy(retention.owned, own, created?.name);
    const verdict = planRetention(
      created ? [...facts.snapshots, created] : facts.snapshots,
      { keepLast: retention.keepLast, keepWithinMs: retention.keepWithinMs, gfs: retention.gfs, tz: ctx.tz },
      isOwned,
      ctx.now,
    );
    plan.keep = verdict.keep;
    for (const d of verdict.delete)
      deletes.set(d.name, { kind: 'delete-snapshot', task: 'retention', name: d.name, reason: d.reason, dryRun: retention.dryRun });
    if (created && facts.pool && facts.pool.freeRatio < retention.pruneFirstBelow) {
      plan.order = 'prune-first';
      plan.orderReason = `pool ${facts.pool.name} has ${pct(facts.pool.freeRatio)} free (below ${pct(retention.pruneFirstBelow)})`;
    } else {
      plan.orderReason = facts.pool ? `pool ${facts.pool.name} has ${pct(facts.pool.freeRatio)} free` : 'pool free space unknown';
    }
  }

  const pruner = applicable.find((t) => t.task === 'prune-expired');
  if (pruner) {
    const isOwned = pruner.owned === undefined ? () => true : snapshotNameMatcher(pruner.owned);
    for (const s of facts.snapshots) {
      if (s.expiresAt === undefined || s.expiresAt > ctx.now || !isOwned(s.name) || deletes.has(s.name)) continue;
      deletes.set(s.name, {
        kind: 'delete-snapshot',
        task: 'prune-expired',
        name: s.name,
        reason: `expired at ${new Date(s.expiresAt).toISOString()}`,
        dryRun: pruner.dryRun,
      });
    }
  }

  if (snap) {
    const looksLike = snapshotNameMatcher(snap.namePattern);
    plan.unproven = facts.snapshots.filter((s) => looksLike(s.name) && !own.reflex.has(s.name) && !own.mine.has(s.name)).map((s) => s.name);
    if (plan.unproven.length)
      plan.notes.push(
        `ownership: ${plan.unproven.length} snapshot(s) look like this schedule's but the ledger does not prove Reflex made them; kept: ${plan.unproven.join(', ')}`,
      );
  }

  const deleteSteps = [...deletes.values()];
  plan.steps = plan.order === 'prune-first' ? [...deleteSteps, ...creates] : [...creates, ...deleteSteps];
  return plan;
}

/**
 * Which snapshots retention may delete: by default those this schedule proved it made; a pattern
 * narrows what any schedule proved Reflex made; `'any'` is every snapshot (manual ones included,
 * the author's explicit choice). The snapshot this tick is about to take is the schedule's.
 */
function ownedBy(owned: string | undefined, own: Ownership, planned: string | undefined): (name: string) => boolean {
  if (owned === 'any') return () => true;
  if (owned === undefined) return (n) => n === planned || own.mine.has(n);
  const matches = snapshotNameMatcher(owned);
  return (n) => n === planned || (own.reflex.has(n) && matches(n));
}

function pct(ratio: number): string {
  return `${Math.round(ratio * 1000) / 10}%`;
}
