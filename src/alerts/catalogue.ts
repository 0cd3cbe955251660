/** What the catalogue says of one alert kind. */
export interface AlertKindEntry {
  /** The severities it is raised with. */
  severity: readonly ('info' | 'warning' | 'critical')[];
  /** What raises it, and where. */
  raisedBy: string;
  /** What resolves it, read after "it resolves when" (the console says so of a firing alert). */
  resolvedBy: string;
  /**
   * Its spelling before the catalogue gave every kind the form `subject.condition`. Routes and
   * inhibition rules that match the former spelling still match it, and its fingerprint is the
   * former one's, so an alert firing across the upgrade is resolved by the new spelling.
   */
  formerly?: string;
}

/**
 * Every alert kind Reflex raises, declared once, in the form `subject.condition`: its severity,
 * what raises it and what resolves it. docs/notifications.md lists the same kinds (a test checks).
 * A rule's `notify` action may raise kinds of its own; `rule.notify` is its default.
 */
// prettier-ignore
export const alertKinds = {
  'instance.crashed': { severity: ['warning', 'critical'], raisedBy: 'an instance stopped without a request, confirmed by a read of the daemon (notify/instance-alerts.ts); critical when no rule acts', resolvedBy: 'the instance is Running again, by anyone, or the daemon answers 404 for its name' },
  'instance.error': { severity: ['warning', 'critical'], raisedBy: 'a resync finds an instance in Error (notify/instance-alerts.ts)', resolvedBy: 'the instance is Running again, by anyone, or the daemon answers 404 for its name' },
  'instance.start-failed': { severity: ['warning'], raisedBy: "someone's start or launch failed and the instance never ran (notify/instance-alerts.ts)", resolvedBy: 'the instance is Running again, or the daemon answers 404 for its name' },
  'instance.crash-loop': { severity: ['critical'], raisedBy: 'the crash-loop budget quarantines an instance (remediation/decide/action-gate.ts)', resolvedBy: 'the instance is Running again or an operator releases its quarantine', formerly: 'crash-loop' },
  'action.failed': { severity: ['critical'], raisedBy: 'an action gives up on an instance: dead-lettered (remediation/action-executor.ts)', resolvedBy: 'the instance is Running again or a later action on it ends done (a retry of the dead letter included)', formerly: 'action-failed' },
  'action.give-back-failed': { severity: ['critical'], raisedBy: "an operator's stop or freeze met a start of Reflex's in flight, the daemon refused it, and Reflex could not stop (or freeze) the instance again (remediation/action-executor.ts): it runs against the operator's request", resolvedBy: 'the instance is Stopped or Frozen, by anyone, or the daemon answers 404 for its name' },
  'member.storm': { severity: ['critical'], raisedBy: "a rule's remediations keep failing on a cluster member (remediation/storm-control.ts, through the gate or a give-up)", resolvedBy: 'an instance on the member recovers once the member is out of the storm', formerly: 'storm' },
  'member.offline': { severity: ['critical'], raisedBy: 'a cluster member turns Offline (remediation/member-watch.ts)', resolvedBy: 'the member is Online again' },
  'redis.memory-high': { severity: ['warning', 'critical'], raisedBy: 'Redis used_memory reaches redisMemoryAlertRatio of maxmemory, or Redis is full and refuses writes (retention/redis-watch.ts)', resolvedBy: 'Redis memory is back under the ratio, or Redis takes writes again' },
  'redis.writes-refused': { severity: ['critical'], raisedBy: 'Redis refuses writes: a read-only replica or a failed RDB save (retention/redis-watch.ts)', resolvedBy: 'Redis takes writes again' },
  'snapshot.stale': { severity: ['critical'], raisedBy: "a schedule's newest snapshot of an instance is older than staleAfter (schedules/tick-runner.ts)", resolvedBy: 'a tick finds a fresh snapshot', formerly: 'snapshot-stale' },
  'snapshot.ownership-unknown': { severity: ['warning'], raisedBy: "snapshots look like a schedule's while its ledger holds none of the instance (schedules/tick-runner.ts)", resolvedBy: "the ledger proves a snapshot is the schedule's again, or none is left", formerly: 'snapshot-ownership-unknown' },
  'rule.failing': { severity: ['warning'], raisedBy: "a rule's when threw or timed out 5 times in 10 minutes (rules/rule-errors.ts)", resolvedBy: 'the rule evaluates cleanly again, or the rules are reloaded' },
  'rule.notify': { severity: ['info', 'warning', 'critical'], raisedBy: "a rule's notify action, with the kind and severity the rule gives (actions/notify-action.ts)", resolvedBy: "a rule's notify action with resolve: true names the same kind" },
  'event.contradicted': { severity: ['warning'], raisedBy: 'a stop event the daemon contradicts (remediation/decide/contradicted-stop.ts): a notice', resolvedBy: 'it has been shown once (a notice)' },
  'event.future-timestamp': { severity: ['warning'], raisedBy: 'a frame dated beyond clockToleranceMs ahead of its receipt (remediation/decide/event-processor.ts): a notice', resolvedBy: 'a receiver expires it: Reflex never does (a notice about one frame, already handled)' },
  'event.frame-too-large': { severity: ['warning'], raisedBy: 'a frame refused as larger than maxFrameBytes (remediation/decide/event-processor.ts): a notice', resolvedBy: 'a receiver expires it: Reflex never does (a notice about one frame, already handled)' },
  'action.approval-requested': { severity: ['warning'], raisedBy: 'a rule with `approval` matched and was admitted: its actions wait for a decision, the signed link in the alert (remediation/approvals.ts)', resolvedBy: "someone approves or denies it, it times out, or an operator's own transition of the instance withdraws it" },
  'action.approval-timed-out': { severity: ['warning'], raisedBy: 'nobody decided an approval in time: nothing was done (remediation/approvals.ts): a notice', resolvedBy: 'it has been shown once (a notice)' },
  'history.store-failing': { severity: ['critical'], raisedBy: 'the audit history store does not take records (audit/history/history-shipper.ts)', resolvedBy: 'a shipping round succeeds again' },
} as const satisfies Record<string, AlertKindEntry>;

/** An alert kind of the catalogue. */
export type AlertKind = keyof typeof alertKinds;

/** The kind of the alert raised when an action gives up (dead-lettered) on an instance. */
export const actionFailedKind = 'action.failed' satisfies AlertKind;
/** The kind of the alert raised when Reflex could not give back a start an operator's stop met in flight: the instance runs against the operator. */
export const giveBackFailedKind = 'action.give-back-failed' satisfies AlertKind;
/** The kind of the alert raised when a crash loop puts an instance in quarantine. */
export const crashLoopKind = 'instance.crash-loop' satisfies AlertKind;
/** The kind of the alert raised when a rule's remediations keep failing on a cluster member. */
export const stormKind = 'member.storm' satisfies AlertKind;
/** The kind of the alert raised while a rule's actions wait for an operator's approval. */
export const approvalRequestedKind = 'action.approval-requested' satisfies AlertKind;
/** The kind of the notice raised when nobody decided on an approval in time. */
export const approvalTimedOutKind = 'action.approval-timed-out' satisfies AlertKind;
/** The kind of the notice raised when the daemon contradicts a stop event (no such instance, not down, another instance). */
export const contradictedKind = 'event.contradicted' satisfies AlertKind;

/** The kind `spelling` names: itself, or the catalogue's kind it is the former spelling of. */
export function currentKind(spelling: string): string {
  return formerToCurrent.get(spelling) ?? spelling;
}

/**
 * The spelling an alert's fingerprint is made from: a renamed kind's former one, so an alert that
 * fired before the rename and its resolution after it share a fingerprint.
 */
export function fingerprintKind(kind: string): string {
  return (alertKinds as Record<string, AlertKindEntry>)[kind]?.formerly ?? kind;
}

const formerToCurrent = new Map(
  Object.entries(alertKinds as Record<string, AlertKindEntry>).flatMap(([kind, e]) => (e.formerly ? [[e.formerly, kind] as const] : [])),
);
