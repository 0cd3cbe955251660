import { Queue } from 'bullmq';
import { redisFromUrl } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { until } from './wait.js';

type PipelineQueue = 'eventsQueue' | 'actionsQueue';

/**
 * Waits until no job is waiting, delayed or running in one of the prefix's queues: no action left
 * means nothing can act on an instance any more; no event left, that every event heard is decided on.
 */
export async function queueIdle(redisUrl: string, prefix: string, queue: PipelineQueue, timeoutMs = 10_000): Promise<void> {
  await settledOn(redisUrl, prefix, [queue], 1, timeoutMs);
}

/** Once the rules have decided, nothing is left that could act on an instance: the condition a quiet period stood for. */
export const noActionPending = (redisUrl: string, prefix: string, timeoutMs?: number): Promise<void> =>
  queueIdle(redisUrl, prefix, 'actionsQueue', timeoutMs);

/**
 * Waits until the prefix's pipeline is at rest: the events and the actions queues empty (nothing
 * waiting, delayed or running) at three polls in a row, 100 ms apart. Longer than the ingestor's
 * reorder hold (20 ms), so a frame read but not yet written would have reached the events queue
 * and shown; an event job adds its action before it completes, so an action on its way shows too.
 * What a quiet period after a heal stood for: a duplicate event or a second action would be in one
 * of the queues, and once both stay empty, the counts a test reads next are final.
 */
export async function settled(redisUrl: string, prefix: string, timeoutMs = 15_000): Promise<void> {
  await settledOn(redisUrl, prefix, ['eventsQueue', 'actionsQueue'], 3, timeoutMs);
}

async function settledOn(redisUrl: string, prefix: string, names: PipelineQueue[], polls: number, timeoutMs: number): Promise<void> {
  const keys = keySpace(prefix);
  // Built as the product builds it: a Cluster client on a Redis Cluster (npm run test:scale).
  const connection = redisFromUrl(redisUrl);
  const queues = names.map((n) => new Queue(keys[n], { connection, prefix: keys.bullPrefix }));
  let idleRuns = 0;
  try {
    await until(
      `${polls > 1 ? `${polls} polls in a row with ` : ''}no job left in ${names.map((n) => keys[n]).join(' and ')}`,
      async () => {
        const counts = await Promise.all(queues.map((q) => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized')));
        idleRuns = counts.every((c) => Object.values(c).every((n) => n === 0)) ? idleRuns + 1 : 0;
        return idleRuns >= polls;
      },
      timeoutMs,
      100,
    );
  } finally {
    await Promise.all(queues.map((q) => q.close()));
    connection.disconnect();
  }
}
