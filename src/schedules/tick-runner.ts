import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { RedisConnection } from '../redis/connect.js';
import type { Logger } from 'pino';
import type { HousekeepingParams } from './housekeeping/housekeeping-steps.js';
import type { AlertInput } from '../alerts/alert.js';
import { Alerts } from '../alerts/alerts.js';
import type { AlertKind } from '../alerts/catalogue.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { InstanceClient } from '../client/client.js';
import type { Instance } from '../client/instance.js';
import { formatDuration } from './housekeeping/duration-text.js';
import { snapshotApplies, type InstancePlan, type PlanStep } from './housekeeping/instance-plan.js';
import { describeStep, formatPlan, planSummary } from './housekeeping/plan-format.js';
import { SnapshotLedger, type LedgerEntry } from './snapshot-ledger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { KeySpace } from '../redis/key-space.js';
import type { Schedule } from './schedule.js';
import { housekeepingJobId, instancesInScope, lateNamesOf, planConcurrency, planFor, type PlannedInstance } from './schedule-plan.js';
import { eachBounded } from './each-bounded.js';
import { jobStateOf } from './job-state.js';
import { actionJobOptions, type ActionJobInput } from '../actions/action-job.js';

const snapshotStaleKind = 'snapshot.stale' satisfies AlertKind;
const snapshotOwnershipKind = 'snapshot.ownership-unknown' satisfies AlertKind;

/** What a tick needs. */
export interface TickDeps {
  client: InstanceClient;
  audit: AuditLog;
  logger: Logger;
  /** The target as configured (audit records, job payloads, ledger keys). */
  target: string;
  /** The actions queue: each instance's steps run there, through the executor, side by side. */
  actions: Queue;
  /** The snapshot ledger lives here (keys.schedules). */
  redis: RedisConnection;
  keys: KeySpace;
  /** Snapshots made / pruned / failed and the age of each instance's newest snapshot; none: not counted. */
  metrics?: Metrics;
  /** Raises and resolves the tick's alerts (a stale snapshot, lost ownership records). Default: audited only. */
  alerts?: Pick<Alerts, 'raise' | 'resolve'>;
}

/** Options of one tick. */
export interface TickOptions {
  /** The time the tick was due (names snapshots). */
  tickAt: number;
  /** Shared by every audit record of the tick. */
  correlationId: string;
  /** Wall clock; injectable for tests. Default Date.now. */
  now?: () => number;
}

/** What a tick decided. */
export interface TickReport {
  plans: InstancePlan[];
  /** Instances whose steps were queued. */
  queued: number;
  /** Instances that could not be planned (their snapshots could not be read). */
  failed: number;
  /** Instances whose earlier tick's job had not run yet: this tick was recorded missed there, nothing queued. */
  missed: number;
}

/**
 * Runs one tick: lists the instances in scope, settles the snapshot ledger and plans each (see
 * planInstance), audits each plan, claims in the ledger the snapshot each job will make, and
 * queues one `housekeeping` job per instance with changes to make. The jobs run through the
 * action executor like every remediation (instance lock, re-check, self-marking, retries,
 * dead-letter queue and its alert), side by side: an instance whose operation hangs delays no
 * other. Job ids come from the schedule, the due time and the instance, so a tick taken over from
 * a replica that died midway queues nothing twice. Throws only when the scope cannot be listed.
 */
export async function runTick(schedule: Schedule, deps: TickDeps, opts: TickOptions): Promise<TickReport> {
  const now = opts.now ?? Date.now;
  const instances = await instancesInScope(schedule, deps.client);
  const report: TickReport = { plans: [], queued: 0, failed: 0, missed: 0 };
  const pools = new Map<string, Promise<number | undefined>>();
  const ledger = new SnapshotLedger(deps.redis, deps.keys.schedules);
  const source = { ledger, target: deps.target, jobState: jobStateOf(deps.actions), lateNames: lateNamesOf(deps.audit) };
  const targetDigest = createHash('sha1').update(deps.target).digest('hex').slice(0, 10);
  const jobs: { name: string; data: ActionJobInput; opts: ReturnType<typeof actionJobOptions> }[] = [];
  // Bounded as the plan is: a tick over 10 000 instances must not open 10 000 connections at once.
  await eachBounded(instances, planConcurrency, async (inst) => {
    const rec = {
      correlationId: opts.correlationId,
      target: deps.target,
      instance: inst.name,
      project: inst.project,
      rule: schedule.name,
      schedule: schedule.name,
    };
    let planned: PlannedInstance;
    try {
      planned = await planFor(schedule, deps.client, inst, pools, opts.tickAt, now, source);
    } catch (err) {
      report.failed++;
      deps.logger.warn({ schedule: schedule.name, instance: inst.name, err }, 'schedule tick could not plan an instance');
      await deps.audit.append(
        { ...rec, type: 'outcome', summary: `${schedule.name}: failed before any change: ${(err as Error).message}`, result: 'failed' },
        { once: `plan-failed:${opts.correlationId}:${deps.target}:${inst.project}/${inst.name}` },
      );
      return;
    }
    const { plan, ref } = planned;
    report.plans.push(plan);
    const jobId = housekeepingJobId(schedule.name, opts.tickAt, targetDigest, ref);
    const held = planned.settlement?.waiting.find((w) => w.tickAt < opts.tickAt && plan.steps.length > 0);
    if (held) {
      // Coalesced as sanoid does: the earlier job's one snapshot, named when it is taken, stands for this tick.
      await settle(schedule, deps, ledger, { ...planned, plan: { ...plan, steps: [] } }, jobId, opts.tickAt, now());
      await watch(schedule, deps, planned, inst, opts.correlationId, now());
      await missed(schedule, deps, rec, held, opts.tickAt);
      report.missed++;
      return;
    }
    await settle(schedule, deps, ledger, planned, jobId, opts.tickAt, now());
    await watch(schedule, deps, planned, inst, opts.correlationId, now());
    if (plan.steps.length === 0) {
      deps.logger.debug({ schedule: schedule.name, instance: inst.name, notes: plan.notes }, 'nothing to do');
      return;
    }
    const summary = planSummary(plan);
    const allDry = plan.steps.every((s) => s.dryRun);
    deps.logger.info({ schedule: schedule.name, instance: inst.name, dryRun: allDry }, `${allDry ? 'dry-run plan' : 'plan'}:\n${formatPlan(plan)}`);
    await deps.audit.append(
      {
        ...rec,
        type: 'decision',
        summary: `${schedule.name}: ${allDry ? 'dry-run ' : ''}plan: ${summary.steps.join('; ')}`,
        plan: summary,
        notes: plan.notes,
        dryRun: allDry,
      },
      { once: `plan:${opts.correlationId}:${deps.target}:${inst.project}/${inst.name}` },
    );
    const params: HousekeepingParams = {
      schedule: schedule.name,
      steps: plan.steps.map((s) => stepParams(s, schedule)),
      plan: summary,
      ...(schedule.events ? { events: schedule.events } : {}),
    };
    jobs.push({
      name: 'housekeeping',
      data: {
        rule: schedule.name,
        action: 'housekeeping',
        params,
        target: deps.target,
        project: inst.project,
        instance: inst.name,
        correlationId: opts.correlationId,
        incidentAt: opts.tickAt,
        origin: 'schedule',
        dryRun: false,
        location: inst.location ?? 'none',
      },
      opts: actionJobOptions({ jobId, attempts: schedule.attempts }),
    });
  });
  if (jobs.length) await deps.actions.addBulk(jobs);
  report.queued = jobs.length;
  return report;
}

/**
 * Writes what the ledger settled, counts it, and records this tick's intent before its job is
 * queued: the snapshot it claims (a name no snapshot had when listed) and the snapshots it deletes.
 * Written first so that the job's work is always on record; a claim whose job never ran is
 * forgotten by the next tick.
 */
async function settle(
  schedule: Schedule,
  deps: TickDeps,
  ledger: SnapshotLedger,
  planned: PlannedInstance,
  jobId: string,
  tickAt: number,
  at: number,
): Promise<void> {
  const s = planned.settlement;
  if (!s) return;
  const write = new Map(s.write);
  for (const step of planned.plan.steps) {
    if (step.dryRun) continue;
    if (step.kind === 'create-snapshot') write.set(step.name, { schedule: schedule.name, tickAt, claimedAt: at, jobId });
    if (step.kind === 'delete-snapshot') {
      const entry: LedgerEntry | undefined = write.get(step.name) ?? s.owned.get(step.name);
      if (entry) write.set(step.name, { ...entry, deleting: { tickAt, jobId } });
    }
  }
  await ledger.apply(planned.ref, write, s.forget);
  const m = deps.metrics?.housekeepingSnapshots;
  if (m) {
    if (s.made.length) m.inc({ schedule: schedule.name, result: 'made' }, s.made.length);
    if (s.pruned.length) m.inc({ schedule: schedule.name, result: 'pruned' }, s.pruned.length);
    if (s.failed.length) m.inc({ schedule: schedule.name, result: 'failed' }, s.failed.length);
  }
  if (s.failed.length)
    deps.logger.warn({ schedule: schedule.name, instance: planned.ref.instance, failed: s.failed }, 'housekeeping steps of an earlier tick failed');
  // A snapshot still listed that the schedule no longer takes for its own is never pruned by it: on the record, with why.
  for (const { name, why } of s.disowned) {
    const summary = `${schedule.name}: snapshot ${name} of ${planned.ref.project}/${planned.ref.instance} is no longer taken for the schedule's (retention keeps it): ${why}`;
    deps.logger.warn({ schedule: schedule.name, instance: planned.ref.instance, snapshot: name }, summary);
    await deps.audit.append({
      type: 'decision',
      correlationId: `schedule:${schedule.name}:${tickAt}`,
      target: deps.target,
      project: planned.ref.project,
      instance: planned.ref.instance,
      rule: schedule.name,
      schedule: schedule.name,
      snapshot: name,
      summary,
    });
  }
}

/**
 * Freshness and ownership checks: the age of the instance's newest snapshot from this schedule
 * (a gauge, and one `snapshot-stale` alert past `staleAfter`, resolved once a new one is made),
 * and one `snapshot-ownership-unknown` alert when snapshots look like the schedule's while the
 * ledger holds nothing for the instance (its records were lost, e.g. Redis was flushed): those
 * are kept, never deleted on a guess.
 */
async function watch(schedule: Schedule, deps: TickDeps, planned: PlannedInstance, inst: Instance, correlationId: string, at: number): Promise<void> {
  const task = schedule.tasks.find((t) => t.task === 'snapshot');
  const s = planned.settlement;
  if (!task || task.dryRun || !s) return;
  const { ref } = planned;
  const labels = { schedule: schedule.name, project: ref.project, instance: ref.instance };
  const base = { target: deps.target, project: ref.project, instance: ref.instance, correlationId };
  const keys = deps.keys.schedules;
  const ownershipKey = keys.alerted('ownership', schedule.name, ref);
  if (planned.plan.unproven.length && s.owned.size === 0 && s.pending.length === 0) {
    const summary = `${schedule.name}: ${planned.plan.unproven.length} snapshot(s) of ${ref.project}/${ref.instance} look like the schedule's, but no record proves Reflex made them (records lost, e.g. Redis flushed, or made by hand); retention keeps them: ${planned.plan.unproven.join(', ')}`;
    await raiseOnce(deps, ownershipKey, { ...base, kind: snapshotOwnershipKind, severity: 'warning', summary }, schedule);
  } else if (!planned.plan.unproven.length || s.owned.size > 0) {
    const why = planned.plan.unproven.length
      ? `the ledger proves ${s.owned.size + s.pending.length} snapshot(s) of it are the schedule's again`
      : 'no snapshot of unknown ownership is left';
    await resolveOnce(
      deps,
      ownershipKey,
      { ...base, kind: snapshotOwnershipKind, severity: 'warning', summary: `${ref.project}/${ref.instance}: ${why} (${schedule.name})` },
      schedule,
    );
  }
  if (!snapshotApplies(task, inst)) return;
  const newest = Math.max(0, ...[...s.owned.values()].map((e) => e.createdAt ?? 0));
  let since = newest;
  if (newest === 0) {
    await deps.redis.set(keys.firstSeen(schedule.name, ref), String(at), 'NX');
    since = Number(await deps.redis.get(keys.firstSeen(schedule.name, ref))) || at;
  }
  if (newest > 0) deps.metrics?.housekeepingNewestAge.set(labels, Math.max(0, (at - newest) / 1000));
  const staleKey = keys.alerted('stale', schedule.name, ref);
  if (at - since > schedule.staleAfterMs) {
    const what =
      newest > 0
        ? `its newest snapshot from ${schedule.name} was made ${new Date(newest).toISOString()}`
        : `${schedule.name} has made no snapshot of it since ${new Date(since).toISOString()}`;
    await raiseOnce(
      deps,
      staleKey,
      {
        ...base,
        kind: snapshotStaleKind,
        severity: 'critical',
        summary: `${ref.project}/${ref.instance}: ${what}, more than ${formatDuration(schedule.staleAfterMs)} ago (staleAfter)`,
      },
      schedule,
    );
  } else {
    const summary = `${ref.project}/${ref.instance}: snapshots from ${schedule.name} are fresh again (newest ${new Date(newest).toISOString()})`;
    await resolveOnce(deps, staleKey, { ...base, kind: snapshotStaleKind, severity: 'critical', summary }, schedule);
  }
}

/** Resolves the alert raised by {@link raiseOnce} under `key`, if it was raised. */
async function resolveOnce(deps: TickDeps, key: string, alert: AlertInput, schedule: Schedule): Promise<void> {
  if (!(await deps.redis.del(key))) return;
  await alertsOf(deps).resolve(alert, { record: { rule: schedule.name } });
}

/** Raises an alert once while `key` is set (across ticks and replicas). */
async function raiseOnce(deps: TickDeps, key: string, alert: AlertInput, schedule: Schedule): Promise<void> {
  if ((await deps.redis.set(key, String(Date.now()), 'NX')) !== 'OK') return;
  deps.logger.warn({ schedule: schedule.name, instance: alert.instance, kind: alert.kind }, alert.summary);
  await alertsOf(deps).raise(alert, { record: { rule: schedule.name } });
}

function alertsOf(deps: TickDeps): Pick<Alerts, 'raise' | 'resolve'> {
  return deps.alerts ?? new Alerts({ audit: deps.audit });
}

/**
 * Records a tick missed on an instance: the job of an earlier tick of the schedule has not ended
 * (held behind a hung operation, say), so this tick queues nothing there. When that job runs, it
 * takes one snapshot, named by the time it is taken; the ticks missed meanwhile take none, rather
 * than a burst of snapshots named after their due times once the instance frees.
 */
async function missed(
  schedule: Schedule,
  deps: TickDeps,
  rec: Record<string, string>,
  held: { jobId: string; tickAt: number },
  tickAt: number,
): Promise<void> {
  const summary = `${schedule.name}: tick due ${new Date(tickAt).toISOString()} missed on ${rec.project}/${rec.instance}: the job of the tick due ${new Date(held.tickAt).toISOString()} has not run yet (the instance is busy); it takes one snapshot, named when it is taken, for both`;
  deps.logger.info({ schedule: schedule.name, instance: rec.instance, heldBy: held.jobId }, "tick missed: an earlier tick's job has not run yet");
  await deps.audit.append(
    { ...rec, type: 'decision', summary, result: 'missed', heldBy: held.jobId, heldTickAt: new Date(held.tickAt).toISOString() },
    { once: `missed:${rec.correlationId}:${deps.target}:${rec.project}/${rec.instance}` },
  );
  deps.metrics?.housekeepingSnapshots.inc({ schedule: schedule.name, result: 'missed' });
}

function stepParams(step: PlanStep, schedule: Schedule): HousekeepingParams['steps'][number] {
  const describe = describeStep(step);
  switch (step.kind) {
    case 'create-snapshot': {
      const task = schedule.tasks.find((t) => t.task === 'snapshot');
      // The wall clock, as the job's check is: a tick's injectable clock does not reach the job.
      const late = task ? { late: { pattern: task.namePattern, tz: schedule.tz, queuedAt: Date.now(), afterMs: schedule.catchUpGraceMs } } : {};
      return { kind: step.kind, name: step.name, ...(step.expiresAt ? { expiresAt: step.expiresAt } : {}), dryRun: step.dryRun, describe, ...late };
    }
    case 'delete-snapshot':
      return { kind: step.kind, name: step.name, dryRun: step.dryRun, describe };
    case 'delete-instance':
      return { kind: step.kind, dryRun: step.dryRun, describe };
  }
}
