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
  /** Stream of every canonical event (with its outcome), kept for audit, replay and debugging. */
  archive: string;
  /** Hash of the last known status of each instance of a target. */
  state(target: string): string;
  /** Lease naming the one replica that reads a target's event stream. */
  lease(target: string): string;
  /** Per-instance lock held while an action runs, across rules and replicas. */
  instanceLock(target: string, project: string, instance: string): string;
  /** Operation id an action job is waiting on, so a restarted worker resumes instead of acting again. */
  inflight(jobId: string): string;
  /** Restart timestamps of an instance (crash-loop budget). */
  restarts(target: string, project: string, instance: string): string;
  /** Set while an instance is quarantined after a crash loop. */
  quarantine(target: string, project: string, instance: string): string;
  /** Cooldown marker of a rule on an instance. */
  cooldown(rule: string, target: string, project: string, instance: string): string;
  /** Instances that failed recently on one member (storm control), scored by time. */
  stormFailures(target: string, location: string): string;
  /** Set while a member is in a failure storm: when it began and who raised its alert. */
  storm(target: string, location: string): string;
  /** Set while a rule's take-over check of an instance with boot.autorestart is queued. */
  standBack(rule: string, target: string, project: string, instance: string): string;
  /** Hash of silences by id. */
  silences: string;
  /** Marker that Reflex itself is acting on an instance (intent `self`). */
  selfAction(target: string, instance: string): string;
  /** Marker that an event (by content hash) has been processed: a duplicate or redelivered one is skipped. */
  seenEvent(hash: string): string;
}

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
    instanceLock: (target, project, instance) => `${prefix}:lock:${target}:${project}/${instance}`,
    inflight: (jobId) => `${prefix}:inflight:${jobId}`,
    restarts: (target, project, instance) => `${prefix}:restarts:${target}:${project}/${instance}`,
    quarantine: (target, project, instance) => `${prefix}:quarantine:${target}:${project}/${instance}`,
    cooldown: (rule, target, project, instance) => `${prefix}:cooldown:${rule}:${target}:${project}/${instance}`,
    stormFailures: (target, location) => `${prefix}:storm-failures:${target}:${location}`,
    storm: (target, location) => `${prefix}:storm:${target}:${location}`,
    standBack: (rule, target, project, instance) => `${prefix}:standback:${rule}:${target}:${project}/${instance}`,
    silences: `${prefix}:silences`,
    selfAction: (target, instance) => `${prefix}:self:${target}:${instance}`,
    seenEvent: (hash) => `${prefix}:seen:${hash}`,
  };
}
