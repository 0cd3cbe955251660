import type { Queue } from 'bullmq';
import type { ActionContext } from '../../actions/action.js';
import type { ActionJob } from '../../actions/action-job.js';
import type { AlertNotifier } from '../../alerts/alerts.js';
import type { AuditType } from '../../audit/audit-record.js';
import type { EventJob } from '../../events/event-job.js';
import type { Trail } from '../trail.js';
import type { Acting } from './acting-client.js';

/** What an action's context is made of besides its job. */
export interface ContextParts {
  acting: Acting;
  trail: Trail;
  /** The instance as the re-check read it, when nothing touched it since. */
  observed?: ActionContext['observed'];
  /** Where `emit` publishes; none: no `publish`. */
  events?: Queue;
  notifier?: AlertNotifier;
}

/** What an action of `job` sees: the acting client and nothing else to act with, its params, its job, its trail. */
export function actionContext(job: ActionJob, parts: ContextParts): ActionContext<unknown> {
  const { acting, trail, observed, events, notifier } = parts;
  return {
    client: acting.client,
    clientNoting: acting.noting,
    instance: job.instance,
    params: job.params,
    dryRun: job.dryRun,
    ...(observed ? { observed } : {}),
    audit: async (record) => {
      const { type, summary, ...fields } = record as { type: AuditType; summary: string };
      await trail.write(type, summary, fields);
    },
    job: {
      rule: job.rule,
      correlationId: job.correlationId,
      target: job.target,
      project: job.project,
      location: job.location ?? 'none',
      chain: job.chain ?? [],
      ...(job.event ? { event: job.event } : {}),
    },
    ...(events
      ? {
          publish: async (event, jobId) => {
            const data: EventJob = { kind: 'synthetic', target: event.target, event, receivedAt: Date.now() };
            await events.add(event.kind, data, { jobId });
          },
        }
      : {}),
    ...(notifier ? { notifier } : {}),
  };
}
