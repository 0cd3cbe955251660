import type { Queue } from 'bullmq';
import type { RedisConnection } from '../redis/connect.js';
import { getMany, setMany } from '../redis/get-many.js';
import { GroupCommit } from '../redis/group-commit.js';
import { isProbeEcho } from '../probes/probe-echo.js';
import type { Logger } from 'pino';
import { Alerts, crashLoopKind } from '../alerts/alerts.js';
import type { AlertKind } from '../alerts/catalogue.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { InstanceClient } from '../client/client.js';
import { isApiStatus } from '../client/api-error.js';
import type { Instance } from '../client/instance.js';
import type { CanonicalEvent, InstanceStatusEvent } from '../events/canonical-event.js';
import type { EventArchive } from '../events/event-archive.js';
import { eventItemHash } from '../events/event-ingestor.js';
import { eventItemSchema, type EventItem } from '../events/event-job.js';
import { clampedTimestamp } from '../events/event-time.js';
import { decodeFrame } from '../events/frame.js';
import { StartFailures } from '../events/intent.js';
import type { OwnOperations } from './own-operations.js';
import { normalizeFrame } from '../events/normalize.js';
import { keepRejected, type RejectedLimits } from '../events/rejected-events.js';
import type { StateTracker } from '../events/state-tracker.js';
import { StatusSettler, type Settled } from '../events/status-settler.js';
import type { Metrics } from '../metrics/metrics.js';
import type { InstanceAlerts, RuleResponse } from '../notify/instance-alerts.js';
import type { InstanceRef, KeySpace } from '../redis/key-space.js';
import type { Decision, RuleEngine } from '../rules/engine.js';
import type { ActionGate } from './action-gate.js';
import { actionJobOptions, type ActionJob } from '../actions/action-job.js';
import { CrashLoopBudget } from './crash-loop-budget.js';
import { identityOf } from './instance-identity.js';
import type { PendingActions } from './pending-actions.js';
import { endIncidentsOfGone, recordContradictedStop } from './contradicted-stop.js';
import { RenamedAfterCrash } from './renamed-after-crash.js';
import { StopConfirmation } from './stop-confirmation.js';
import { OperatorRequests } from './operator-requests.js';
import { Trail } from './trail.js';

/** What the event processor needs. */
export interface EventProcessorDeps {
  redis: RedisConnection;
  keys: KeySpace;
  /** The client of the target a job's event came from. */
  client: (target: string) => InstanceClient;
  tracker: StateTracker;
  ownOperations: OwnOperations;
  audit: AuditLog;
  /** The rules; a function gives the current ones of a reloadable rule set, read once per event. */
  engine: RuleEngine | (() => RuleEngine);
  gate: ActionGate;
  actions: Queue;
  /** Delayed action jobs per instance: an operator's transition cancels them. */
  pending: PendingActions;
  logger: Logger;
  /**
   * Raises the alerts of events (crash-loop quarantine, storm, a future-dated or oversized frame, a
   * stop the daemon contradicts) and resolves those of a name that no longer exists. Default: audited only.
   */
  alerts?: Pick<Alerts, 'raise' | 'resolveFiring'>;
  /** Raises an alert per crash or Error and resolves it when the instance runs again; none: no such alerts. */
  instanceAlerts?: Pick<InstanceAlerts, 'observe'>;
  /** Attempts per action job (first try included). Default 5. */
  actionAttempts?: number;
  /** Where every canonical event is kept with its outcome; none: not archived. */
  archive?: EventArchive;
  /** Counts events, lag and decisions; none: not counted. */
  metrics?: Metrics;
  /** Instances whose events of one batch are processed side by side (each instance's in order). Default 32. */
  parallelInstances?: number;
  /** How far a frame's time may be ahead of its receipt before it is clamped to the receipt, audited and alerted. Default 5 minutes. */
  clockToleranceMs?: number;
  /** Bytes of a rejected input kept in the rejected stream. Default 65 536. */
  maxEventBytes?: number;
  /** Count and age bounds of the rejected stream. Default 10 000 entries, 7 days. */
  rejected?: Pick<RejectedLimits, 'maxLength' | 'maxAgeMs'>;
  /** How long a stop of an instance that still reads as up is re-read before it is called contradicted. Default 2 000 ms. */
  stopSettleMs?: number;
}

/** How long an event stays known as processed, so a duplicate or a redelivered batch skips it. */
const DONE_TTL_MS = 10 * 60_000;

/** What became of one event (returned for tests and metrics). */
export type ProcessResult = 'rejected' | 'ignored' | 'stale' | 'unchanged' | 'duplicate' | 'processed' | 'contradicted';

/** An event of a batch, decoded, waiting for its turn. */
type Prepared = { item?: EventItem; raw: unknown; hash: string; event?: CanonicalEvent; rejected?: string; lost?: true; futureTimestamp?: string };

/**
 * Takes each event of a job of the events queue through the pipeline: validate and type it (a
 * malformed frame is kept in the rejected stream with the reason), settle its intent and its place
 * in the instance's history, audit it, let the rules decide, and queue their actions.
 *
 * Exactly-once bookkeeping: every step is idempotent (the tracker's compare-and-set knows the event,
 * audit records carry once-keys, action jobs have deterministic ids, the crash-loop budget reserves
 * per incident) and the "done" mark is written last. A redelivered event whose work was cut short
 * resumes the remaining steps; only the done mark makes it a duplicate.
 *
 * A batch is split by instance: one instance's events are handled strictly in order, different
 * instances side by side.
 */
export class EventProcessor {
  /** Done marks of events finished at the same moment go to Redis together. */
  private readonly doneMarks: GroupCommit<string, void>;
  private readonly startFailures: StartFailures;
  private readonly operatorRequests: OperatorRequests;
  private readonly settler: StatusSettler;
  private readonly stops: StopConfirmation;
  private readonly renames: RenamedAfterCrash;

  private readonly alerts: Pick<Alerts, 'raise' | 'resolveFiring'>;

  constructor(private readonly deps: EventProcessorDeps) {
    this.alerts = deps.alerts ?? new Alerts({ audit: deps.audit });
    this.startFailures = new StartFailures(deps.redis, deps.keys);
    this.operatorRequests = new OperatorRequests(deps.redis, deps.keys);
    this.settler = new StatusSettler({ ...deps, startFailures: this.startFailures, readInstance: (ref) => this.readInstance(ref) });
    this.stops = new StopConfirmation({
      readInstance: (ref) => this.readInstance(ref),
      knownBefore: async (ref, eventId) => {
        const entry = await deps.tracker.get(ref);
        return entry?.eventId === eventId ? entry.prev : undefined;
      },
      settleMs: deps.stopSettleMs,
    });
    this.renames = new RenamedAfterCrash({ ...deps, alerts: this.alerts, readInstance: (ref) => this.readInstance(ref) });
    this.doneMarks = new GroupCommit<string, void>(async (keys) => {
      await setMany(deps.redis, keys, '1', DONE_TTL_MS);
      return [];
    });
  }

  /** Processes one job (a batch, or a single item); answers what became of each event, in order. */
  async process(data: unknown): Promise<ProcessResult[]> {
    const items: unknown[] = isBatch(data) ? data.items : [data];
    const { redis, keys } = this.deps;
    const results: ProcessResult[] = new Array(items.length);
    const prepared = items.map((raw) => this.prepare(raw));
    const done = await getMany(
      redis,
      prepared.map((p) => keys.eventDone(p.hash)),
    );
    const groups = new Map<string, number[]>();
    const inBatch = new Set<string>();
    prepared.forEach((p, i) => {
      if (done[i] !== null || inBatch.has(p.hash)) return void (results[i] = 'duplicate');
      inBatch.add(p.hash);
      const key = groupKey(p);
      const group = groups.get(key);
      if (group) group.push(i);
      else groups.set(key, [i]);
    });
    const pending = [...groups.values()];
    const failures: unknown[] = [];
    const marks: Promise<unknown>[] = [];
    const lane = async () => {
      for (let group = pending.shift(); group; group = pending.shift()) {
        for (const i of group) {
          try {
            results[i] = await this.processOne(prepared[i]!);
            // Last: only now is every step of this event durable.
            marks.push(this.doneMarks.submit(keys.eventDone(prepared[i]!.hash)));
          } catch (err) {
            // The rest of this instance's events wait for the job's retry, in order.
            failures.push(err);
            break;
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.deps.parallelInstances ?? 32, pending.length) }, lane));
    await Promise.all(marks);
    if (failures.length) throw failures[0];
    return results;
  }

  /** Validates and types one item on its own: whatever is wrong with it rejects it alone. */
  private prepare(raw: unknown): Prepared {
    const parsed = eventItemSchema.safeParse(raw);
    if (!parsed.success) {
      const why = parsed.error.issues.map((i) => `${i.path.join('.') || '(item)'}: ${i.message}`).join('; ');
      return { raw, hash: rawHash(raw), rejected: `invalid event item: ${why}` };
    }
    const item = parsed.data;
    const hash = eventItemHash(item);
    if (item.kind !== 'frame') return { item, raw, hash, event: item.event };
    try {
      const decoded = decodeFrame(item.raw);
      if (!decoded.ok) return { item, raw, hash, rejected: decoded.reason, ...(decoded.lost ? { lost: true as const } : {}) };
      const event = normalizeFrame(decoded.frame, item.target);
      // Clamped from the receipt time recorded at ingest: a redelivered frame is clamped the same way.
      const clamped = event && clampedTimestamp(event.timestamp, item.receivedAt, this.deps.clockToleranceMs);
      if (!event || !clamped) return { item, raw, hash, event };
      const futureTimestamp = event.timestamp;
      event.timestamp = clamped;
      return { item, raw, hash, event, futureTimestamp };
    } catch (err) {
      // A bad %-escape in a source, an object too deep to walk: this frame only.
      return { item, raw, hash, rejected: `frame could not be typed: ${(err as Error).name}: ${(err as Error).message}` };
    }
  }

  private async processOne(p: Prepared): Promise<ProcessResult> {
    const result = await this.processEvent(p);
    const { metrics } = this.deps;
    // Lag from the daemon's time, for frames only (a resync's event is a read, not news arriving late).
    if (metrics && p.item?.kind === 'frame' && p.event && result !== 'rejected' && result !== 'ignored') metrics.observeIngestLag(p.event.timestamp);
    return result;
  }

  private async processEvent(p: Prepared): Promise<ProcessResult> {
    const { audit, metrics } = this.deps;
    if (p.rejected !== undefined) {
      await this.reject(p, p.rejected);
      metrics?.events.inc({ kind: 'rejected' });
      return 'rejected';
    }
    const event = p.event;
    if (!event) {
      metrics?.events.inc({ kind: 'ignored' });
      return 'ignored';
    }
    // The daemon's announcement of a health probe's exec: Reflex's own probing, not news (src/probes/probe-echo.ts).
    if (
      event.kind === 'lifecycle' &&
      event.action === 'instance-exec' &&
      event.instance !== undefined &&
      (await isProbeEcho(this.deps.redis, this.deps.keys, { target: event.target, project: event.project, instance: event.instance }, event.context))
    ) {
      metrics?.events.inc({ kind: 'ignored' });
      return 'ignored';
    }
    metrics?.events.inc({ kind: event.kind });
    if (p.futureTimestamp !== undefined) await this.futureTimestamp(event, p.futureTimestamp);

    let settled: Settled = 'processed';
    // The instance as read to confirm a stop: the rules decide on that read instead of reading again.
    let confirmed: { instance: Instance } | undefined;
    if (event.kind === 'instance.status') {
      settled = await this.settler.settle(event);
      if (settled !== 'processed' && settled !== 'corrected') {
        await this.deps.archive?.append(event, settled);
        return settled;
      }
      // Every path by which a stop counts as a crash (the rules, the gate's budget, the crash alert) comes after this.
      const verdict = await this.stops.confirm(event);
      if (verdict.checked && !verdict.confirmed) {
        await recordContradictedStop({ ...this.deps, alerts: this.alerts }, event, verdict);
        if (verdict.contradiction === 'gone')
          await this.renames.stopOfGone({ target: event.target, project: event.project, instance: event.instance }, event);
        return 'contradicted';
      }
      if (verdict.checked) confirmed = { instance: verdict.instance };
    }
    // An operation names its instances in resources; rules act on the first (state changes touch one).
    const instanceName = 'instance' in event ? event.instance : event.kind === 'operation.status' ? event.instances[0] : undefined;
    const ref: InstanceRef | undefined =
      instanceName !== undefined ? { target: event.target, project: event.project, instance: instanceName } : undefined;
    await Promise.all([
      this.deps.archive?.append(event, settled),
      event.kind === 'operation.status' ? undefined : Trail.ofEvent(audit, event, instanceName).event(event, describe(event)),
    ]);
    // A start through the API that failed is an operator's start too.
    if (event.kind === 'instance.status' && (event.intent === 'requested' || event.intent === 'failed-start') && ref)
      await this.cancelPending(ref, event);
    if (event.kind === 'operation.status' && ref)
      await Promise.all([
        this.startFailures.observe(ref, event, this.deps.ownOperations),
        this.operatorRequests.observe(ref, event, () => this.deps.ownOperations.ids(ref)),
      ]);
    if (event.kind === 'lifecycle' && event.action === 'instance-renamed' && ref && typeof event.context?.old_name === 'string') {
      const from = { ...ref, instance: event.context.old_name };
      await this.renamed(from, ref, event.id);
      await this.renames.renamed(from, ref, event);
      // The alerts of the old name end when the daemon says it is gone: no Running will come under it.
      if (!(await this.readInstance(from))) await endIncidentsOfGone(this.alerts, from);
    }
    if (event.kind === 'lifecycle' && event.action === 'instance-deleted' && ref && !(await this.readInstance(ref)))
      await endIncidentsOfGone(this.alerts, ref);

    const responses: RuleResponse[] = [];
    // Read once: a reload during this event's awaits must not give it half the old rules, half the new.
    const engine = typeof this.deps.engine === 'function' ? this.deps.engine() : this.deps.engine;
    if (engine.isRelevant(event) && !(event.kind === 'lifecycle' && ref && (await this.deps.ownOperations.ownExec(ref, event)))) {
      const instance = confirmed ? confirmed.instance : ref ? await this.readInstance(ref) : undefined;
      // An alert does not say which cluster member runs the instance; the read does, and storm
      // control, scope.locations and the re-check's evacuation check key on it.
      if (event.kind === 'alert' && instance?.location) event.location = instance.location;
      const decisions = await engine.decide(event, instance);
      const trail = Trail.ofEvent(audit, event, instanceName).with({ uuid: identityOf(instance).uuid });
      for (const d of decisions) {
        if (!d.matched || !ref) {
          metrics?.ruleDecisions.inc({ rule: d.rule, decision: d.matched ? 'matched' : 'skipped' });
          // Actions act on an instance: an event naming none (an alert without an instance label) is decided, not acted on.
          const summary = d.matched ? `${d.summary}; no action: the event names no instance` : d.summary;
          await trail.with({ rule: d.rule }).decision(summary, { matched: d.matched });
          responses.push({ rule: d.rule, result: 'skipped', summary: d.summary, actions: [] });
          continue;
        }
        responses.push(await this.dispatch(d, event, ref, instance));
      }
    }
    await this.deps.instanceAlerts?.observe(event, responses);
    return 'processed';
  }

  /**
   * A frame dated far ahead of its receipt was given its receipt time (so it cannot hide the real
   * transitions after it); the audit and a warning alert keep the time the daemon gave it.
   */
  private async futureTimestamp(event: CanonicalEvent, original: string): Promise<void> {
    const instance = 'instance' in event ? event.instance : undefined;
    const summary = `${instance ?? event.kind}: event dated ${original}, ahead of its receipt (${event.timestamp}) by more than the clock tolerance; processed at its receipt time (is the daemon's clock stepped forward?)`;
    const alert = {
      kind: 'event.future-timestamp' satisfies AlertKind,
      severity: 'warning',
      summary,
      target: event.target,
      project: event.project,
      instance: instance ?? `target:${event.target}`,
      ...(event.location && event.location !== 'none' ? { member: event.location } : {}),
      correlationId: event.id,
    } as const;
    await this.alerts.raise(alert, { once: `future-time:${event.id}`, record: { instance } });
  }

  /** An operator's transition (or failed start) supersedes every delayed action of Reflex on that instance. */
  private async cancelPending(ref: InstanceRef, event: InstanceStatusEvent): Promise<void> {
    const cancelled = await this.deps.pending.cancel(ref);
    for (const job of cancelled) {
      const by =
        event.intent === 'failed-start'
          ? `by a start through the API that failed (${event.startFailure?.operationId ?? 'operation'} at ${event.startFailure?.at ?? event.timestamp})`
          : `by a requested transition (${event.action ?? 'status'} → ${event.to} at ${event.timestamp})`;
      await this.deps.gate.endStandBack(job.rule, ref, job.correlationId);
      await Trail.ofJob(this.deps.audit, ref, job).superseded(job, by);
    }
  }

  /**
   * A rename is an operator's decision: the delayed actions queued under the old name are removed
   * (superseded, audited), and the crash-loop budget and quarantine go with the instance to its
   * new name.
   */
  private async renamed(from: InstanceRef, to: InstanceRef, eventId: string): Promise<void> {
    const cancelled = await this.deps.pending.cancel(from);
    for (const job of cancelled) {
      await this.deps.gate.endStandBack(job.rule, from, job.correlationId);
      const why = `: ${from.instance} was renamed to ${to.instance} (an operator's decision)`;
      await Trail.ofJob(this.deps.audit, from, job).superseded(job, why);
    }
    const { keys } = this.deps;
    const moved = await new CrashLoopBudget(this.deps.redis).move(
      { restarts: keys.restarts(from), quarantine: keys.quarantine(from) },
      { restarts: keys.restarts(to), quarantine: keys.quarantine(to) },
    );
    if (moved)
      await new Trail(this.deps.audit, { correlationId: eventId, target: to.target, instance: to.instance, rule: 'crash-loop-budget' }).decision(
        `the crash-loop history${moved === 'quarantined' ? ' and quarantine' : ''} of ${from.instance} moved with it to ${to.instance} (renamed)`,
        { matched: true },
        `renamed-budget:${eventId}`,
      );
  }

  /** Runs a matched decision through the gate (silences, cooldown, crash-loop budget) and queues its actions. */
  private async dispatch(
    d: Extract<Decision, { matched: true }>,
    event: CanonicalEvent,
    ref: InstanceRef,
    instance: Instance | undefined,
  ): Promise<RuleResponse> {
    // The instance that had the incident: its jobs, budget and audit records are about it, not its name.
    const identity = identityOf(instance);
    const base = { correlationId: event.id, target: event.target, instance: ref.instance, rule: d.rule, uuid: identity.uuid };
    const trail = new Trail(this.deps.audit, base);
    const verdict = d.dryRun ? ({ admitted: true, delayMs: 0 } as const) : await this.deps.gate.admit(d.definition, event, ref, instance);
    this.deps.metrics?.ruleDecisions.inc({ rule: d.rule, decision: verdict.admitted ? 'matched' : 'suppressed' });
    if (!verdict.admitted) {
      await trail.decision(verdict.summary, { matched: true, suppressed: true });
      if (verdict.alert) {
        // Audited in the trail of the instance whose event it was, also when the alert is about its member (a storm).
        const alert = {
          kind: verdict.alertKind ?? crashLoopKind,
          severity: 'critical',
          summary: verdict.alert,
          target: event.target,
          project: event.project,
          instance: verdict.alertSubject ?? ref.instance,
          ...(event.location ? { member: event.location } : {}),
          correlationId: event.id,
        } as const;
        await this.alerts.raise(alert, { once: `gate-alert:${event.id}:${d.rule}`, record: base });
      }
      return { rule: d.rule, result: 'suppressed', summary: verdict.summary, actions: [] };
    }
    await trail.decision(`${d.summary}${'note' in verdict && verdict.note ? `; ${verdict.note}` : ''}`, { matched: true });
    const incidentAt = Date.parse(event.timestamp);
    const jobs = d.actions.map((a, i) => {
      const data: ActionJob = {
        rule: d.rule,
        action: a.action,
        params: a.params ?? {},
        target: ref.target,
        project: ref.project,
        instance: ref.instance,
        correlationId: event.id,
        incidentAt: Number.isNaN(incidentAt) ? Date.now() : incidentAt,
        ...(identity.uuid || identity.createdAt ? { identity } : {}),
        event,
        origin: 'rule',
        dryRun: d.dryRun,
        location: event.location,
        ...(event.kind === 'rule.event' ? { chain: event.chain } : {}),
        ...(a.onFailure?.length ? { onFailure: a.onFailure.map((b) => ({ action: b.action, params: b.params ?? {} })) } : {}),
      };
      const opts = actionJobOptions({
        jobId: `${d.rule}:${event.id}:${i}`,
        attempts: this.deps.actionAttempts,
        delayMs: verdict.delayMs,
        priority: d.definition.priority,
      });
      return { name: a.action, data, opts };
    });
    // Indexed before they are queued: an operator's transition in between still finds them.
    for (const j of jobs)
      if (j.opts.delay) await this.deps.pending.add(ref, { jobId: j.opts.jobId, action: j.data.action, rule: d.rule, correlationId: event.id });
    await this.deps.actions.addBulk(jobs);
    for (const j of jobs)
      await trail.queued(
        { jobId: j.opts.jobId },
        `queued ${j.data.action}${d.dryRun ? ' (dry-run)' : ''}${j.opts.delay ? ` to run in ${j.opts.delay} ms` : ''}`,
      );
    return {
      rule: d.rule,
      result: d.dryRun ? 'dry-run' : 'queued',
      summary: d.summary,
      actions: jobs.map((j) => ({ action: j.data.action, delayMs: j.opts.delay ?? 0 })),
    };
  }

  private async readInstance(ref: InstanceRef): Promise<Instance | undefined> {
    try {
      return (await this.deps.client(ref.target).withProject(ref.project).getInstance(ref.instance)).value;
    } catch (err) {
      if (isApiStatus(err, 404)) return undefined;
      throw err;
    }
  }

  private async reject(p: Prepared, reason: string): Promise<void> {
    const { redis, keys, audit, logger } = this.deps;
    const target = p.item?.target ?? (typeof (p.raw as { target?: unknown })?.target === 'string' ? (p.raw as { target: string }).target : 'unknown');
    const raw = p.item?.kind === 'frame' ? p.item.raw : safeJson(p.raw);
    const receivedAt = p.item?.receivedAt ?? Date.now();
    const fresh = await keepRejected(
      redis,
      keys.rejected,
      audit,
      { target, reason, raw, hash: p.hash, receivedAt },
      { ...this.deps.rejected, maxRawBytes: this.deps.maxEventBytes },
    );
    logger.warn({ reason }, 'malformed event rejected and kept for inspection');
    if (p.lost && fresh)
      await this.alerts.raise({
        kind: 'event.frame-too-large' satisfies AlertKind,
        severity: 'warning',
        summary: reason,
        target,
        project: '',
        instance: `target:${target}`,
        correlationId: `rejected:${p.hash}`,
      });
  }
}

function isBatch(data: unknown): data is { kind: 'batch'; items: unknown[] } {
  return (
    typeof data === 'object' && data !== null && (data as { kind?: unknown }).kind === 'batch' && Array.isArray((data as { items?: unknown }).items)
  );
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch (err) {
    return `(not serialisable: ${(err as Error).message})`;
  }
}

function rawHash(v: unknown): string {
  return eventItemHash({ kind: 'frame', target: 'invalid', raw: safeJson(v), receivedAt: 0 });
}

/** Events of one instance share a lane (kept in order); malformed items share one too. */
function groupKey(p: Prepared): string {
  const e = p.event;
  if (!e) return p.rejected !== undefined ? 'rejected' : 'ignored';
  const instance = 'instance' in e ? e.instance : e.kind === 'operation.status' ? e.instances[0] : undefined;
  if (instance !== undefined) return `${e.target}\u0000${e.project}\u0000${instance}`;
  return e.kind === 'operation.status' ? `op\u0000${e.operationId}` : `${e.kind}\u0000${e.id}`;
}

function describe(e: CanonicalEvent): string {
  if (e.kind === 'instance.status') {
    return `${e.instance}: ${e.from ?? '?'} → ${e.to} (${e.intent}${e.action ? `, ${e.action}` : ''}${e.synthetic ? ', seen by resync' : ''})`;
  }
  if (e.kind === 'lifecycle') return `${e.action} ${e.source}`;
  if (e.kind === 'rule.event')
    return `${e.instance}: follow-up event ${e.name} from rule ${e.rule} (hop ${e.chain.length}, after incident ${e.causedBy})`;
  if (e.kind === 'alert')
    return `${e.instance ?? '(no instance)'}: alert ${e.alertname} ${e.status} (from ${e.source}, fingerprint ${e.fingerprint}, since ${e.startsAt})`;
  if (e.kind === 'instance.health')
    return `${e.instance}: probe ${e.probe} ${e.previous} → ${e.health} after ${e.consecutive} ${e.check} check(s) in a row since ${e.since} (${e.output.slice(-200) || 'no output'})`;
  return `operation ${e.operationId} → ${e.to}`;
}
