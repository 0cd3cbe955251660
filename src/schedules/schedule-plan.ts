import type { InstanceClient } from '../client/client.js';
import type { Instance } from '../client/instance.js';
import { evaluateFilter } from '../filter/evaluator.js';
import { planInstance, rootPool, snapshotInfos, type InstancePlan, type Ownership } from './housekeeping/instance-plan.js';
import { poolFreeRatio } from './pool-space.js';
import type { SnapshotInfo } from './housekeeping/retention-plan.js';
import { eachBounded } from './each-bounded.js';
import { provenNames, settleLedger, type JobReport, type LedgerEntry, type Settlement, type SnapshotLedger } from './snapshot-ledger.js';
import type { InstanceRef } from '../redis/key-space.js';
import type { Schedule } from './schedule.js';
import type { AuditLog } from '../audit/audit-log.js';

/** The instances in the schedule's scope, each with its project. */
export async function instancesInScope(schedule: Schedule, client: InstanceClient): Promise<(Instance & { project: string })[]> {
  const lists = schedule.projects
    ? await Promise.all(
        schedule.projects.map(async (p) =>
          (await client.withProject(p).listInstances({ recursion: 1 })).map((i) => ({ ...i, project: i.project ?? p })),
        ),
      )
    : [(await client.listInstances({ allProjects: true, recursion: 1 })).map((i) => ({ ...i, project: i.project ?? 'default' }))];
  const all = lists.flat();
  return schedule.scopeFilter ? all.filter((i) => evaluateFilter(schedule.scopeFilter!, i)) : all;
}

/** Instances planned at once, by a tick and by `reflex housekeeping plan` (each reads its snapshots and its ledger entries). */
export const planConcurrency = 16;

/** Where ownership is read from: the ledger, and how the jobs that made or deleted snapshots ended. */
export interface LedgerSource {
  ledger: SnapshotLedger;
  /** The target as configured (the ledger's instance key). */
  target: string;
  jobState(jobId: string): Promise<JobReport>;
  /**
   * The names a job that ran late recorded, before it sent its snapshot, that it would take it
   * under (the `claim` it was queued for, of the tick due `tickAt`). None: only the job's outcome
   * names a late snapshot.
   */
  lateNames?(ref: InstanceRef, schedule: string, claim: string, entry: LedgerEntry): Promise<string[]>;
}

/** One instance's plan, with what it was made from. */
export interface PlannedInstance {
  plan: InstancePlan;
  ref: InstanceRef;
  /** The instance's snapshots as listed. */
  snapshots: SnapshotInfo[];
  /** The ledger settled against the listing (the tick writes it; a read-only plan does not). Absent without a ledger. */
  settlement?: Settlement;
}

/**
 * Plans one instance: reads its snapshots (and its pool's free space when retention may prune
 * first), settles the schedule's ledger entries against them, and plans. Reads only: the tick and
 * `reflex housekeeping plan` share it, so the plan printed is the plan the tick makes.
 */
export async function planFor(
  schedule: Schedule,
  client: InstanceClient,
  inst: Instance & { project: string },
  pools: Map<string, Promise<number | undefined>>,
  tickAt: number,
  now: () => number,
  source?: LedgerSource,
): Promise<PlannedInstance> {
  const scoped = client.withProject(inst.project);
  const ref: InstanceRef = { target: source?.target ?? '', project: inst.project, instance: inst.name };
  const touchesSnapshots = schedule.tasks.some((t) => t.task !== 'delete-stopped');
  // The jobs' states are read before the snapshots are listed: a job read as done made (or
  // deleted) its snapshot before the listing, so the listing shows it. Listed first, a snapshot
  // whose job finished in between was missing from the listing while its job read done, and the
  // settlement forgot Reflex's claim on it: it was never pruned (CI on a loaded Incus, 2 s rounds).
  const ledger = source && touchesSnapshots ? await readLedger(source, ref, schedule.name) : undefined;
  const snapshots = touchesSnapshots ? snapshotInfos(await scoped.listSnapshots(inst.name)) : [];
  let pool: { name: string; freeRatio: number } | undefined;
  const poolName = rootPool(inst);
  if (poolName && schedule.tasks.some((t) => t.task === 'retention') && schedule.tasks.some((t) => t.task === 'snapshot')) {
    if (!pools.has(poolName)) pools.set(poolName, poolFreeRatio(client, poolName));
    const free = await pools.get(poolName)!;
    if (free !== undefined) pool = { name: poolName, freeRatio: free };
  }
  let settlement: Settlement | undefined;
  let ownership: Ownership | undefined;
  if (ledger) {
    const { entries, states } = ledger;
    settlement = settleLedger(schedule.name, entries, snapshots, (id) => states.get(id) ?? { state: 'unknown' });
    const reflex = provenNames(entries, snapshots);
    for (const n of settlement.owned.keys()) reflex.add(n);
    ownership = {
      mine: new Set(settlement.owned.keys()),
      reflex,
      reserved: settlement.reserved,
      tickClaimed: settlement.claimedTicks.has(tickAt),
      recorded: settlement.owned.size + settlement.pending.length,
    };
  }
  const plan = planInstance({ instance: inst, project: inst.project, snapshots, pool, ownership }, schedule.tasks, {
    now: now(),
    tickAt,
    tz: schedule.tz,
  });
  return { plan, ref, snapshots, settlement };
}

/** The ledger's entries of an instance, and the state of each job the schedule's entries wait on. */
async function readLedger(
  source: LedgerSource,
  ref: InstanceRef,
  schedule: string,
): Promise<{ entries: Map<string, LedgerEntry>; states: Map<string, JobReport> }> {
  const entries = await source.ledger.read(ref);
  const ids = new Set<string>();
  for (const e of entries.values()) {
    if (e.schedule !== schedule) continue;
    if (e.createdAt === undefined) ids.add(e.jobId);
    if (e.deleting) ids.add(e.deleting.jobId);
  }
  const states = new Map(await Promise.all([...ids].map(async (id) => [id, await source.jobState(id)] as const)));
  if (source.lateNames)
    await Promise.all(
      [...entries].map(async ([name, e]) => {
        const report = states.get(e.jobId);
        if (e.schedule !== schedule || e.createdAt !== undefined || !report?.ranLate || report.state === 'pending') return;
        const named = await source.lateNames!(ref, schedule, name, e);
        if (named.length) states.set(e.jobId, { ...report, named: [...(report.named ?? []), ...named] });
      }),
    );
  return { entries, states };
}

/**
 * What the tick due at `tickAt` would do on each instance in scope (or the one named), without
 * changing anything: the ledger is settled in memory only. `reflex housekeeping plan` prints it.
 */
export async function planTick(
  schedule: Schedule,
  client: InstanceClient,
  tickAt: number,
  source: LedgerSource,
  opts: { instance?: string; now?: () => number } = {},
): Promise<InstancePlan[]> {
  const instances = (await instancesInScope(schedule, client)).filter((i) => opts.instance === undefined || i.name === opts.instance);
  const pools = new Map<string, Promise<number | undefined>>();
  const plans = await eachBounded(
    instances,
    planConcurrency,
    async (i) => (await planFor(schedule, client, i, pools, tickAt, opts.now ?? Date.now, source)).plan,
  );
  return plans.sort((a, b) => (a.project === b.project ? a.instance.localeCompare(b.instance) : a.project.localeCompare(b.project)));
}

/**
 * The names a late job recorded it would take its snapshot under, from the audit trail: each
 * attempt's record (`… so it is named by the time it is taken: NAME`) is written before its call.
 */
export function lateNamesOf(audit: AuditLog): NonNullable<LedgerSource['lateNames']> {
  return async (ref, schedule, claim, entry) => {
    const correlationId = `schedule:${schedule}:${entry.tickAt}`;
    // Redis's clock stamps the trail; a minute of slack against Reflex's, which stamped the claim.
    const records = await audit.read({ instance: ref.instance, rule: schedule, type: 'call', since: new Date(entry.claimedAt - 60_000) });
    const names = records
      .filter((r) => r.correlationId === correlationId && r.plannedName === claim && (r.project === undefined || r.project === ref.project))
      .map((r) => r.snapshot)
      .filter((n): n is string => typeof n === 'string');
    return [...new Set(names)];
  };
}

/** The BullMQ job id of an instance's housekeeping job for one tick ('|' separated: BullMQ allows no ':' in custom ids). */
export function housekeepingJobId(schedule: string, tickAt: number, targetDigest: string, ref: Pick<InstanceRef, 'project' | 'instance'>): string {
  return `hk|${schedule}|${tickAt}|${targetDigest}|${ref.project}/${ref.instance}`;
}
