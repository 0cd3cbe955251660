import type { RedisConnection } from '../redis/connect.js';
import type { KeySpace } from '../redis/key-space.js';
import type { Schedule } from './schedule.js';
import type { TickJob } from './scheduler.js';

/**
 * When the schedule's next tick is due: the job scheduler's own figure when it exists in Redis
 * (`from: 'scheduler'`), else the next cron time or interval boundary after `now` (`'computed'`).
 *
 * The job scheduler is read as BullMQ's `Queue.getJobScheduler` reads it (its score in the queue's
 * `repeat` set is the next due time, its hash the template data with the fingerprint), in one
 * MULTI, so `reflex housekeeping plan` does not load BullMQ's 170 modules for one record;
 * test/schedules/next-due.test.ts holds the two readings to each other.
 */
export async function nextDue(
  redis: RedisConnection,
  keys: KeySpace,
  schedule: Schedule,
  now = Date.now(),
): Promise<{ at: number; from: 'scheduler' | 'computed' }> {
  const repeat = `${keys.bullPrefix}:${keys.schedules.queue}:repeat`;
  const read = await redis.multi().zscore(repeat, schedule.name).hget(`${repeat}:${schedule.name}`, 'data').exec();
  const [next, data] = (read ?? []).map(([err, value]) => {
    if (err) throw err;
    return value as string | null;
  });
  if (next != null && data != null && (JSON.parse(data) as Partial<TickJob>).fingerprint === schedule.fingerprint)
    return { at: Number(next), from: 'scheduler' };
  if (schedule.everyMs !== undefined) return { at: (Math.floor(now / schedule.everyMs) + 1) * schedule.everyMs, from: 'computed' };
  // BullMQ's own arithmetic, so the time printed is the time its scheduler will set.
  const { getNextMillis } = await import('../redis/commonjs-packages.js');
  return { at: getNextMillis(now, { pattern: schedule.cron!, tz: schedule.tz }) ?? now, from: 'computed' };
}
