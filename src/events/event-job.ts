import { Queue } from 'bullmq';
import { z } from 'zod';
import type { QueueHistory } from '../config/queue-history.js';
import { retryPolicy } from '../errors/retry-policy.js';
import type { RedisConnection } from '../redis/connect.js';
import type { KeySpace } from '../redis/key-space.js';
import { canonicalEventSchema } from './canonical-event.js';

/**
 * Job on the events queue: a raw frame exactly as received (validated by the worker, so a
 * malformed frame is still stored and can be inspected), or an event made up by a resync.
 */
const frameItemSchema = z.object({ kind: z.literal('frame'), target: z.string(), raw: z.string(), receivedAt: z.number() });
const syntheticItemSchema = z.object({ kind: z.literal('synthetic'), target: z.string(), event: canonicalEventSchema, receivedAt: z.number() });

/** One event as the subscriber took it in: a raw frame, or an event made up by a resync. */
export const eventItemSchema = z.discriminatedUnion('kind', [frameItemSchema, syntheticItemSchema]);
export type EventItem = z.infer<typeof eventItemSchema>;

/**
 * Job on the events queue: what one flush of the ingestor wrote, in daemon order — one item in
 * quiet times, up to a few hundred in a storm, so a storm costs one queue round trip per batch
 * rather than per event. A single item is accepted on its own too.
 */
export const eventJobSchema = z.discriminatedUnion('kind', [
  frameItemSchema,
  syntheticItemSchema,
  z.object({ kind: z.literal('batch'), target: z.string(), items: z.array(eventItemSchema).min(1) }),
]);
export type EventJob = z.infer<typeof eventJobSchema>;

/**
 * A handle on the events queue of `keys`: what the ingestor writes and the processor's worker
 * reads. Finished jobs are kept as configured (`history`: a batch of up to 500 raw frames for the
 * dashboard, and so that a batch written again under the same id is refused); a failed job is
 * retried with the one retry policy's event back-off, computed by the worker (`type: 'custom'`).
 */
export function eventsQueueFor(o: { connection: RedisConnection; keys: KeySpace; history: QueueHistory }): Queue {
  return new Queue(o.keys.eventsQueue, {
    connection: o.connection,
    prefix: o.keys.bullPrefix,
    defaultJobOptions: { ...o.history, attempts: retryPolicy.eventAttempts, backoff: { type: 'custom' } },
  });
}
