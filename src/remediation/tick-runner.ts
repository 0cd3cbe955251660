import type { Logger } from 'pino';
import type { HeldLock, InstanceLock } from '../redis/token-lock.js';
import type { SelfActions } from '../events/self-marks.js';
import type { AuditLog } from '../audit/audit-log.js';
import { isApiStatus } from '../client/api-error.js';
import type { InstanceClient } from '../client/client.js';
import type { Instance } from '../client/instance.js';
import type { Operation } from '../client/operation.js';
import { evaluateFilter } from '../filter/evaluator.js';
import { planInstance, rootPool, snapshotInfos, type InstancePlan, type PlanStep } from '../housekeeping/instance-plan.js';
import { describeStep, formatPlan, planSummary } from '../housekeeping/plan-format.js';
import { poolFreeRatio } from '../housekeeping/pool-space.js';
import type { KeySpace } from '../redis/key-space.js';
import type { Schedule } from '../schedules/schedule.js';

/** What a tick needs. `lock` and `selfActions` are optional so a plan can be made without Redis. */
export interface TickDeps {
  client: InstanceClient;
  audit?: AuditLog;
  logger: Logger;
  /** The target as configured (audit records, lock and self-action keys). */
  target: string;
  /** Serialises a tick's changes to an instance with the action executor's (same lock keys). */
  lock?: { instanceLock: InstanceLock; keys: KeySpace };
  /** Marks instances being snapshotted, so the freeze/thaw events a snapshot causes are typed as Reflex's own. */
  selfActions?: SelfActions;
}

/** Options of one tick. */
export interface TickOptions {
  /** The time the tick was due (names snapshots). */
  tickAt: number;
  /** Shared by every audit record of the tick. */
  correlationId: string;
  /** Wall clock; injectable for tests. Default Date.now. */
  now?: () => number;
  /** Instances handled at once. Default 4. */
  concurrency?: number;
  /** How long to wait for an instance held by an action before skipping it this tick. Default 10 000 ms. */
  lockWaitMs?: number;
}

/** What a tick did. */
export interface TickReport {
  plans: InstancePlan[];
  /** Steps sent and finished. */
  done: number;
  /** Steps that failed, or were skipped because an earlier step failed. */
  failed: number;
  /** Steps only planned (dry-run). */
  planned: number;
  /** Instances skipped because another action held them for too long. */
  busy: string[];
}

/** The instances in the schedule's scope, each with its project. */
export async function instancesInScope(schedule: Schedule, client: InstanceClient): Promise<(Instance & { project: string })[]> {
  const lists = schedule.projects
    ? await Promise.all(schedule.projects.map(async (p) => (await client.withProject(p).listInstances({ recursion: 1 })).map((i) => ({ ...i, project: i.project ?? p }))))
    : [(await client.listInstances({ allProjects: true, recursion: 1 })).map((i) => ({ ...i, project: i.project ?? 'default' }))];
  const all = lists.flat();
  return schedule.scopeFilter ? all.filter((i) => evaluateFilter(schedule.scopeFilter!, i)) : all;
}

/** Plans a tick on every instance in scope, changing nothing and auditing nothing. */
export async function planTick(schedule: Schedule, client: InstanceClient, opts: { tickAt: number; now?: () => number }): Promise<InstancePlan[]> {
  const instances = await instancesInScope(schedule, client);
  const pools = new Map<string, Promise<number | undefined>>();
  return Promise.all(instances.map((i) => planFor(schedule, client, i, pools, opts.tickAt, opts.now ?? Date.now)));
}

async function planFor(schedule: Schedule, client: InstanceClient, inst: Instance & { project: string }, pools: Map<string, Promise<number | undefined>>, tickAt: number, now: () => number): Promise<InstancePlan> {
  const scoped = client.withProject(inst.project);
  const touchesSnapshots = schedule.tasks.some((t) => t.task !== 'delete-stopped');
  const snapshots = touchesSnapshots ? snapshotInfos(await scoped.listSnapshots(inst.name)) : [];
  let pool: { name: string; freeRatio: number } | undefined;
  const poolName = rootPool(inst);
  if (poolName && schedule.tasks.some((t) => t.task === 'retention') && schedule.tasks.some((t) => t.task === 'snapshot')) {
    if (!pools.has(poolName)) pools.set(poolName, poolFreeRatio(client, poolName));
    const free = await pools.get(poolName)!;
    if (free !== undefined) pool = { name: poolName, freeRatio: free };
  }
  return planInstance({ instance: inst, project: inst.project, snapshots, pool }, schedule.tasks, { now: now(), tickAt, tz: schedule.tz });
}

/**
 * Runs one tick: lists the instances in scope, plans each (see planInstance), audits the plan,
 * then makes its changes in order, each one audited with the plan that led to it. A failure on
 * one instance does not stop the others; a snapshot that could not be taken stops that
 * instance's remaining steps (retention counted on it). Throws only when the scope cannot be listed.
 */
export async function runTick(schedule: Schedule, deps: TickDeps, opts: TickOptions): Promise<TickReport> {
  const now = opts.now ?? Date.now;
  const instances = await instancesInScope(schedule, deps.client);
  const report: TickReport = { plans: [], done: 0, failed: 0, planned: 0, busy: [] };
  const pools = new Map<string, Promise<number | undefined>>();
  const queue = [...instances];
  const workers = Array.from({ length: Math.min(opts.concurrency ?? 4, queue.length) }, async () => {
    for (let inst = queue.shift(); inst; inst = queue.shift()) {
      const current = inst;
      try {
        await runOnInstance(schedule, deps, opts, current, () => planFor(schedule, deps.client, current, pools, opts.tickAt, now), report);
      } catch (err) {
        report.failed++;
        deps.logger.warn({ schedule: schedule.name, instance: current.name, err: (err as Error).message }, 'schedule tick failed on an instance');
        await deps.audit?.append({ ...base(schedule, deps, opts, current), type: 'outcome', summary: `${schedule.name}: failed before any change: ${(err as Error).message}`, result: 'failed' });
      }
    }
  });
  await Promise.all(workers);
  return report;
}

function base(schedule: Schedule, deps: TickDeps, opts: TickOptions, inst: { name: string; project: string }) {
  return { correlationId: opts.correlationId, target: deps.target, instance: inst.name, project: inst.project, rule: schedule.name, schedule: schedule.name };
}

async function runOnInstance(schedule: Schedule, deps: TickDeps, opts: TickOptions, inst: Instance & { project: string }, makePlan: () => Promise<InstancePlan>, report: TickReport): Promise<void> {
  const { audit, logger } = deps;
  const held = await acquire(deps, inst, opts.lockWaitMs ?? 10_000);
  if (held === 'busy') {
    report.busy.push(`${inst.project}/${inst.name}`);
    await audit?.append({ ...base(schedule, deps, opts, inst), type: 'outcome', summary: `${schedule.name}: skipped this tick: another action held the instance`, result: 'skipped' });
    return;
  }
  try {
    // Planned under the lock, so the snapshots it counts are the ones it acts on.
    const plan = await makePlan();
    report.plans.push(plan);
    const rec = base(schedule, deps, opts, inst);
    if (plan.steps.length === 0) {
      logger.debug({ schedule: schedule.name, instance: inst.name, notes: plan.notes }, 'nothing to do');
      return;
    }
    const summary = planSummary(plan);
    const allDry = plan.steps.every((s) => s.dryRun);
    logger.info({ schedule: schedule.name, instance: inst.name, dryRun: allDry }, `${allDry ? 'dry-run plan' : 'plan'}:\n${formatPlan(plan)}`);
    await audit?.append({ ...rec, type: 'decision', summary: `${schedule.name}: ${allDry ? 'dry-run ' : ''}plan: ${summary.steps.join('; ')}`, plan: summary, notes: plan.notes, dryRun: allDry });
    let done = 0;
    let failed = 0;
    let dry = 0;
    for (let i = 0; i < plan.steps.length; i++) {
      const step = plan.steps[i]!;
      if (step.dryRun) {
        const d = callOf(step, inst.name);
        await audit?.append({ ...rec, type: 'call', summary: `dry-run: would ${d.method} ${d.path} (${describeStep(step)})`, method: d.method, path: d.path, step: describeStep(step), plan: summary, dryRun: true });
        dry++;
        continue;
      }
      const ok = await execute(schedule, deps, rec, inst, step, summary);
      if (ok) {
        done++;
        continue;
      }
      failed++;
      if (step.kind === 'create-snapshot') {
        const rest = plan.steps.slice(i + 1).filter((s) => !s.dryRun);
        failed += rest.length;
        if (rest.length) await audit?.append({ ...rec, type: 'outcome', summary: `${schedule.name}: ${rest.length} remaining step(s) not run: the snapshot retention counted on was not taken`, result: 'skipped', skipped: rest.map(describeStep) });
        break;
      }
    }
    report.done += done;
    report.failed += failed;
    report.planned += dry;
    const result = failed ? 'failed' : done ? 'done' : 'dry-run';
    await audit?.append({ ...rec, type: 'outcome', summary: `${schedule.name}: ${done} change(s) made${failed ? `, ${failed} failed` : ''}${dry ? `, ${dry} dry-run` : ''}`, result });
  } finally {
    if (held) await held.release();
  }
}

async function acquire(deps: TickDeps, inst: { name: string; project: string }, waitMs: number): Promise<HeldLock | undefined | 'busy'> {
  if (!deps.lock) return undefined;
  const key = deps.lock.keys.instanceLock(deps.target, inst.project, inst.name);
  const end = Date.now() + waitMs;
  for (;;) {
    const held = await deps.lock.instanceLock.tryAcquire(key);
    if (held) return held;
    if (Date.now() >= end) return 'busy';
    await new Promise((r) => setTimeout(r, 200));
  }
}

function callOf(step: PlanStep, instance: string): { method: string; path: string; action: string } {
  const i = encodeURIComponent(instance);
  switch (step.kind) {
    case 'create-snapshot':
      return { method: 'POST', path: `/1.0/instances/${i}/snapshots`, action: 'snapshot' };
    case 'delete-snapshot':
      return { method: 'DELETE', path: `/1.0/instances/${i}/snapshots/${encodeURIComponent(step.name)}`, action: 'snapshot-delete' };
    case 'delete-instance':
      return { method: 'DELETE', path: `/1.0/instances/${i}`, action: 'delete' };
  }
}

/** Sends one step and waits for its operation; true when the intended state holds afterwards. */
async function execute(schedule: Schedule, deps: TickDeps, rec: Record<string, string>, inst: { name: string; project: string }, step: PlanStep, plan: ReturnType<typeof planSummary>): Promise<boolean> {
  const { audit, selfActions, target } = deps;
  const client = deps.client.withProject(inst.project);
  const d = callOf(step, inst.name);
  const what = describeStep(step);
  const send = (): Promise<Operation> => {
    switch (step.kind) {
      case 'create-snapshot':
        return client.createSnapshot(inst.name, { name: step.name, expiresAt: step.expiresAt });
      case 'delete-snapshot':
        return client.deleteSnapshot(inst.name, step.name);
      case 'delete-instance':
        return client.deleteInstance(inst.name);
    }
  };
  await selfActions?.mark(target, inst.name, { action: d.action, state: 'in-flight', at: Date.now() });
  let op: Operation | undefined;
  try {
    op = await send();
    await audit?.append({ ...rec, type: 'call', summary: `${d.method} ${d.path} (${what}) → operation ${op.id}`, method: d.method, path: d.path, operationId: op.id, step: what, plan });
    await op.wait({ timeoutMs: 120_000 });
    await selfActions?.mark(target, inst.name, { action: d.action, state: 'done', at: Date.now(), operationId: op.id });
    return true;
  } catch (err) {
    await selfActions?.mark(target, inst.name, { action: d.action, state: 'failed', at: Date.now() });
    // Someone (the daemon's own expiry pruning, another tool) deleted it first: the goal holds.
    if (step.kind !== 'create-snapshot' && isApiStatus(err, 404)) {
      await audit?.append({ ...rec, type: 'call', summary: `${d.method} ${d.path} (${what}): already gone`, method: d.method, path: d.path, status: 404, step: what, plan });
      return true;
    }
    const code = (err as { code?: string }).code ?? 'UNKNOWN';
    await audit?.append({ ...rec, type: 'call', summary: `${d.method} ${d.path} (${what}) failed (${code}): ${(err as Error).message}`, method: d.method, path: d.path, operationId: op?.id, status: (err as { status?: number }).status, code, step: what, plan });
    deps.logger.warn({ schedule: schedule.name, instance: inst.name, step: what, err: (err as Error).message }, 'housekeeping step failed');
    return false;
  }
}
