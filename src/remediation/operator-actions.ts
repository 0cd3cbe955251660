import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import { crashLoopKind, type Alerts } from '../alerts/alerts.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { InstanceRef, KeySpace } from '../redis/key-space.js';
import type { RedisConnection } from '../redis/connect.js';
import { actionJobOptions, type ActionJobInput } from '../actions/action-job.js';
import { CrashLoopBudget } from './crash-loop-budget.js';
import type { InstanceIdentity } from './instance-identity.js';

/**
 * Who asked for an operator's action: `origin` is the surface (`cli`, `console`), `actor` the person
 * as the request names them (free text: the surface's own authentication is the write token).
 */
export interface OperatorOrigin {
  origin: string;
  actor: string;
}

/**
 * Queues an operator's heal of an instance (the `start` `reflex heal` queues): audited as a decision
 * of rule `heal`, then run by the executor like every action (instance lock, fresh read, audit of
 * the call and its outcome). As an operator's decision no rule, silence or quarantine holds it back.
 * `identity` is the instance as read when the operator asked: the re-check skips the start when the
 * name means another instance by then. Answers the job id and the correlation id of the trail.
 */
export async function queueHeal(
  deps: { queue: Queue; audit: AuditLog },
  ref: InstanceRef,
  by: OperatorOrigin,
  identity?: InstanceIdentity,
): Promise<{ jobId: string; correlationId: string }> {
  const correlationId = `heal:${randomUUID()}`;
  const through = by.origin === 'cli' ? 'reflex heal' : `the ${by.origin}`;
  await deps.audit.append({
    type: 'decision',
    correlationId,
    target: ref.target,
    instance: ref.instance,
    rule: 'heal',
    summary: `operator ${by.actor} asked Reflex to start ${ref.project}/${ref.instance} (${through})`,
    matched: true,
    origin: by.origin,
    actor: by.actor,
    ...(identity?.uuid ? { uuid: identity.uuid } : {}),
  });
  const data: ActionJobInput = {
    rule: 'heal',
    action: 'start',
    params: {},
    target: ref.target,
    project: ref.project,
    instance: ref.instance,
    correlationId,
    incidentAt: Date.now(),
    origin: 'operator',
    dryRun: false,
    ...(identity?.uuid || identity?.createdAt ? { identity } : {}),
  };
  const jobId = correlationId.replace(':', '-');
  await deps.queue.add('start', data, actionJobOptions({ jobId }));
  return { jobId, correlationId };
}

/**
 * Lifts an instance's quarantine and forgets its restart history (what `reflex quarantine release`
 * does), and audits it with who asked. With `alerts`, the instance's firing `crash-loop` alert
 * resolves (the operator ended the episode: rules act on it again, and a new loop raises a new
 * alert). Answers whether it was quarantined.
 */
export async function releaseQuarantine(
  deps: { redis: RedisConnection; keys: KeySpace; audit: AuditLog; alerts?: Pick<Alerts, 'resolveFiring'> },
  ref: InstanceRef,
  by: OperatorOrigin,
): Promise<boolean> {
  const released = await new CrashLoopBudget(deps.redis).release({ restarts: deps.keys.restarts(ref), quarantine: deps.keys.quarantine(ref) });
  if (released)
    await deps.audit.append({
      type: 'decision',
      correlationId: `release:${randomUUID()}`,
      target: ref.target,
      instance: ref.instance,
      rule: 'quarantine-release',
      summary: `operator ${by.actor} released ${ref.project}/${ref.instance} from quarantine (from the ${by.origin}); its restart history is forgotten`,
      matched: true,
      origin: by.origin,
      actor: by.actor,
    });
  if (released)
    await deps.alerts?.resolveFiring(crashLoopKind, ref, {
      summary: `operator ${by.actor} released ${ref.project}/${ref.instance} from quarantine (from the ${by.origin})`,
      outcome: 'released',
    });
  return released;
}

/**
 * Runs a dead-letter job (a failed action job) again, as `reflex dlq retry ID` does, and audits it.
 * Answers false when there is no such failed job.
 */
export async function retryDeadLetter(deps: { queue: Queue; audit: AuditLog }, jobId: string, by: OperatorOrigin): Promise<boolean> {
  const job = await deps.queue.getJob(jobId);
  if (!job || (await job.getState()) !== 'failed') return false;
  await job.retry('failed');
  const d = job.data as Partial<ActionJobInput>;
  await deps.audit.append({
    type: 'action',
    correlationId: d.correlationId ?? `dlq:${jobId}`,
    target: d.target,
    instance: d.instance,
    rule: d.rule,
    summary: `operator ${by.actor} retried dead-letter job ${jobId} (${d.action ?? job.name}) from the ${by.origin}`,
    jobId,
    origin: by.origin,
    actor: by.actor,
  });
  return true;
}
