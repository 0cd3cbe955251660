import { Queue, Worker, type Job } from 'bullmq';
import { afterEach, expect, it } from 'vitest';
import { duplicateConnection } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { jobStateOf, type JobReader } from '../../src/schedules/job-state.js';
import { settleLedger } from '../../src/schedules/snapshot-ledger.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

/**
 * How a housekeeping job ended decides whether the tick keeps its claim on the snapshot the job
 * made: a job read as skipped loses it, and retention never prunes that snapshot. The reads race
 * the job's end; these hold the order that makes the race harmless, on real Redis and BullMQ.
 */
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** An actions queue with one job taken by a worker (active), and a way to end it as done. */
async function activeJob(): Promise<{ queue: Queue; id: string; end: () => Promise<void> }> {
  const keys = keySpace(uniquePrefix('jobstate'));
  const redis = redisClient();
  const connection = duplicateConnection(redis);
  const queue = new Queue(keys.actionsQueue, { connection, prefix: keys.bullPrefix });
  const worker = new Worker(keys.actionsQueue, null, { connection: duplicateConnection(redis), prefix: keys.bullPrefix, autorun: false });
  closers.push(
    () => redis.quit(),
    () => connection.quit(),
    () => queue.close(),
    () => worker.close(),
  );
  const id = 'hk|nightly|1000|abc|default/c1';
  await queue.add('housekeeping', { action: 'housekeeping' }, { jobId: id });
  const token = 'test-token';
  const job: Job | undefined = await worker.getNextJob(token);
  expect(job?.id).toBe(id);
  let ended = false;
  return {
    queue,
    id,
    end: async () => {
      if (ended) return;
      ended = true;
      await job!.moveToCompleted({ result: 'done' }, token, false);
    },
  };
}

it('a job that ends between the reads of how it ended is read as not ended yet, never as skipped', async () => {
  const { queue, id, end } = await activeJob();
  // The job ends right after the first read, whichever that is.
  const racing: JobReader = {
    getJobState: async (jobId) => {
      const state = await queue.getJobState(jobId);
      await end();
      return state;
    },
    getJob: async (jobId) => {
      const job = await queue.getJob(jobId);
      await end();
      return job;
    },
  };
  expect(await jobStateOf(racing)(id)).toEqual({ state: 'pending' });
  // The next tick reads it done, and keeps the claim.
  expect(await jobStateOf(queue)(id)).toMatchObject({ state: 'done' });
});

it('a job that ended done is read as done, one that is still running as pending, one never queued as unknown', async () => {
  const { queue, id, end } = await activeJob();
  expect(await jobStateOf(queue)(id)).toEqual({ state: 'pending' });
  await end();
  expect(await jobStateOf(queue)(id)).toMatchObject({ state: 'done', endedAt: expect.any(Number) });
  expect(await jobStateOf(queue)('hk|nightly|1000|abc|default/none')).toEqual({ state: 'unknown' });
});

it('a claim the tick gives up on a snapshot still listed is named with why (the tick audits it): retention will never prune that snapshot', () => {
  const claim = { schedule: 'la', tickAt: 1_000, claimedAt: 1_000, jobId: 'job-1' };
  const listed = [{ name: 'la-1', createdAt: 2_000 }];
  const skipped = settleLedger('la', new Map([['la-1', claim]]), listed, () => ({ state: 'skipped' }));
  expect(skipped.forget).toEqual(['la-1']);
  expect(skipped.disowned).toEqual([{ name: 'la-1', why: 'the job that was to make it is skipped' }]);
  const remade = settleLedger('la', new Map([['la-1', { ...claim, createdAt: 1_500 }]]), listed, () => ({ state: 'done' }));
  expect(remade.disowned.map((d) => d.why)).toEqual([
    'it is listed as made at 1970-01-01T00:00:02.000Z, the ledger confirmed it made at 1970-01-01T00:00:01.500Z',
  ]);
  // Gone from the listing: forgotten, nothing to say.
  expect(settleLedger('la', new Map([['la-1', claim]]), [], () => ({ state: 'failed' })).disowned).toEqual([]);
});
