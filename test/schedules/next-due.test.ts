import { Queue } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { duplicateConnection } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { nextDue } from '../../src/schedules/next-due.js';
import { defineSchedule } from '../../src/schedules/schedule.js';
import { repeatOptions, type TickJob } from '../../src/schedules/scheduler.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

const redis = redisClient();
afterAll(() => redis.disconnect());

describe("the next tick's due time", () => {
  it('is the job scheduler’s own, read without BullMQ as BullMQ reads it, while its fingerprint is the schedule’s', async () => {
    const keys = keySpace(uniquePrefix('next-due'));
    const schedule = defineSchedule({ name: 'nightly', cron: '0 3 * * *', tasks: [{ task: 'prune-expired' }] });
    const queue = new Queue(keys.schedules.queue, { connection: duplicateConnection(redis), prefix: keys.bullPrefix });
    try {
      const computed = await nextDue(redis, keys, schedule);
      expect(computed.from).toBe('computed');
      await queue.upsertJobScheduler(schedule.name, repeatOptions(schedule), {
        name: 'tick',
        data: { schedule: schedule.name, fingerprint: schedule.fingerprint } satisfies TickJob,
      });
      const bullmq = await queue.getJobScheduler(schedule.name);
      expect(await nextDue(redis, keys, schedule)).toEqual({ at: bullmq!.next, from: 'scheduler' });
      // Another version of the schedule made that scheduler: its time is not this one's.
      const changed = defineSchedule({ name: 'nightly', cron: '0 4 * * *', tasks: [{ task: 'prune-expired' }] });
      expect((await nextDue(redis, keys, changed)).from).toBe('computed');
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
