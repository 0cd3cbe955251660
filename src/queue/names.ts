/** Every queue and Redis key family Reflex uses, declared once. `prefix` isolates deployments and tests. */
export interface KeySpace {
  /** BullMQ prefix for all queues. */
  bullPrefix: string;
  /** Raw frames and synthetic events, in arrival order. */
  eventsQueue: string;
  /** Action jobs decided by rules; jobId is the idempotency key. */
  actionsQueue: string;
  /** Audit stream. */
  audit: string;
  /** Rejected (malformed) frames, kept for inspection. */
  rejected: string;
  /** Hash of the last known status of each instance of a target. */
  state(target: string): string;
  /** Lease naming the one replica that reads a target's event stream. */
  lease(target: string): string;
  /** Marker that Reflex itself is acting on an instance (intent `self`). */
  selfAction(target: string, instance: string): string;
}

export function keySpace(prefix = 'reflex'): KeySpace {
  return {
    bullPrefix: `${prefix}:bull`,
    eventsQueue: 'events',
    actionsQueue: 'actions',
    audit: `${prefix}:audit`,
    rejected: `${prefix}:rejected`,
    state: (target) => `${prefix}:state:${target}`,
    lease: (target) => `${prefix}:lease:${target}`,
    selfAction: (target, instance) => `${prefix}:self:${target}:${instance}`,
  };
}
