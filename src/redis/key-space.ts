/**
 * One instance of one server: the key of everything Reflex keeps per instance. Two projects may
 * hold instances of the same name, so the project is always part of it.
 */
export interface InstanceRef {
  /** The target (server) as configured: its URL. */
  target: string;
  project: string;
  instance: string;
}

/** Every queue and Redis key family Reflex uses, declared once. `prefix` isolates deployments and tests. */
export interface KeySpace {
  /** BullMQ prefix for all queues. */
  bullPrefix: string;
  /** Raw frames and synthetic events, in arrival order. */
  eventsQueue: string;
  /** Action jobs decided by rules and schedules; jobId is the idempotency key. */
  actionsQueue: string;
  /** Audit stream. */
  audit: string;
  /** Rejected (malformed) frames, kept for inspection. */
  rejected: string;
  /** Stream of every canonical event (with its outcome), kept for audit, replay and debugging. */
  archive: string;
  /** Hash of the last known status of each instance of a target. */
  state(target: string): string;
  /** Lease naming the one replica that writes a target's event stream into Redis. */
  lease(target: string): string;
  /** The lease's fencing counter: grows with each acquisition. */
  leaseFence(target: string): string;
  /** Set while the lease is vacant, so a follower leaves the previous holder the first chance to take it back. */
  leaseVacant(target: string): string;
  /** Per-instance lock held while an action runs, across rules, schedules and replicas. */
  instanceLock(ref: InstanceRef): string;
  /** Operation id an action job is waiting on, so a restarted worker resumes instead of acting again. */
  inflight(jobId: string): string;
  /** Restart timestamps of an instance (crash-loop budget). */
  restarts(ref: InstanceRef): string;
  /** Set while an instance is quarantined after a crash loop. */
  quarantine(ref: InstanceRef): string;
  /** Cooldown marker of a rule on an instance. */
  cooldown(rule: string, ref: InstanceRef): string;
  /** Instances that failed recently on one member (storm control), scored by time. */
  stormFailures(target: string, location: string): string;
  /** Set while a member is in a failure storm: when it began and who raised its alert. */
  storm(target: string, location: string): string;
  /** Set while a rule's take-over check of an instance with boot.autorestart is queued. */
  standBack(rule: string, ref: InstanceRef): string;
  /** Hash of silences by id. */
  silences: string;
  /** The operations Reflex itself started on an instance (intent `self`), by operation id. */
  ownOperations(ref: InstanceRef): string;
  /** Ids of action jobs queued with a delay for an instance: an operator's stop or start cancels them. */
  pendingActions(ref: InstanceRef): string;
  /** Marker that an event (by content hash) is fully processed: only then is a redelivery a duplicate. */
  eventDone(hash: string): string;
  /** Marker of one step of an event's processing (audit record, decision), so a resumed event does it once. */
  stepDone(step: string): string;
}

const ref = (r: InstanceRef) => `${r.target}:${r.project}/${r.instance}`;

export function keySpace(prefix = 'reflex'): KeySpace {
  return {
    bullPrefix: `${prefix}:bull`,
    eventsQueue: 'events',
    actionsQueue: 'actions',
    audit: `${prefix}:audit`,
    rejected: `${prefix}:rejected`,
    archive: `${prefix}:archive`,
    state: (target) => `${prefix}:state:${target}`,
    lease: (target) => `${prefix}:lease:${target}`,
    leaseFence: (target) => `${prefix}:lease:${target}:fence`,
    leaseVacant: (target) => `${prefix}:lease:${target}:vacant`,
    instanceLock: (r) => `${prefix}:lock:${ref(r)}`,
    inflight: (jobId) => `${prefix}:inflight:${jobId}`,
    restarts: (r) => `${prefix}:restarts:${ref(r)}`,
    quarantine: (r) => `${prefix}:quarantine:${ref(r)}`,
    cooldown: (rule, r) => `${prefix}:cooldown:${rule}:${ref(r)}`,
    stormFailures: (target, location) => `${prefix}:storm-failures:${target}:${location}`,
    storm: (target, location) => `${prefix}:storm:${target}:${location}`,
    standBack: (rule, r) => `${prefix}:standback:${rule}:${ref(r)}`,
    silences: `${prefix}:silences`,
    ownOperations: (r) => `${prefix}:own-ops:${ref(r)}`,
    pendingActions: (r) => `${prefix}:pending:${ref(r)}`,
    eventDone: (hash) => `${prefix}:done:${hash}`,
    stepDone: (step) => `${prefix}:step:${step}`,
  };
}
