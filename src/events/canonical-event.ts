import { z } from 'zod';

/**
 * Why an instance changed state: `requested` by a user or tool through the API, `unrequested`
 * (crash, guest shutdown), `self` (Reflex's own action), `unknown` (e.g. seen only by a resync).
 */
export const intentSchema = z.enum(['requested', 'unrequested', 'self', 'unknown']);
export type Intent = z.infer<typeof intentSchema>;

const common = {
  /** Stable dedupe key: the same daemon event always gets the same id. */
  id: z.string(),
  /** The target (server) this event came from, as configured. */
  target: z.string(),
  /** Cluster member; "none" on a standalone server. */
  location: z.string(),
  project: z.string(),
  /** Event time as the daemon stamped it (ISO 8601). */
  timestamp: z.string(),
  /** True for events made up by a resync rather than received from the stream. */
  synthetic: z.boolean().default(false),
};

export const instanceStatusEventSchema = z.object({
  kind: z.literal('instance.status'),
  ...common,
  instance: z.string(),
  /** Status code before, when known. */
  from: z.number().int().optional(),
  /** Status code after (e.g. 102 Stopped, 103 Running, 112 Error). */
  to: z.number().int(),
  intent: intentSchema,
  /** The lifecycle action that announced it (instance-shutdown, …), absent for synthetic events. */
  action: z.string().optional(),
  requestor: z.record(z.string(), z.unknown()).optional(),
});

export const operationStatusEventSchema = z.object({
  kind: z.literal('operation.status'),
  ...common,
  operationId: z.string(),
  to: z.number().int(),
  class: z.string(),
  description: z.string(),
  err: z.string(),
  /** Instance names the operation touches (from either revision's resource key). */
  instances: z.array(z.string()),
});

export const lifecycleEventSchema = z.object({
  kind: z.literal('lifecycle'),
  ...common,
  action: z.string(),
  source: z.string(),
  instance: z.string().optional(),
  context: z.record(z.string(), z.unknown()).optional(),
  requestor: z.record(z.string(), z.unknown()).optional(),
});

export const canonicalEventSchema = z.discriminatedUnion('kind', [instanceStatusEventSchema, operationStatusEventSchema, lifecycleEventSchema]);
export type CanonicalEvent = z.infer<typeof canonicalEventSchema>;
export type InstanceStatusEvent = z.infer<typeof instanceStatusEventSchema>;
export type OperationStatusEvent = z.infer<typeof operationStatusEventSchema>;
export type LifecycleEvent = z.infer<typeof lifecycleEventSchema>;
export type EventKind = CanonicalEvent['kind'];
