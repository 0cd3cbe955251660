import { DelayedError, UnrecoverableError, type Job, type Queue } from 'bullmq';
import type { RedisConnection } from '../redis/connect.js';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { AuditLog } from '../audit/audit-log.js';
import { DeliveryError } from './delivery-error.js';
import { notificationSchema, type Notification } from './notification.js';
import type { RateLimiter } from './rate-limiter.js';
import type { Receiver } from './receiver.js';

/**
 * Job on the delivery queue: one message for one receiver. The job id is the notification id
 * (with `-fallback` for the fallback's copy, `-missed` for resolved alerts whose firing message
 * only the fallback got), so a message is queued once however many replicas try.
 */
export const deliveryJobSchema = z.object({
  notification: notificationSchema,
  receiver: z.string(),
  /** Set on the fallback's copy: the receiver that gave up (or never got the alerts' firing message). */
  fallbackOf: z.string().optional(),
  /** Why the fallback got it: the receiver failed for good, or it had missed these alerts' firing message. */
  fallbackReason: z.enum(['failed', 'missed-firing']).optional(),
});
export type DeliveryJob = z.infer<typeof deliveryJobSchema>;

/** Backoff cap, so a long outage retries at least this often. */
const maxBackoffMs = 5 * 60_000;

/** How long a receiver's missed firing messages are remembered: as long as the alerts themselves. */
const missedFiringTtlMs = 30 * 86_400_000;

function jobId(job: DeliveryJob): string {
  if (!job.fallbackOf) return job.notification.id;
  return `${job.notification.id}-${job.fallbackReason === 'missed-firing' ? 'missed' : 'fallback'}`;
}

/** Queues a message for a receiver with that receiver's retry settings. */
export async function enqueueDelivery(queue: Queue, receiver: Receiver, job: DeliveryJob): Promise<void> {
  await queue.add('deliver', job, {
    jobId: jobId(job),
    attempts: receiver.config.maxAttempts,
    backoff: { type: 'notify' },
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

/** The same message with only `alerts`; its status follows them. */
function withAlerts(n: Notification, alerts: Notification['alerts']): Notification {
  return { ...n, alerts, status: alerts.some((a) => a.status === 'firing') ? 'firing' : 'resolved' };
}

/**
 * Sends delivery jobs: applies the receiver's rate limit (an over-limit message waits for the
 * next window without using an attempt), sends, audits every outcome, and when the receiver has
 * failed for good hands the message to its fallback receiver. A receiver never gets an alert's
 * resolved message without its firing one: when the firing one failed for good, the resolved one
 * goes to the fallback (which got the firing one) instead.
 */
export class DeliveryProcessor {
  constructor(
    private readonly deps: {
      receivers: ReadonlyMap<string, Receiver>;
      queue: Queue;
      rateLimiter: RateLimiter;
      audit: AuditLog;
      redis: RedisConnection;
      /** Redis set of the fingerprints whose firing message a receiver never got. */
      missedFiringKey: (receiver: string) => string;
      logger?: Logger;
    },
  ) {}

  async process(job: Job, token?: string): Promise<number | undefined> {
    const data = deliveryJobSchema.parse(job.data);
    const receiver = this.deps.receivers.get(data.receiver);
    if (!receiver) {
      const n = data.notification;
      await this.audit(n, 'failed', `notification ${n.id}: no receiver named "${data.receiver}" in this replica's configuration`, {
        receiver: data.receiver,
      });
      throw new UnrecoverableError(`unknown receiver ${data.receiver}`);
    }
    const n = data.fallbackOf ? data.notification : await this.withoutMissedFiring(data.notification, receiver);
    if (!n) return undefined;
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
    const firing = n.alerts.filter((a) => a.status === 'firing').map((a) => a.fingerprint);
    try {
      // job.timestamp is when the message was queued: the same on every attempt.
      const status = await receiver.send(n, new Date(job.timestamp));
      if (firing.length && !data.fallbackOf) await this.deps.redis.srem(this.deps.missedFiringKey(receiver.name), ...firing);
      const as = data.fallbackOf
        ? ` as fallback of ${data.fallbackOf}${data.fallbackReason === 'missed-firing' ? ' (which never got the firing message)' : ''}`
        : '';
      await this.audit(n, 'sent', `${n.status} notification sent to ${label}${as}: ${n.alerts.length} alert(s)`, {
        receiver: receiver.name,
        httpStatus: status,
        attempt,
      });
      this.deps.logger?.info({ receiver: receiver.name, notification: n.id, status: n.status }, 'notification sent');
      return status;
    } catch (err) {
      const e = err instanceof DeliveryError ? err : new DeliveryError('NETWORK', receiver.scrub(String((err as Error).message)));
      const final = !e.retryable || attempt >= max;
      const fallback = final && !data.fallbackOf ? receiver.config.fallback : undefined;
      const then = !final
        ? `retrying (attempt ${attempt} of ${max})`
        : fallback
          ? `giving up after ${attempt} attempt(s); sending to fallback ${fallback}`
          : `giving up after ${attempt} attempt(s)`;
      await this.audit(n, final ? 'failed' : 'retrying', `notification to ${label} failed (${e.code}): ${e.message}; ${then}`, {
        receiver: receiver.name,
        code: e.code,
        httpStatus: e.status,
        attempt,
      });
      this.deps.logger?.warn({ receiver: receiver.name, notification: n.id, code: e.code, attempt }, 'notification delivery failed');
      if (!final) throw e;
      if (firing.length && !data.fallbackOf) {
        const key = this.deps.missedFiringKey(receiver.name);
        await this.deps.redis
          .multi()
          .sadd(key, ...firing)
          .pexpire(key, missedFiringTtlMs)
          .exec();
      }
      if (fallback) await this.toFallback(n, receiver.name, fallback, 'failed');
      throw new UnrecoverableError(`${e.code}: ${e.message}`);
    }
  }

  /**
   * The message without the resolved alerts whose firing message this receiver never got: those
   * go to its fallback, which did get it (or nowhere, audited, without a fallback). Undefined when
   * nothing is left to send here.
   */
  private async withoutMissedFiring(n: Notification, receiver: Receiver): Promise<Notification | undefined> {
    const resolved = n.alerts.filter((a) => a.status === 'resolved');
    if (!resolved.length) return n;
    const key = this.deps.missedFiringKey(receiver.name);
    const flags = await this.deps.redis.smismember(key, ...resolved.map((a) => a.fingerprint));
    const missed = resolved.filter((_, i) => flags[i] === 1);
    if (!missed.length) return n;
    await this.deps.redis.srem(key, ...missed.map((a) => a.fingerprint));
    const fallback = receiver.config.fallback;
    const missedMsg = withAlerts(n, missed);
    if (fallback) await this.toFallback(missedMsg, receiver.name, fallback, 'missed-firing');
    else
      await this.audit(
        missedMsg,
        'skipped',
        `resolved notification not sent to ${receiver.name} (${receiver.kind}): it never got the firing message, and it has no fallback`,
        { receiver: receiver.name },
      );
    const rest = n.alerts.filter((a) => !missed.includes(a));
    return rest.length ? withAlerts(n, rest) : undefined;
  }

  private async toFallback(n: Notification, from: string, name: string, reason: 'failed' | 'missed-firing'): Promise<void> {
    const fallback = this.deps.receivers.get(name);
    if (!fallback) {
      await this.audit(n, 'failed', `fallback receiver "${name}" of ${from} is not configured`, { receiver: name });
      return;
    }
    // The hand-over is recorded before the job is queued: the fallback's worker may send it and
    // record `sent` at once, and the trail must show the cause before its effect.
    const why = reason === 'failed' ? `after ${from} failed` : `since ${from} never got the firing message`;
    await this.audit(n, 'fallback', `notification handed to fallback ${name} ${why}`, { receiver: name, fallbackOf: from });
    await enqueueDelivery(this.deps.queue, fallback, {
      notification: { ...n, receiver: name },
      receiver: name,
      fallbackOf: from,
      fallbackReason: reason,
    });
  }

  /** One record per incident in the message, so each incident's trail shows its notifications. */
  private async audit(n: Notification, result: string, summary: string, extra: Record<string, unknown>): Promise<void> {
    const seen = new Set<string>();
    for (const a of n.alerts) {
      if (seen.has(a.correlationId)) continue;
      seen.add(a.correlationId);
      await this.deps.audit.append({
        type: 'notification',
        correlationId: a.correlationId,
        target: a.target,
        instance: a.instance,
        summary,
        result,
        notificationId: n.id,
        alertStatus: n.status,
        ...extra,
      });
    }
  }
}
