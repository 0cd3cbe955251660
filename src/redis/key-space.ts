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

/**
 * The Redis keys and BullMQ queues of notifications, declared once, under `${prefix}:notify:`.
 * Group keys are hashes, so they are safe in key names and job ids.
 */
export interface NotifyKeys {
  /** BullMQ prefix of the notification queues. */
  bullPrefix: string;
  /** Queue of group flushes: one delayed job per group decides what to send when its wait is over. */
  flushQueue: string;
  /** Queue of deliveries: one job per message to one receiver, retried with backoff. */
  deliveryQueue: string;
  /** Hash fingerprint → alert JSON: the alerts of a group. */
  group(groupKey: string): string;
  /** Hash fingerprint → `firing`: the alerts of a group a firing message was sent for. */
  notified(groupKey: string): string;
  /** Set while a flush of the group is scheduled, so replicas schedule one between them. */
  scheduled(groupKey: string): string;
  /** Time (ms) of the group's last message, for repeat_interval. */
  lastSent(groupKey: string): string;
  /** Lock held while one flush of the group reads, sends and settles it (one replica flushes a group at a time). */
  groupLock(groupKey: string): string;
  /** Hash group key → the group's route, labels and receiver settings: the pending groups (`reflex alerts`). */
  groups: string;
  /** Sorted set of the fingerprints of firing alerts, scored by start time: inhibition sources and `reflex alerts`. */
  active: string;
  /** JSON of an alert's latest version and the groups it is in, for `resolve(fingerprint)`. */
  alert(fingerprint: string): string;
  /** Lock held while one alert is read and changed (raise, amend, resolve). */
  alertLock(fingerprint: string): string;
  /** JSON of a recovery seen while Reflex's own actions on the incident were still finishing (instance alerts). */
  recovered(fingerprint: string): string;
  /** Set (NX) by whoever enqueues a message, so the same message is sent once across replicas. */
  sent(notificationId: string): string;
  /** Counter of a receiver's messages in one rate-limit window. */
  rate(receiver: string, window: number): string;
  /** Set of the alert fingerprints whose firing message a receiver never got (it failed for good). */
  missedFiring(receiver: string): string;
}

/**
 * The queue and Redis keys of the scheduler.
 */
export interface ScheduleKeys {
  /** The BullMQ queue holding one job scheduler per schedule (under the key space's bullPrefix). */
  queue: string;
  /** Held while one replica reconciles the job schedulers with the loaded schedules. */
  syncLock: string;
  /** Held while a tick of the schedule runs, so two ticks of one schedule never overlap. */
  running(schedule: string): string;
  /** Set once the tick due at `dueAt` has run, so a duplicated job cannot run it twice. */
  done(schedule: string, dueAt: number): string;
  /** Hash snapshot name → JSON: the snapshots of an instance Reflex made (or is making), by schedule: the only ones retention may delete. */
  ledger(ref: InstanceRef): string;
  /** When a schedule first saw an instance in its scope (freshness of an instance with no snapshot yet). */
  firstSeen(schedule: string, ref: InstanceRef): string;
  /** Set while a housekeeping alert of this kind is raised for the schedule and instance, so it is raised once. */
  alerted(kind: string, schedule: string, ref: InstanceRef): string;
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
  /** Hash of the last seen status of each member of a clustered target (member → Online, Offline…). */
  members(target: string): string;
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
  /** Instances on one member whose remediation by a rule failed recently (storm control), scored by time. */
  stormFailures(target: string, location: string, rule: string): string;
  /** Instances on one member a rule remediated recently (storm control: failing again counts against it), scored by time. */
  stormRemediated(target: string, location: string, rule: string): string;
  /** Set while a rule is in a failure storm on a member: when it began and who raised its alert. */
  storm(target: string, location: string, rule: string): string;
  /** Rules in a failure storm on a member, scored by when the storm ends at the earliest. */
  storms(target: string, location: string): string;
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
  /** Notifications: their queues and keys, under `<prefix>:notify:`. */
  notify: NotifyKeys;
  /** Schedules: their queue and keys. */
  schedules: ScheduleKeys;
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
    members: (target) => `${prefix}:members:${target}`,
    lease: (target) => `${prefix}:lease:${target}`,
    leaseFence: (target) => `${prefix}:lease:${target}:fence`,
    leaseVacant: (target) => `${prefix}:lease:${target}:vacant`,
    instanceLock: (r) => `${prefix}:lock:${ref(r)}`,
    inflight: (jobId) => `${prefix}:inflight:${jobId}`,
    restarts: (r) => `${prefix}:restarts:${ref(r)}`,
    quarantine: (r) => `${prefix}:quarantine:${ref(r)}`,
    cooldown: (rule, r) => `${prefix}:cooldown:${rule}:${ref(r)}`,
    stormFailures: (target, location, rule) => `${prefix}:storm-failures:${target}:${location}:${rule}`,
    stormRemediated: (target, location, rule) => `${prefix}:storm-remediated:${target}:${location}:${rule}`,
    storm: (target, location, rule) => `${prefix}:storm:${target}:${location}:${rule}`,
    storms: (target, location) => `${prefix}:storms:${target}:${location}`,
    standBack: (rule, r) => `${prefix}:standback:${rule}:${ref(r)}`,
    silences: `${prefix}:silences`,
    ownOperations: (r) => `${prefix}:own-ops:${ref(r)}`,
    pendingActions: (r) => `${prefix}:pending:${ref(r)}`,
    eventDone: (hash) => `${prefix}:done:${hash}`,
    notify: notifyKeys(prefix),
    schedules: {
      queue: 'schedules',
      syncLock: `${prefix}:schedule-sync`,
      running: (schedule) => `${prefix}:schedule-running:${schedule}`,
      done: (schedule, dueAt) => `${prefix}:schedule-done:${schedule}:${dueAt}`,
      ledger: (r) => `${prefix}:snapshot-ledger:${ref(r)}`,
      firstSeen: (schedule, r) => `${prefix}:schedule-seen:${schedule}:${ref(r)}`,
      alerted: (kind, schedule, r) => `${prefix}:schedule-alerted:${kind}:${schedule}:${ref(r)}`,
    },
  };
}

function notifyKeys(prefix: string): NotifyKeys {
  const p = `${prefix}:notify`;
  return {
    bullPrefix: `${p}:bull`,
    flushQueue: 'flush',
    deliveryQueue: 'deliveries',
    group: (g) => `${p}:group:${g}`,
    notified: (g) => `${p}:notified:${g}`,
    scheduled: (g) => `${p}:scheduled:${g}`,
    lastSent: (g) => `${p}:last-sent:${g}`,
    groupLock: (g) => `${p}:group-lock:${g}`,
    groups: `${p}:groups`,
    active: `${p}:active`,
    alert: (fp) => `${p}:alert:${fp}`,
    alertLock: (fp) => `${p}:alert-lock:${fp}`,
    recovered: (fp) => `${p}:recovered:${fp}`,
    sent: (id) => `${p}:sent:${id}`,
    rate: (r, w) => `${p}:rate:${r}:${w}`,
    missedFiring: (r) => `${p}:missed-firing:${r}`,
  };
}
