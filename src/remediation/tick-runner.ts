import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { HousekeepingParams } from '../actions/housekeeping-action.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { InstanceClient } from '../client/client.js';
import type { InstancePlan, PlanStep } from '../housekeeping/instance-plan.js';
import { describeStep, formatPlan, planSummary } from '../housekeeping/plan-format.js';
import type { Schedule } from '../schedules/schedule.js';
import { instancesInScope, planFor } from '../schedules/schedule-plan.js';
import { actionJobOptions, type ActionJobInput } from './action-job.js';

/** What a tick needs. */
export interface TickDeps {
  client: InstanceClient;
  audit: AuditLog;
  logger: Logger;
  /** The target as configured (audit records, job payloads). */
  target: string;
  /** The actions queue: each instance's steps run there, through the executor, side by side. */
  actions: Queue;
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
}

/**
 * Runs one tick: lists the instances in scope, plans each (see planInstance), audits each plan, and
 * queues one `housekeeping` job per instance with changes to make. The jobs run through the action
 * executor like every remediation (instance lock, re-check, self-marking, retries, dead-letter
 * queue), side by side: an instance whose operation hangs delays no other. Job ids come from the
 * schedule, the due time and the instance, so a tick taken over from a replica that died midway
 * queues nothing twice. Throws only when the scope cannot be listed.
 */
export async function runTick(schedule: Schedule, deps: TickDeps, opts: TickOptions): Promise<TickReport> {
  const now = opts.now ?? Date.now;
  const instances = await instancesInScope(schedule, deps.client);
  const report: TickReport = { plans: [], queued: 0, failed: 0 };
  const pools = new Map<string, Promise<number | undefined>>();
  const jobs: { name: string; data: ActionJobInput; opts: ReturnType<typeof actionJobOptions> }[] = [];
  await Promise.all(
    instances.map(async (inst) => {
      const rec = { correlationId: opts.correlationId, target: deps.target, instance: inst.name, project: inst.project, rule: schedule.name, schedule: schedule.name };
      let plan: InstancePlan;
      try {
        plan = await planFor(schedule, deps.client, inst, pools, opts.tickAt, now);
      } catch (err) {
        report.failed++;
        deps.logger.warn({ schedule: schedule.name, instance: inst.name, err }, 'schedule tick could not plan an instance');
        await deps.audit.append({ ...rec, type: 'outcome', summary: `${schedule.name}: failed before any change: ${(err as Error).message}`, result: 'failed' }, { once: `plan-failed:${opts.correlationId}:${deps.target}:${inst.project}/${inst.name}` });
        return;
      }
      report.plans.push(plan);
      if (plan.steps.length === 0) {
        deps.logger.debug({ schedule: schedule.name, instance: inst.name, notes: plan.notes }, 'nothing to do');
        return;
      }
      const summary = planSummary(plan);
      const allDry = plan.steps.every((s) => s.dryRun);
      deps.logger.info({ schedule: schedule.name, instance: inst.name, dryRun: allDry }, `${allDry ? 'dry-run plan' : 'plan'}:\n${formatPlan(plan)}`);
      await deps.audit.append({ ...rec, type: 'decision', summary: `${schedule.name}: ${allDry ? 'dry-run ' : ''}plan: ${summary.steps.join('; ')}`, plan: summary, notes: plan.notes, dryRun: allDry }, { once: `plan:${opts.correlationId}:${deps.target}:${inst.project}/${inst.name}` });
      const params: HousekeepingParams = { schedule: schedule.name, steps: plan.steps.map(stepParams), plan: summary };
      // BullMQ allows no ':' in custom ids beyond its own form; the target (a URL) goes in as a digest.
      const jobId = `hk|${schedule.name}|${opts.tickAt}|${createHash('sha1').update(deps.target).digest('hex').slice(0, 10)}|${inst.project}/${inst.name}`;
      jobs.push({
        name: 'housekeeping',
        data: { rule: schedule.name, action: 'housekeeping', params, target: deps.target, project: inst.project, instance: inst.name, correlationId: opts.correlationId, incidentAt: opts.tickAt, origin: 'schedule', dryRun: false, location: inst.location ?? 'none' },
        opts: actionJobOptions({ jobId }),
      });
    }),
  );
  if (jobs.length) await deps.actions.addBulk(jobs);
  report.queued = jobs.length;
  return report;
}

function stepParams(step: PlanStep): HousekeepingParams['steps'][number] {
  const describe = describeStep(step);
  switch (step.kind) {
    case 'create-snapshot':
      return { kind: step.kind, name: step.name, ...(step.expiresAt ? { expiresAt: step.expiresAt } : {}), dryRun: step.dryRun, describe };
    case 'delete-snapshot':
      return { kind: step.kind, name: step.name, dryRun: step.dryRun, describe };
    case 'delete-instance':
      return { kind: step.kind, dryRun: step.dryRun, describe };
  }
}
