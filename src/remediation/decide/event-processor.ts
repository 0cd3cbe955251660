import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { RedisConnection } from '../../redis/connect.js';
import { getMany, setMany } from '../../redis/get-many.js';
import { GroupCommit } from '../../redis/group-commit.js';
import { isProbeEcho, type OwnOperations } from '../../events/own-operations.js';
import { Alerts } from '../../alerts/alerts.js';
import type { AlertKind } from '../../alerts/catalogue.js';
import type { AuditLog } from '../../audit/audit-log.js';
import type { InstanceClient } from '../../client/client.js';
import { isApiStatus } from '../../client/api-error.js';
import type { Instance } from '../../client/instance.js';
import type { CanonicalEvent, InstanceStatusEvent } from '../../events/canonical-event.js';
import type { EventArchive } from '../../events/event-archive.js';
import { StartFailures } from '../../events/intent.js';
import { keepRejected, type RejectedLimits } from '../../events/rejected-events.js';
import { instanceOfKey, type StateTracker, type TrackedStatus } from '../../events/state-tracker.js';
import { StatusSettler, type Settled } from '../../events/status-settler.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { InstanceAlerts, RuleResponse } from '../../notify/instance-alerts.js';
import type { InstanceRef, KeySpace } from '../../redis/key-space.js';
import type { RuleEngine } from '../../rules/engine.js';
import type { ActionGate } from './action-gate.js';
import { recordContradictedStop } from './contradicted-stop.js';
import { describeEvent, itemsOf, laneOf, prepare, rawText, type Prepared } from './event-batch.js';
import { InstanceLifecycle } from './instance-lifecycle.js';
import { decideAndDispatch } from './rule-dispatch.js';
import type { PendingActions } from '../pending-actions.js';
import { OperatorRequests } from '../operator-requests.js';
import { RenamedAfterCrash } from './renamed-after-crash.js';
import { countsAsCrash, StopConfirmation } from '../stop-confirmation.js';
import { missedRenameEvent } from '../../events/resync.js';
import { Trail } from '../trail.js';

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
  private readonly settler: StatusSettler;
  private readonly stops: StopConfirmation;
  private readonly renames: RenamedAfterCrash;
  private readonly lifecycle: InstanceLifecycle;
  private readonly alerts: Pick<Alerts, 'raise' | 'resolveFiring'>;

  constructor(private readonly deps: EventProcessorDeps) {
    const alerts = deps.alerts ?? new Alerts({ audit: deps.audit });
    const readInstance = (ref: InstanceRef) => this.readInstance(ref);
    const startFailures = new StartFailures(deps.redis, deps.keys);
    this.alerts = alerts;
    this.settler = new StatusSettler({ ...deps, startFailures, readInstance });
    this.stops = new StopConfirmation({
      readInstance,
      knownBefore: async (ref, eventId) => {
        const entry = await deps.tracker.get(ref);
        return entry?.eventId === eventId ? entry.prev : undefined;
      },
      settleMs: deps.stopSettleMs,
    });
    this.renames = new RenamedAfterCrash({ ...deps, alerts, readInstance });
    const operatorRequests = new OperatorRequests(deps.redis, deps.keys);
    this.lifecycle = new InstanceLifecycle({ ...deps, alerts, startFailures, operatorRequests, renames: this.renames, readInstance });
    this.doneMarks = new GroupCommit<string, void>(async (keys) => {
      await setMany(deps.redis, keys, '1', DONE_TTL_MS);
      return [];
    });
  }

  /** Processes one job (a batch, or a single item); answers what became of each event, in order. */
  async process(data: unknown): Promise<ProcessResult[]> {
    const items = itemsOf(data);
    const { redis, keys } = this.deps;
    const results: ProcessResult[] = new Array(items.length);
    const prepared = items.map((raw) => prepare(raw, this.deps.clockToleranceMs));
    const done = await getMany(
      redis,
      prepared.map((p) => keys.eventDone(p.hash)),
    );
    const lanes = new Map<string, number[]>();
    const inBatch = new Set<string>();
    prepared.forEach((p, i) => {
      if (done[i] !== null || inBatch.has(p.hash)) return void (results[i] = 'duplicate');
      inBatch.add(p.hash);
      const key = laneOf(p);
      const lane = lanes.get(key);
      if (lane) lane.push(i);
      else lanes.set(key, [i]);
    });
    const pending = [...lanes.values()];
    const failures: unknown[] = [];
    const marks: Promise<unknown>[] = [];
    const worker = async () => {
      for (let lane = pending.shift(); lane; lane = pending.shift()) {
        for (const i of lane) {
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
    await Promise.all(Array.from({ length: Math.min(this.deps.parallelInstances ?? 32, pending.length) }, worker));
    await Promise.all(marks);
    if (failures.length) throw failures[0];
    return results;
  }

  private async processOne(p: Prepared): Promise<ProcessResult> {
    const result = await this.processEvent(p);
    const { metrics } = this.deps;
    // Lag from the daemon's time, for frames only (a resync's event is a read, not news arriving late).
    if (metrics && p.item?.kind === 'frame' && p.event && result !== 'rejected' && result !== 'ignored') metrics.observeIngestLag(p.event.timestamp);
    return result;
  }

  /**
   * A stop that would count as a crash, of a name Reflex never tracked, whose instance (by its
   * `volatile.uuid`) Reflex knows under a name the daemon no longer has: renamed, the rename's
   * event lost in a gap whose resync has not run yet. The rename is processed first, as its own
   * event, so what is known of the instance (an operator's stop) judges the stop. Answers the
   * tracker's entry it read when nothing was written to it since (none when it read none).
   */
  private async missedRename(event: InstanceStatusEvent): Promise<{ known: TrackedStatus | undefined } | undefined> {
    const { tracker } = this.deps;
    const ref = { target: event.target, project: event.project, instance: event.instance };
    if (!countsAsCrash(event)) return undefined;
    const tracked = await tracker.get(ref);
    if (tracked) return { known: tracked };
    const now = await this.readInstance(ref);
    const uuid = now?.config['volatile.uuid'];
    if (!now || !uuid) return { known: tracked };
    for (const [key, known] of await tracker.identities(event.target)) {
      const { project, instance: name } = instanceOfKey(key);
      if (known !== uuid || project !== event.project || name === event.instance) continue;
      const old = { ...ref, instance: name };
      if (!(await tracker.get(old)) || (await this.readInstance(old))) continue;
      const rename = missedRenameEvent(event.target, { name: event.instance, project: event.project, location: now.location }, name, event.timestamp);
      await this.processEvent(prepare({ kind: 'synthetic', target: event.target, event: rename, receivedAt: Date.now() }, undefined));
      // The rename moved what was known of the instance to this name: the entry read above is not it any more.
      return undefined;
    }
    return { known: tracked };
  }

  private async processEvent(p: Prepared): Promise<ProcessResult> {
    const { metrics } = this.deps;
    if (p.rejected !== undefined) {
      await this.reject(p, p.rejected);
      metrics?.events.inc({ kind: 'rejected' });
      return 'rejected';
    }
    const event = p.event;
    if (!event || (await this.isProbeEcho(event))) {
      metrics?.events.inc({ kind: 'ignored' });
      return 'ignored';
    }
    metrics?.events.inc({ kind: event.kind });
    if (p.futureTimestamp !== undefined) await this.futureTimestamp(event, p.futureTimestamp);

    let settled: Settled = 'processed';
    // The instance as read to confirm a stop: the rules decide on that read instead of reading again.
    let confirmed: { instance: Instance } | undefined;
    if (event.kind === 'instance.status') {
      // The tracker's entry missedRename reads for a crash serves the settler too, and the record of
      // Reflex's own operations the settler needs leaves beside it; neither does when a rename it
      // processed moved another instance's here.
      const ref = { target: event.target, project: event.project, instance: event.instance };
      const [read, own] = await Promise.all([
        this.missedRename(event),
        countsAsCrash(event) ? this.deps.ownOperations.readFor(ref, event) : undefined,
      ]);
      settled = await this.settler.settle(event, read, read && own);
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
    // Read once: a reload during this event's awaits must not give it half the old rules, half the new.
    const engine = typeof this.deps.engine === 'function' ? this.deps.engine() : this.deps.engine;
    const recorded = Promise.all([
      this.deps.archive?.append(event, settled),
      event.kind === 'operation.status' ? undefined : Trail.ofEvent(this.deps.audit, event, instanceName).event(event, describeEvent(event)),
    ]);
    // A confirmed crash is what rules act on: the silences its gate judges are read beside the archive and the audit.
    const gate = confirmed && engine.isRelevant(event) ? this.deps.gate.readingSilencesNow() : this.deps.gate;
    await recorded;
    if (ref) await this.lifecycle.observe(event, ref);

    let responses: RuleResponse[] = [];
    // A state change a resync read in the daemon's operation list is a record of a request (above), not news for rules.
    const listed = event.kind === 'operation.status' && event.synthetic;
    if (!listed && engine.isRelevant(event) && !(event.kind === 'lifecycle' && ref && (await this.deps.ownOperations.ownExec(ref, event)))) {
      const instance = confirmed ? confirmed.instance : ref ? await this.readInstance(ref) : undefined;
      // An alert does not say which cluster member runs the instance; the read does, and storm
      // control, scope.locations and the re-check's evacuation check key on it.
      if (event.kind === 'alert' && instance?.location) event.location = instance.location;
      responses = await decideAndDispatch({ ...this.deps, gate, alerts: this.alerts }, engine, event, ref, instance);
    }
    await this.deps.instanceAlerts?.observe(event, responses);
    return 'processed';
  }

  /** The daemon's announcement of a health probe's exec: Reflex's own probing, not news (events/own-operations.ts). */
  private async isProbeEcho(event: CanonicalEvent): Promise<boolean> {
    if (event.kind !== 'lifecycle' || event.action !== 'instance-exec' || event.instance === undefined) return false;
    const ref = { target: event.target, project: event.project, instance: event.instance };
    return isProbeEcho(this.deps.redis, this.deps.keys, ref, event.context);
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

  /** The instance as the daemon has it now; undefined on a 404. */
  async readInstance(ref: InstanceRef): Promise<Instance | undefined> {
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
    const receivedAt = p.item?.receivedAt ?? Date.now();
    const fresh = await keepRejected(
      redis,
      keys.rejected,
      audit,
      { target, reason, raw: rawText(p), hash: p.hash, receivedAt },
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
