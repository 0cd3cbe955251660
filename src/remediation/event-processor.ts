import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit-log.js';
import type { InstanceClient } from '../client/client.js';
import { isApiStatus } from '../client/api-error.js';
import type { Instance } from '../client/instance.js';
import { isOwnEcho, type SelfActions } from '../events/self-marks.js';
import type { Metrics } from '../metrics/metrics.js';
import type { KeySpace } from '../redis/key-space.js';
import type { ActionJob, EventItem, EventJob } from '../events/event-job.js';
import type { ActionGate } from './action-gate.js';
import type { Decision, RuleEngine } from '../rules/engine.js';
import type { StateTracker } from '../events/state-tracker.js';
import { StatusCode } from '../client/status-code.js';
import type { InstanceAlerts, RuleResponse } from '../notify/instance-alerts.js';
import type { CanonicalEvent } from '../events/canonical-event.js';
import type { EventArchive } from '../events/event-archive.js';
import { decodeFrame } from '../events/frame.js';
import { normalizeFrame } from '../events/normalize.js';
import { eventItemHash } from '../events/event-ingestor.js';

/** Everything the processor needs, wired by the worker. */
export interface EventProcessorDeps {
  redis: Redis;
  keys: KeySpace;
  client: (target: string) => InstanceClient;
  tracker: StateTracker;
  selfActions: SelfActions;
  audit: AuditLog;
  engine: RuleEngine;
  gate: ActionGate;
  actions: Queue;
  logger: Logger;
  /** Forwards an alert to the notification receivers, when notifications are configured. */
  raiseAlert?: (alert: { kind: string; severity: 'critical' | 'warning' | 'info'; summary: string; target: string; project: string; instance: string; correlationId: string }) => Promise<unknown>;
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
}

/** How long an event stays known as processed, so a duplicate or a redelivered batch skips it. */
const SEEN_TTL_MS = 10 * 60_000;

/** What became of one event job (returned for tests and metrics). */
export type ProcessResult = 'rejected' | 'ignored' | 'stale' | 'unchanged' | 'duplicate' | 'processed';
type Settled = 'stale' | 'unchanged' | 'duplicate' | 'processed' | 'corrected';

/** An event of a batch, decoded, waiting for its turn. */
type Prepared = { item: EventItem; hash: string; event?: CanonicalEvent; rejected?: string };

/**
 * Takes each event of a job of the events queue through the pipeline: validate the frame (a
 * malformed one is kept in the rejected stream with the reason), type it, settle its intent and
 * its place in the instance's history, audit it, let the rules decide, and queue their actions.
 *
 * A batch is split by instance: one instance's events are handled strictly in order, different
 * instances side by side, so a storm's Redis round trips overlap instead of adding up. An event
 * already processed (a duplicated frame, a batch redelivered after a crash) is skipped by its hash.
 */
export class EventProcessor {
  constructor(private readonly deps: EventProcessorDeps) {}

  /** Processes one job; answers what became of each of its events, in the job's order. */
  async process(job: EventJob): Promise<ProcessResult[]> {
    const items = job.kind === 'batch' ? job.items : [job];
    const { redis, keys } = this.deps;
    const results: ProcessResult[] = new Array(items.length);
    const hashes = items.map(eventItemHash);
    const seen = await redis.mget(hashes.map((h) => keys.seenEvent(h)));
    const groups = new Map<string, number[]>();
    const prepared: Prepared[] = [];
    const inBatch = new Set<string>();
    items.forEach((item, i) => {
      const hash = hashes[i]!;
      if (seen[i] !== null || inBatch.has(hash)) return void (results[i] = 'duplicate');
      inBatch.add(hash);
      const p = this.prepare(item, hash);
      prepared[i] = p;
      const key = groupKey(p);
      const group = groups.get(key);
      if (group) group.push(i);
      else groups.set(key, [i]);
    });
    const pending = [...groups.values()];
    const failures: unknown[] = [];
    // The "processed" marks are not waited for one by one: a mark lost with a dying worker only
    // means the event is processed again, which every step tolerates.
    const marks: Promise<unknown>[] = [];
    const lane = async () => {
      for (let group = pending.shift(); group; group = pending.shift()) {
        for (const i of group) {
          try {
            results[i] = await this.processOne(prepared[i]!);
            marks.push(redis.set(keys.seenEvent(prepared[i]!.hash), '1', 'PX', SEEN_TTL_MS));
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

  private prepare(item: EventItem, hash: string): Prepared {
    if (item.kind !== 'frame') return { item, hash, event: item.event };
    const decoded = decodeFrame(item.raw);
    if (!decoded.ok) return { item, hash, rejected: decoded.reason };
    return { item, hash, event: normalizeFrame(decoded.frame, item.target) };
  }

  private async processOne(p: Prepared): Promise<ProcessResult> {
    const result = await this.processEvent(p);
    const { metrics } = this.deps;
    // Lag from the daemon's time, for frames only (a resync's event is a read, not news arriving late).
    if (metrics && p.item.kind === 'frame' && p.event && result !== 'rejected' && result !== 'ignored') metrics.observeIngestLag(p.event.timestamp);
    return result;
  }

  private async processEvent(p: Prepared): Promise<ProcessResult> {
    const { audit, metrics } = this.deps;
    if (p.rejected !== undefined && p.item.kind === 'frame') {
      await this.reject(p.item, p.rejected);
      metrics?.events.inc({ kind: 'rejected' });
      return 'rejected';
    }
    const event = p.event;
    if (!event) {
      metrics?.events.inc({ kind: 'ignored' });
      return 'ignored';
    }
    metrics?.events.inc({ kind: event.kind });

    let settled: Settled = 'processed';
    if (event.kind === 'instance.status') {
      settled = await this.settleStatus(event);
      if (settled !== 'processed' && settled !== 'corrected') {
        await this.deps.archive?.append(event, settled);
        return settled;
      }
    }
    // An operation names its instances in resources; rules act on the first (state changes touch one).
    const instanceName = 'instance' in event ? event.instance : event.kind === 'operation.status' ? event.instances[0] : undefined;
    // The archive and the audit trail are independent writes: side by side, one round trip of waiting.
    await Promise.all([
      this.deps.archive?.append(event, settled),
      event.kind === 'operation.status'
        ? undefined
        : audit.append({ type: 'event', correlationId: event.id, target: event.target, instance: instanceName, summary: describe(event), event }),
      this.deps.gate.observe(event),
    ]);
    const responses: RuleResponse[] = [];
    if (!this.deps.engine.isRelevant(event)) return this.alert(event, responses);
    const instance = instanceName ? await this.readInstance(event.target, event.project, instanceName) : undefined;
    const decisions = await this.deps.engine.decide(event, instance);
    for (const d of decisions) {
      if (!d.matched || !instanceName) {
        metrics?.ruleDecisions.inc({ rule: d.rule, decision: d.matched ? 'matched' : 'skipped' });
        await audit.append({ type: 'decision', correlationId: event.id, target: event.target, instance: instanceName, rule: d.rule, summary: d.summary, matched: d.matched });
        responses.push({ rule: d.rule, result: 'skipped', summary: d.summary, actions: [] });
        continue;
      }
      responses.push(await this.dispatch(d, event, instanceName, instance));
    }
    return this.alert(event, responses);
  }

  /** Lets the instance alerts see the event and what the rules did about it (after the rules, so the alert can say). */
  private async alert(event: CanonicalEvent, responses: RuleResponse[]): Promise<'processed'> {
    await this.deps.instanceAlerts?.observe(event, responses);
    return 'processed';
  }

  /** Runs a matched decision through the gate (silences, cooldown, crash-loop budget) and queues its actions. */
  private async dispatch(d: Extract<Decision, { matched: true }>, event: CanonicalEvent, instanceName: string, instance: Instance | undefined): Promise<RuleResponse> {
    const { audit } = this.deps;
    const base = { correlationId: event.id, target: event.target, instance: instanceName, rule: d.rule };
    const verdict = d.dryRun ? ({ admitted: true, delayMs: 0 } as const) : await this.deps.gate.admit(d.definition, event, instanceName, instance);
    this.deps.metrics?.ruleDecisions.inc({ rule: d.rule, decision: verdict.admitted ? 'matched' : 'suppressed' });
    if (!verdict.admitted) {
      await audit.append({ ...base, type: 'decision', summary: verdict.summary, matched: true, suppressed: true });
      if (verdict.alert) {
        await audit.append({ ...base, type: 'alert', summary: verdict.alert, severity: 'critical' });
        await this.deps.raiseAlert?.({ kind: verdict.alertKind ?? 'crash-loop', severity: 'critical', summary: verdict.alert, target: event.target, project: event.project, instance: verdict.alertSubject ?? instanceName, correlationId: event.id });
      }
      return { rule: d.rule, result: 'suppressed', summary: verdict.summary, actions: [] };
    }
    await audit.append({ ...base, type: 'decision', summary: `${d.summary}${'note' in verdict && verdict.note ? `; ${verdict.note}` : ''}`, matched: true });
    const jobs = d.actions.map((a, i) => {
      const data: ActionJob = { rule: d.rule, action: a.action, params: a.params ?? {}, target: event.target, project: event.project, instance: instanceName, correlationId: event.id, dryRun: d.dryRun, location: event.location, ...(event.kind === 'rule.event' ? { chain: event.chain } : {}) };
      const opts = { jobId: `${d.rule}:${event.id}:${i}`, attempts: this.deps.actionAttempts ?? 5, delay: verdict.delayMs, ...(d.definition.priority ? { priority: d.definition.priority } : {}) };
      return { name: a.action, data, opts };
    });
    await this.deps.actions.addBulk(jobs);
    for (const j of jobs) {
      await audit.append({ ...base, type: 'action', summary: `queued ${j.data.action}${d.dryRun ? ' (dry-run)' : ''}${j.opts.delay ? ` to run in ${j.opts.delay} ms` : ''}`, jobId: j.opts.jobId });
    }
    return { rule: d.rule, result: d.dryRun ? 'dry-run' : 'queued', summary: d.summary, actions: jobs.map((j) => ({ action: j.data.action, delayMs: j.opts.delay })) };
  }

  /**
   * Fills in `from`, recognises our own echoes, and drops news older than what is known (events
   * arrive out of order), redeliveries, and synthetic events that change nothing. An event older
   * than the known state that disagrees with it is checked against a read of the instance: if the
   * read agrees with the event, the tracker was wrong and the event is published, corrected.
   */
  private async settleStatus(event: Extract<CanonicalEvent, { kind: 'instance.status' }>): Promise<Settled> {
    const { tracker, selfActions, audit } = this.deps;
    if (!event.synthetic && event.intent !== 'unknown') {
      const mark = await selfActions.get(event.target, event.instance);
      if (isOwnEcho(mark, event)) event.intent = 'self';
    }
    const origin = { source: event.synthetic ? ('read' as const) : ('event' as const), eventId: event.id };
    const { applied, previous } = await tracker.update(event.target, event.project, event.instance, event.to, Date.parse(event.timestamp), origin);
    if (!applied) {
      if (previous && previous.status !== event.to && !event.synthetic) return this.confirmStale(event, previous.status);
      // A resync's read that the stream has already overtaken is routine, not news: archived as stale, not audited.
      if (event.synthetic) return 'stale';
      await audit.append({ type: 'event', correlationId: event.id, target: event.target, instance: event.instance, summary: `stale: ${event.action ?? 'status'} at ${event.timestamp} is older than the known state; ignored`, event });
      return 'stale';
    }
    if (previous?.eventId === event.id) return 'duplicate';
    if (previous) event.from = previous.status;
    if (event.synthetic && previous?.status === event.to) return 'unchanged';
    // The stream's own report of a change a resync already published (it came after the grace period).
    if (!event.synthetic && previous?.source === 'read' && previous.status === event.to && event.action !== 'instance-restarted') return 'unchanged';
    // First sight of an instance (start-up resync): a baseline, not a transition, unless it is in Error.
    if (event.synthetic && !previous && event.to !== StatusCode.Error) return 'unchanged';
    return 'processed';
  }

  /**
   * A late event that contradicts the tracked status: the read decides. Only when the instance
   * really is in the event's status (the tracker missed the change) is the event published, with
   * the read's time; otherwise it is old news.
   */
  private async confirmStale(event: Extract<CanonicalEvent, { kind: 'instance.status' }>, tracked: number): Promise<Settled> {
    const { tracker, audit } = this.deps;
    const inst = await this.readInstance(event.target, event.project, event.instance);
    if (!inst || inst.status_code !== event.to) {
      await audit.append({ type: 'event', correlationId: event.id, target: event.target, instance: event.instance, summary: `stale: ${event.action ?? 'status'} at ${event.timestamp} is older than the known state (confirmed by a read); ignored`, event });
      return 'stale';
    }
    const { applied } = await tracker.update(event.target, event.project, event.instance, inst.status_code, Date.now(), { source: 'read', eventId: event.id });
    if (!applied) return 'stale';
    event.from = tracked;
    return 'corrected';
  }

  private async readInstance(target: string, project: string, name: string): Promise<Instance | undefined> {
    try {
      return (await this.deps.client(target).withProject(project).getInstance(name)).value;
    } catch (err) {
      if (isApiStatus(err, 404)) return undefined;
      throw err;
    }
  }

  private async reject(job: Extract<EventItem, { kind: 'frame' }>, reason: string): Promise<void> {
    const { redis, keys, audit, logger } = this.deps;
    await redis.xadd(keys.rejected, 'MAXLEN', '~', '100000', '*', 'target', job.target, 'reason', reason, 'raw', job.raw);
    await audit.append({ type: 'rejected', correlationId: `rejected:${job.receivedAt}`, target: job.target, summary: `malformed event frame rejected: ${reason}` });
    logger.warn({ reason }, 'malformed event frame rejected and kept for inspection');
  }
}

/** Events of one instance share a lane (kept in order); malformed frames share one too. */
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
  if (e.kind === 'rule.event') return `${e.instance}: follow-up event ${e.name} from rule ${e.rule} (hop ${e.chain.length}, after incident ${e.causedBy})`;
  return `operation ${e.operationId} → ${e.to}`;
}
