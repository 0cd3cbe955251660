import { z } from 'zod';
import { canonicalEventSchema } from '../events/canonical-event.js';

/**
 * Job on the events queue: a raw frame exactly as received (validated by the worker, so a
 * malformed frame is still stored and can be inspected), or an event made up by a resync.
 */
export const eventJobSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('frame'), target: z.string(), raw: z.string(), receivedAt: z.number() }),
  z.object({ kind: z.literal('synthetic'), target: z.string(), event: canonicalEventSchema, receivedAt: z.number() }),
]);
export type EventJob = z.infer<typeof eventJobSchema>;

/**
 * Job on the actions queue: one action a rule decided on for one incident. The job id is
 * `rule:incident:action-index`, so a duplicate event or a redelivered job never acts twice.
 */
export const actionJobSchema = z.object({
  rule: z.string(),
  action: z.string(),
  params: z.record(z.string(), z.unknown()).default({}),
  target: z.string(),
  project: z.string(),
  instance: z.string(),
  /** The incident: id of the event that triggered the rule; also the audit correlation id. */
  correlationId: z.string(),
  dryRun: z.boolean().default(false),
});
export type ActionJob = z.infer<typeof actionJobSchema>;
