import type { JobsOptions } from 'bullmq';
import { Queue } from '../redis/commonjs-packages.js';
import { z } from 'zod';
import type { QueueHistory } from '../config/queue-history.js';
import { canonicalEventSchema } from '../events/canonical-event.js';
import { retryPolicy } from '../errors/retry-policy.js';
import type { RedisConnection } from '../redis/connect.js';
import type { KeySpace } from '../redis/key-space.js';

/**
 * Job on the actions queue: one action a rule (or a schedule) decided on for one incident. The job
 * id is `rule:incident:action-index`, so a duplicate event or a redelivered job never acts twice.
 * Before its call the executor re-checks everything that could have changed since it was queued.
 */
export const actionJobSchema = z.object({
  rule: z.string(),
  action: z.string(),
  params: z.record(z.string(), z.unknown()).default({}),
  target: z.string(),
  project: z.string(),
  instance: z.string(),
  /** The incident: id of the event that triggered the rule; also the audit correlation id. */
  correlationId: z.string(),
  /**
   * When the incident happened, daemon time (ms). A transition an operator requested after it
   * supersedes the job. Absent in jobs queued before this field existed: nothing supersedes them
   * but the other checks.
   */
  incidentAt: z.number().optional(),
  /**
   * The instance that had the incident, as read when the job was queued (`volatile.uuid`, and
   * `created_at` where a daemon gives no uuid). The re-check skips the job as superseded when the
   * instance of that name is another one by then (deleted and re-created, or renamed and a new one
   * made under the name). Absent in older jobs and operators' jobs: they act on whatever is there.
   */
  identity: z.object({ uuid: z.string().optional(), createdAt: z.string().optional() }).optional(),
  /** The event that triggered the rule: the re-check runs the rule's `when` on it again, with the instance read at that moment. */
  event: canonicalEventSchema.optional(),
  /** Who decided it: a rule (default), a schedule's tick, or an operator (`reflex heal`). */
  origin: z.enum(['rule', 'schedule', 'operator']).default('rule'),
  dryRun: z.boolean().default(false),
  /** Cluster member of the triggering event ("none" standalone); none given: "none". */
  location: z.string().optional(),
  /**
   * When the triggering event was a follow-up event (`rule.event`): the rules that emitted along
   * its chain, so `emit` can cut loops. Absent for events from the daemon.
   */
  chain: z.array(z.string()).optional(),
  /**
   * The rule's `onFailure` branch of this action: queued, as jobs of the same incident, when the
   * action fails for good, instead of a give-up (dead-letter entry and critical alert). Absent: the
   * action gives up. A branch's own jobs carry none (one level deep).
   */
  onFailure: z.array(z.object({ action: z.string(), params: z.record(z.string(), z.unknown()).default({}) })).optional(),
  /** For a job of an `onFailure` branch: the id of the job whose failure queued it. */
  branchOf: z.string().optional(),
});
export type ActionJob = z.infer<typeof actionJobSchema>;
export type ActionJobInput = z.input<typeof actionJobSchema>;

/** BullMQ options of an action job, from the one retry policy. */
export function actionJobOptions(o: { jobId: string; attempts?: number; delayMs?: number; priority?: number }): JobsOptions & { jobId: string } {
  return {
    jobId: o.jobId,
    attempts: o.attempts ?? retryPolicy.actionAttempts,
    backoff: retryPolicy.actionBackoff,
    ...(o.delayMs ? { delay: o.delayMs } : {}),
    ...(o.priority ? { priority: o.priority } : {}),
  };
}

/**
 * A handle on the actions queue of `keys`: what the processor, the scheduler and operators queue
 * and the executor's worker runs. Finished jobs are kept as configured (`history`: the dashboard
 * shows them, and a job added again under the same id is refused); the back-off is the one retry
 * policy's, as in {@link actionJobOptions}, which sets the attempts of each job.
 */
export function actionsQueueFor(o: { connection: RedisConnection; keys: KeySpace; history: QueueHistory }): Queue {
  return new Queue(o.keys.actionsQueue, {
    connection: o.connection,
    prefix: o.keys.bullPrefix,
    defaultJobOptions: { ...o.history, backoff: retryPolicy.actionBackoff },
  });
}
