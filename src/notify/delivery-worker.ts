import { DelayedError, UnrecoverableError, type Job, type Queue } from 'bullmq';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { AuditLog } from '../audit/audit-log.js';
import { DeliveryError } from './delivery-error.js';
import { postMessage } from './http-delivery.js';
import { notificationSchema, type Notification } from './notification.js';
import type { RateLimiter } from './rate-limiter.js';
import type { Receiver } from './receiver.js';

/**
 * Job on the delivery queue: one message for one receiver. The job id is the notification id
 * (with `-fallback` for the fallback's copy), so a message is queued once however many replicas try.
 */
export const deliveryJobSchema = z.object({
  notification: notificationSchema,
  receiver: z.string(),
  /** Set on the fallback's copy: the receiver that gave up. */
  fallbackOf: z.string().optional(),
});
export type DeliveryJob = z.infer<typeof deliveryJobSchema>;

/** Backoff cap, so a long outage retries at least this often. */
const maxBackoffMs = 5 * 60_000;

/** Queues a message for a receiver with that receiver's retry settings. */
export async function enqueueDelivery(queue: Queue, receiver: Receiver, job: DeliveryJob): Promise<void> {
  await queue.add('deliver', job, {
    jobId: job.fallbackOf ? `${job.notification.id}-fallback` : job.notification.id,
    attempts: receiver.config.maxAttempts,
    backoff: { type: 'notify' },
    removeOnComplete: { age: 86_400 },
    removeOnFail: { age: 7 * 86_400 },
  });
}

/**
 * Delay before retry `attemptsMade + 1`: the receiver's Retry-After when it sent one, else
 * `backoffMs · 2^(attemptsMade-1)` with ±25 % jitter (so replicas do not retry in step), capped at 5 min.
 */
export function deliveryBackoff(receivers: ReadonlyMap<string, Receiver>) {
  return (attemptsMade: number, _type?: string, err?: Error, job?: { data: unknown }): number => {
    if (err instanceof DeliveryError && err.retryAfterMs !== undefined) return err.retryAfterMs;
    const name = (job?.data as { receiver?: string } | undefined)?.receiver;
    const base = (name && receivers.get(name)?.config.backoffMs) || 1000;
    const exp = Math.min(maxBackoffMs, base * 2 ** Math.max(0, attemptsMade - 1));
    return Math.round(exp * (0.75 + Math.random() * 0.5));
  };
}

/**
 * Sends delivery jobs: applies the receiver's rate limit (an over-limit message waits for the
 * next window without using an attempt), posts, audits every outcome, and when the receiver has
 * failed for good hands the message to its fallback receiver.
 */
export class DeliveryProcessor {
  constructor(
    private readonly deps: {
      receivers: ReadonlyMap<string, Receiver>;
      queue: Queue;
      rateLimiter: RateLimiter;
      audit: AuditLog;
      logger?: Logger;
    },
  ) {}

  async process(job: Job, token?: string): Promise<number> {
    const data = deliveryJobSchema.parse(job.data);
    const n = data.notification;
    const receiver = this.deps.receivers.get(data.receiver);
    if (!receiver) {
      await this.audit(n, 'failed', `notification ${n.id}: no receiver named "${data.receiver}" in this replica's configuration`, { receiver: data.receiver });
      throw new UnrecoverableError(`unknown receiver ${data.receiver}`);
    }
    const limit = receiver.config.rateLimit;
    if (limit) {
      const admitted = await this.deps.rateLimiter.take(receiver.name, limit);
      if (!admitted.ok) {
        await job.moveToDelayed(admitted.retryAt, token);
        throw new DelayedError();
      }
    }
    const attempt = job.attemptsMade + 1;
    const max = receiver.config.maxAttempts;
    const label = `${receiver.name} (${receiver.kind})`;
    try {
      const status = await postMessage(receiver, receiver.render(n));
      await this.audit(n, 'sent', `${n.status} notification sent to ${label}${data.fallbackOf ? ` as fallback of ${data.fallbackOf}` : ''}: ${n.alerts.length} alert(s)`, { receiver: receiver.name, httpStatus: status, attempt });
      this.deps.logger?.info({ receiver: receiver.name, notification: n.id, status: n.status }, 'notification sent');
      return status;
    } catch (err) {
      const e = err instanceof DeliveryError ? err : new DeliveryError('NETWORK', receiver.scrub(String((err as Error).message)));
      const final = !e.retryable || attempt >= max;
      const fallback = final && !data.fallbackOf ? receiver.config.fallback : undefined;
      const then = !final ? `retrying (attempt ${attempt} of ${max})` : fallback ? `giving up after ${attempt} attempt(s); sending to fallback ${fallback}` : `giving up after ${attempt} attempt(s)`;
      await this.audit(n, final ? 'failed' : 'retrying', `notification to ${label} failed (${e.code}): ${e.message}; ${then}`, { receiver: receiver.name, code: e.code, httpStatus: e.status, attempt });
      this.deps.logger?.warn({ receiver: receiver.name, notification: n.id, code: e.code, attempt }, 'notification delivery failed');
      if (!final) throw e;
      if (fallback) await this.toFallback(n, receiver.name, fallback);
      throw new UnrecoverableError(`${e.code}: ${e.message}`);
    }
  }

  private async toFallback(n: Notification, from: string, name: string): Promise<void> {
    const fallback = this.deps.receivers.get(name);
    if (!fallback) {
      await this.audit(n, 'failed', `fallback receiver "${name}" of ${from} is not configured`, { receiver: name });
      return;
    }
    await enqueueDelivery(this.deps.queue, fallback, { notification: { ...n, receiver: name }, receiver: name, fallbackOf: from });
    await this.audit(n, 'fallback', `notification handed to fallback ${name} after ${from} failed`, { receiver: name, fallbackOf: from });
  }

  /** One record per incident in the message, so each incident's trail shows its notifications. */
  private async audit(n: Notification, result: string, summary: string, extra: Record<string, unknown>): Promise<void> {
    const seen = new Set<string>();
    for (const a of n.alerts) {
      if (seen.has(a.correlationId)) continue;
      seen.add(a.correlationId);
      await this.deps.audit.append({ type: 'notification', correlationId: a.correlationId, target: a.target, instance: a.instance, summary, result, notificationId: n.id, alertStatus: n.status, ...extra });
    }
  }
}
