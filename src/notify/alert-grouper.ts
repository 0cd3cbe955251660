import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { alertSchema, alertValue, type Alert } from './alert.js';
import type { Notification } from './notification.js';
import type { NotifyKeys } from '../redis/key-space.js';
import type { MatchedRoute } from './router.js';

/** Job on the flush queue: decide what to send for one group. */
export const flushJobSchema = z.object({
  groupKey: z.string(),
  groupLabels: z.record(z.string(), z.string()),
  route: z.object({ id: z.string(), receiver: z.string(), groupBy: z.array(z.string()), groupWaitMs: z.number(), groupIntervalMs: z.number(), repeatIntervalMs: z.number() }),
});
export type FlushJob = z.infer<typeof flushJobSchema>;

/** The group an alert falls in on a route: route, receiver and the values of its group_by keys. */
export function groupOf(alert: Alert, route: MatchedRoute): FlushJob {
  const groupLabels: Record<string, string> = {};
  for (const k of route.groupBy) groupLabels[k] = alertValue(alert, k) ?? '';
  const groupKey = createHash('sha256').update(JSON.stringify([route.id, route.receiver, groupLabels])).digest('hex').slice(0, 24);
  return { groupKey, groupLabels, route };
}

// Drops the resolved alerts that were handled, unless a replica changed them meanwhile; clears
// the scheduled marker when the group is empty so the next alert schedules a new first flush.
const settleScript = `
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then redis.call('HDEL', KEYS[1], ARGV[i]) end
end
local n = redis.call('HLEN', KEYS[1])
if n == 0 then redis.call('DEL', KEYS[2]) end
return n`;

/**
 * Alertmanager-style grouping with its state in Redis, so replicas agree: alerts of a group are
 * held for group_wait, then sent in one message; later changes (new or resolved alerts) are sent
 * at most every group_interval; an unchanged firing group is re-sent after repeat_interval. One
 * delayed flush job per group does the deciding, so exactly one replica decides each time.
 */
export class AlertGrouper {
  constructor(
    private readonly redis: Redis,
    private readonly keys: NotifyKeys,
    private readonly flushes: Queue,
    /** Enqueues a message for delivery (called at most once per notification id). */
    private readonly send: (n: Notification) => Promise<void>,
  ) {}

  /** Puts the alert in its group and schedules the group's first flush if none is scheduled. */
  async add(alert: Alert, group: FlushJob): Promise<void> {
    const { groupKey, route } = group;
    const key = this.keys.group(groupKey);
    const prev = await this.redis.hget(key, alert.fingerprint);
    const stored = prev ? alertSchema.safeParse(JSON.parse(prev)) : undefined;
    // A replica or a repeated event re-raising a firing alert must not move its start.
    const value = stored?.success && stored.data.status === 'firing' ? { ...alert, startsAt: stored.data.startsAt } : alert;
    await this.redis.hset(key, alert.fingerprint, JSON.stringify(value));
    const first = await this.redis.set(this.keys.scheduled(groupKey), '1', 'PX', markerTtl(route), 'NX');
    if (first) await this.schedule(group, route.groupWaitMs);
  }

  /** Runs one flush: sends what changed (or a due repeat), settles the group, schedules the next flush. */
  async flush(job: FlushJob, now = Date.now()): Promise<Notification | undefined> {
    const { groupKey, route } = job;
    const raw = await this.redis.hgetall(this.keys.group(groupKey));
    const notified = await this.redis.hgetall(this.keys.notified(groupKey));
    const alerts: { alert: Alert; raw: string }[] = [];
    for (const [fp, json] of Object.entries(raw)) {
      const parsed = alertSchema.safeParse(safeJson(json));
      if (parsed.success) alerts.push({ alert: parsed.data, raw: json });
      else await this.redis.hdel(this.keys.group(groupKey), fp);
    }
    const firing = alerts.filter((a) => a.alert.status === 'firing');
    const resolved = alerts.filter((a) => a.alert.status === 'resolved');
    // Resolved alerts whose firing message never went out are dropped silently.
    const toResolve = resolved.filter((a) => notified[a.alert.fingerprint]);
    const changed = firing.some((a) => !notified[a.alert.fingerprint]) || toResolve.length > 0;
    const lastSent = Number((await this.redis.get(this.keys.lastSent(groupKey))) ?? 0);
    const repeat = !changed && firing.length > 0 && now - lastSent >= route.repeatIntervalMs;

    let sent: Notification | undefined;
    if (changed || repeat) {
      const included = [...firing, ...toResolve].map((a) => a.alert);
      sent = {
        id: notificationId(groupKey, included, repeat ? String(now) : ''),
        receiver: route.receiver,
        groupKey,
        groupLabels: job.groupLabels,
        status: firing.length ? 'firing' : 'resolved',
        alerts: included,
        repeat,
      };
      const fresh = await this.redis.set(this.keys.sent(sent.id), '1', 'PX', 7 * 86_400_000, 'NX');
      if (fresh) await this.send(sent);
      const m = this.redis.multi();
      for (const a of firing) m.hset(this.keys.notified(groupKey), a.alert.fingerprint, 'firing');
      for (const a of toResolve) m.hdel(this.keys.notified(groupKey), a.alert.fingerprint);
      m.set(this.keys.lastSent(groupKey), String(now), 'PX', route.repeatIntervalMs + markerTtl(route));
      await m.exec();
    }
    const handled = resolved.flatMap((a) => [a.alert.fingerprint, a.raw]);
    const left = (await this.redis.eval(settleScript, 2, this.keys.group(groupKey), this.keys.scheduled(groupKey), ...handled)) as number;
    if (left > 0) {
      await this.redis.pexpire(this.keys.scheduled(groupKey), markerTtl(route));
      await this.schedule(job, route.groupIntervalMs);
    }
    return sent;
  }

  private async schedule(job: FlushJob, delayMs: number): Promise<void> {
    await this.flushes.add('flush', job, {
      delay: delayMs,
      jobId: `${job.groupKey}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`,
      removeOnComplete: true,
      removeOnFail: { count: 1000 },
      attempts: 5,
      backoff: { type: 'exponential', delay: 200 },
    });
  }
}

/** The scheduled marker outlives a lost flush job only briefly, so a group can never stay stuck. */
function markerTtl(route: MatchedRoute): number {
  return 2 * Math.max(route.groupWaitMs, route.groupIntervalMs) + 60_000;
}

/** Same group and same alert states give the same id on every replica. */
function notificationId(groupKey: string, alerts: Alert[], salt: string): string {
  const states = alerts.map((a) => `${a.fingerprint}:${a.status}:${a.startsAt}`).sort();
  return createHash('sha256').update(JSON.stringify([groupKey, states, salt])).digest('hex').slice(0, 32);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
