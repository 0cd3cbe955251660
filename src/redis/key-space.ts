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
  /** When Reflex first read a target's instances (ms): an instance it never saw that ran since ran unseen. */
  watchedSince(target: string): string;
  /** Hash of the `volatile.uuid` of each instance of a target as its last resync read it: a rename lost in a gap is recognised by it. */
  identities(target: string): string;
  /** Hash of the last seen status of each member of a clustered target (member → Online, Offline…). */
  members(target: string): string;
  /** Lease naming the one replica that writes a target's event stream into Redis. */
  lease(target: string): string;
  /** The lease's fencing counter: grows with each acquisition. */
  leaseFence(target: string): string;
  /** Set while the lease is vacant, so a follower leaves the previous holder the first chance to take it back. */
  leaseVacant(target: string): string;
  /** Sorted set of the replicas reading event streams, scored by when each one's heartbeat runs out: how many share the subscriber leases. */
  replicas: string;
  /** Per-instance lock held while an action runs, across rules, schedules and replicas. */
  instanceLock(ref: InstanceRef): string;
  /** Operation id an action job is waiting on, so a restarted worker resumes instead of acting again. */
  inflight(jobId: string): string;
  /** Restart timestamps of an instance (crash-loop budget). */
  restarts(ref: InstanceRef): string;
  /** Set while an instance is quarantined after a crash loop. */
  quarantine(ref: InstanceRef): string;
  /** SCAN pattern matching every quarantine key (read the instance back with {@link instanceOfKey}). */
  quarantinePattern: string;
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
  /** The last failed start of an instance by someone other than Reflex: the stop that follows is not a crash. */
  startFailures(ref: InstanceRef): string;
  /** State changes of an instance requested by someone other than Reflex, seen on the stream (refused ones too), by operation id. */
  operatorRequests(ref: InstanceRef): string;
  /** Ids of action jobs queued with a delay for an instance: an operator's stop or start cancels them. */
  pendingActions(ref: InstanceRef): string;
  /** The name an instance was renamed to, and the rename's event id, for a while after the rename (a stop of the old name judged later is about it). */
  renamedTo(ref: InstanceRef): string;
  /** Marker that an event (by content hash) is fully processed: only then is a redelivery a duplicate. */
  eventDone(hash: string): string;
  /** The last Redis memory level a replica saw (ok, warning, critical): each change alerts once across replicas. */
  redisMemoryLevel: string;
  /** The deployment's random id, set by its first replica and served in /readyz (`reflex doctor` matches it). */
  deployment: string;
  /** The roster of the URLs the replicas serve /readyz at (`reflex doctor` looks there for its own deployment). */
  httpReplicas: string;
  /** Written by every replica's write probe every few seconds (expires by itself): does Redis take writes? */
  writeProbe: string;
  /** Hash fingerprint → alert JSON: the alerts raised while no notifier tracks them (no receivers configured), so their end is audited too. */
  openAlerts: string;
  /** Notifications: their queues and keys, under `<prefix>:notify:`. */
  notify: NotifyKeys;
  /** Schedules: their queue and keys. */
  schedules: ScheduleKeys;
  /** Rules reload (`reflex rules reload`): the request channel, the roster of replicas holding rules, each request's answers. */
  reload: ReloadKeys;
  /** Health probes: the roster of replicas sharing them, each probe's state, the claim of each period's check. */
  probes: ProbeKeys;
  /** Actions waiting for an operator's approval (remediation/approvals.ts). */
  approvals: ApprovalKeys;
}

/** The keys of approvals, all with one tag: a decision changes a record and the index in one script. */
export interface ApprovalKeys {
  /** Hash of one approval: its request (`request`, JSON), `status`, `expiresAt`, the decision (JSON) and whether it is settled. */
  record(id: string): string;
  /** Sorted set of the approvals not yet settled: a pending one scored by when it times out, a decided one by 0 (settle now). */
  open: string;
  /** Sorted set of the settled approvals, by when they were settled (the newest few hundred). */
  recent: string;
  /** The random key the links in approval alerts are signed with, made by the first replica that needs it. */
  linkKey: string;
}

/** The keys of health probes (src/probes). */
export interface ProbeKeys {
  /** Sorted set of the replicas running probes, scored by when each one's heartbeat runs out. */
  roster: string;
  /** Hash probe id → JSON of its state (health, streaks, last check): what moves with a probe to another replica. */
  state: string;
  /** Set (NX, for one period) by the replica that runs a probe's check of one period: each check runs once. */
  claim(probeId: string, slot: number): string;
  /** Set while a probe runs this command (by hash) on the instance: its `instance-exec` events are the probe's echo. */
  echo(ref: InstanceRef, commandHash: string): string;
}

/** The keys and channels of a rules reload across replicas. */
export interface ReloadKeys {
  /** Pub/sub channel every replica that holds rules listens on for reload requests. */
  channel: string;
  /** Sorted set of the replicas holding rules (worker, scheduler roles), scored by when each one's heartbeat runs out. */
  roster: string;
  /** Pub/sub channel the replicas answer one request on. */
  answers(requestId: string): string;
}

/**
 * Redis Cluster hash tags. Redis Cluster runs a script, MULTI or pipeline only when all its keys
 * hash to one slot, and only the part of a key name between `{` and `}` is hashed. So the keys
 * that are used together share a tag, and the rest spread over the cluster:
 * - one tag per instance, `{<prefix>:<target>:<project>/<instance>}`: lock, crash-loop budget and
 *   quarantine, cooldowns, stand-back, own operations, pending actions, snapshot ledger;
 * - one tag per target, `{<prefix>:<target>}`: state, cluster members, subscriber lease (lock,
 *   fence, vacancy), storm control;
 * - one tag each for the BullMQ queues (`{<prefix>:bull}`: a BullMQ script touches one queue's
 *   keys), the audit trail (stream, chain head, once-keys), the archive (stream, seen-keys), the
 *   rejected frames, the notifier (its scripts cross groups, alerts and the active set) and the
 *   approvals (a decision changes the record and the index together);
 * - keys only ever used alone (in-flight operation ids, event done-markers, silences, schedule
 *   ticks, the replica roster) carry no tag.
 * The same names are used on a single Redis and on Sentinel, so nothing changes between them.
 * A new key family goes here, with the tag of the keys it is used with.
 */
const tag = (...parts: string[]) => `{${parts.join(':')}}`;

export function keySpace(prefix = 'reflex'): KeySpace {
  const instance = (r: InstanceRef) => tag(prefix, r.target, `${r.project}/${r.instance}`);
  const target = (t: string) => tag(prefix, t);
  return {
    bullPrefix: tag(prefix, 'bull'),
    eventsQueue: 'events',
    actionsQueue: 'actions',
    audit: tag(prefix, 'audit'),
    rejected: tag(prefix, 'rejected'),
    archive: tag(prefix, 'archive'),
    state: (t) => `${target(t)}:state`,
    watchedSince: (t) => `${target(t)}:watched-since`,
    identities: (t) => `${target(t)}:identities`,
    members: (t) => `${target(t)}:members`,
    lease: (t) => `${target(t)}:lease`,
    leaseFence: (t) => `${target(t)}:lease:fence`,
    leaseVacant: (t) => `${target(t)}:lease:vacant`,
    replicas: `${prefix}:replicas`,
    instanceLock: (r) => `${instance(r)}:lock`,
    inflight: (jobId) => `${prefix}:inflight:${jobId}`,
    restarts: (r) => `${instance(r)}:restarts`,
    quarantine: (r) => `${instance(r)}:quarantine`,
    quarantinePattern: `${tag(prefix, '*')}:quarantine`,
    cooldown: (rule, r) => `${instance(r)}:cooldown:${rule}`,
    stormFailures: (t, location, rule) => `${target(t)}:storm-failures:${location}:${rule}`,
    stormRemediated: (t, location, rule) => `${target(t)}:storm-remediated:${location}:${rule}`,
    storm: (t, location, rule) => `${target(t)}:storm:${location}:${rule}`,
    storms: (t, location) => `${target(t)}:storms:${location}`,
    standBack: (rule, r) => `${instance(r)}:standback:${rule}`,
    silences: `${prefix}:silences`,
    ownOperations: (r) => `${instance(r)}:own-ops`,
    startFailures: (r) => `${instance(r)}:start-failed`,
    operatorRequests: (r) => `${instance(r)}:operator-requests`,
    pendingActions: (r) => `${instance(r)}:pending`,
    renamedTo: (r) => `${instance(r)}:renamed-to`,
    eventDone: (hash) => `${prefix}:done:${hash}`,
    approvals: {
      record: (id) => `${tag(prefix, 'approvals')}:approval:${id}`,
      open: `${tag(prefix, 'approvals')}:open`,
      recent: `${tag(prefix, 'approvals')}:recent`,
      linkKey: `${tag(prefix, 'approvals')}:link-key`,
    },
    redisMemoryLevel: `${prefix}:redis-memory-level`,
    deployment: `${prefix}:deployment`,
    httpReplicas: `${prefix}:http-replicas`,
    writeProbe: `${prefix}:write-probe`,
    openAlerts: `${prefix}:alerts:open`,
    notify: notifyKeys(prefix),
    schedules: {
      queue: 'schedules',
      syncLock: `${prefix}:schedule-sync`,
      running: (schedule) => `${prefix}:schedule-running:${schedule}`,
      done: (schedule, dueAt) => `${prefix}:schedule-done:${schedule}:${dueAt}`,
      ledger: (r) => `${instance(r)}:snapshot-ledger`,
      firstSeen: (schedule, r) => `${instance(r)}:schedule-seen:${schedule}`,
      alerted: (kind, schedule, r) => `${instance(r)}:schedule-alerted:${kind}:${schedule}`,
    },
    probes: {
      roster: `${prefix}:probe-replicas`,
      state: `${prefix}:probes`,
      claim: (id, slot) => `${prefix}:probe-claim:${id}:${slot}`,
      echo: (r, hash) => `${instance(r)}:probe-echo:${hash}`,
    },
    reload: {
      channel: `${prefix}:reload`,
      roster: `${prefix}:rule-replicas`,
      answers: (id) => `${prefix}:reload:answers:${id}`,
    },
  };
}

/**
 * The instance a per-instance key belongs to, from its hash tag (`quarantinePattern` matches).
 * A target may hold colons; a project or instance name holds neither a colon nor a slash.
 */
export function instanceOfKey(prefix: string, key: string): InstanceRef | undefined {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open);
  if (open !== 0 || close < 0) return undefined;
  const inner = key.slice(1, close);
  if (!inner.startsWith(`${prefix}:`)) return undefined;
  const ref = inner.slice(prefix.length + 1);
  const slash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':', slash);
  if (slash < 0 || colon < 0) return undefined;
  return { target: ref.slice(0, colon), project: ref.slice(colon + 1, slash), instance: ref.slice(slash + 1) };
}

function notifyKeys(prefix: string): NotifyKeys {
  const p = tag(prefix, 'notify');
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
