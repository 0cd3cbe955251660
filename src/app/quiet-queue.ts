import type { Queue } from 'bullmq';
import type { Logger } from 'pino';

/**
 * A queue with no error listener prints each Redis connection error with its stack; the
 * connection's trouble is already reported once (connectRedis), so a queue's copies go to debug.
 */
export function quietQueue(queue: Queue, logger: Logger): Queue {
  queue.on('error', (err) => logger.debug({ err, queue: queue.name }, 'queue error'));
  return queue;
}
