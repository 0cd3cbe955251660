import type { Alerts } from '../../alerts/alerts.js';
import type { AuditLog } from '../../audit/audit-log.js';
import type { Instance } from '../../client/instance.js';
import { StatusCode } from '../../client/status-code.js';
import type { CanonicalEvent, InstanceStatusEvent } from '../../events/canonical-event.js';
import type { StartFailures } from '../../events/intent.js';
import type { RedisConnection } from '../../redis/connect.js';
import type { InstanceRef, KeySpace } from '../../redis/key-space.js';
import type { ActionGate } from './action-gate.js';
import { endIncidentsOfGone } from './contradicted-stop.js';
import { CrashLoopBudget } from '../crash-loop-budget.js';
import type { OperatorRequests } from '../operator-requests.js';
import type { OwnOperations } from '../../events/own-operations.js';
import { startedSince, type StateTracker } from '../../events/state-tracker.js';
import type { PendingActions } from '../pending-actions.js';
import type { RenamedAfterCrash } from './renamed-after-crash.js';
import { Trail } from '../trail.js';

/** What the lifecycle of an instance is kept with. */
export interface InstanceLifecycleDeps {
  redis: RedisConnection;
  keys: KeySpace;
  audit: AuditLog;
  gate: Pick<ActionGate, 'endStandBack'>;
  pending: PendingActions;
  ownOperations: OwnOperations;
  alerts: Pick<Alerts, 'resolveFiring'>;
  startFailures: StartFailures;
  operatorRequests: OperatorRequests;
  tracker: Pick<StateTracker, 'move' | 'get' | 'update' | 'recordIdentity'>;
  renames: RenamedAfterCrash;
  /** The instance as the daemon has it now; undefined when it answers 404. */
  readInstance: (ref: InstanceRef) => Promise<Instance | undefined>;
}

/**
 * What an event says about an instance beyond its status, kept before the rules decide: an
 * operator's transition supersedes Reflex's delayed actions; an operation is remembered as a start
 * that failed or an operator's request; a rename carries the budget and incidents to the new name;
 * a name the daemon no longer has ends its incidents.
 */
export class InstanceLifecycle {
  constructor(private readonly deps: InstanceLifecycleDeps) {}

  async observe(event: CanonicalEvent, ref: InstanceRef): Promise<void> {
    const { deps } = this;
    // A start through the API that failed is an operator's start too.
    if (event.kind === 'instance.status' && (event.intent === 'requested' || event.intent === 'failed-start')) await this.cancelPending(ref, event);
    if (event.kind === 'operation.status')
      await Promise.all([
        deps.startFailures.observe(ref, event, deps.ownOperations),
        deps.operatorRequests.observe(ref, event, async () => ((await deps.ownOperations.isOwn(ref, event.operationId)) ? [event.operationId] : [])),
      ]);
    // Its identity, kept for a resync to know it by should a rename of it be lost in a gap.
    if (event.kind === 'lifecycle' && (event.action === 'instance-created' || event.action === 'instance-renamed')) await this.keepIdentity(ref);
    if (event.kind === 'lifecycle' && event.action === 'instance-renamed' && typeof event.context?.old_name === 'string') {
      const from = { ...ref, instance: event.context.old_name };
      await this.renamed(from, ref, event.id);
      await deps.renames.renamed(from, ref, event);
      // What is known of it and what the operator asked of it go with it (once the crash before the
      // rename was judged on the old name's record): an operator's stop stays their last word.
      await Promise.all([deps.tracker.move(from, ref), deps.operatorRequests.move(from, ref)]);
      await this.renamedStopped(ref, event);
      // The alerts of the old name end when the daemon says it is gone: no Running will come under it.
      if (!(await deps.readInstance(from))) await endIncidentsOfGone(deps.alerts, from);
    }
    if (event.kind === 'lifecycle' && event.action === 'instance-deleted' && !(await deps.readInstance(ref)))
      await endIncidentsOfGone(deps.alerts, ref);
  }

  private async keepIdentity(ref: InstanceRef): Promise<void> {
    const uuid = (await this.deps.readInstance(ref))?.config['volatile.uuid'];
    if (uuid) await this.deps.tracker.recordIdentity(ref, uuid);
  }

  /**
   * Both daemons rename only a stopped instance: when what was known of it still says Running, its
   * stop's event is late (a retried job, a full Redis) or lost. The daemon's word, Stopped, is
   * recorded at the rename, an operator's hand on it, as their last request: a shutdown of the new
   * name after it (forged, or the late one) is no crash to heal. A crash before the rename is
   * alerted when its late event comes ({@link RenamedAfterCrash.stopOfGone}).
   */
  private async renamedStopped(ref: InstanceRef, event: CanonicalEvent): Promise<void> {
    const known = await this.deps.tracker.get(ref);
    if (known?.status !== StatusCode.Running) return;
    const now = await this.deps.readInstance(ref);
    if (now?.status_code !== StatusCode.Stopped) return;
    // Started again since what was known (a rename found late, by a resync or a late job: the
    // operator stopped, renamed and started it, and it went down again): the stop read now is not
    // the one the rename needed; the status event of it judges it (a crash, or of unknown cause).
    if (startedSince(known, now.last_used_at)) return;
    const at = Date.parse(event.timestamp);
    if (!(at >= known.at)) return;
    await this.deps.tracker.update(ref, StatusCode.Stopped, at, {
      source: 'read',
      eventId: `${event.id}:renamed-stopped`,
      intent: 'requested',
      requested: true,
      ...(now.last_used_at ? { lastUsedAt: now.last_used_at } : {}),
    });
    // Whose stop it was is unknown until its event comes, if ever (LXD sends none for an instance
    // renamed in its crash's stop hook): unless the operator's stop is on record, that is alerted.
    const stopAsked = (await this.deps.operatorRequests.list(ref)).some((r) => r.action === 'stop' && r.at >= known.at);
    if (!stopAsked) await this.deps.renames.unseenStop(ref, event.id);
  }

  /** An operator's transition (or failed start) supersedes every delayed action of Reflex on that instance. */
  private async cancelPending(ref: InstanceRef, event: InstanceStatusEvent): Promise<void> {
    for (const job of await this.deps.pending.cancel(ref)) {
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
    const { deps } = this;
    for (const job of await deps.pending.cancel(from)) {
      await deps.gate.endStandBack(job.rule, from, job.correlationId);
      await Trail.ofJob(deps.audit, from, job).superseded(job, `: ${from.instance} was renamed to ${to.instance} (an operator's decision)`);
    }
    const { keys } = deps;
    const moved = await new CrashLoopBudget(deps.redis).move(
      { restarts: keys.restarts(from), quarantine: keys.quarantine(from) },
      { restarts: keys.restarts(to), quarantine: keys.quarantine(to) },
    );
    if (!moved) return;
    const trail = new Trail(deps.audit, { correlationId: eventId, target: to.target, instance: to.instance, rule: 'crash-loop-budget' });
    const what = `the crash-loop history${moved === 'quarantined' ? ' and quarantine' : ''} of ${from.instance}`;
    await trail.decision(`${what} moved with it to ${to.instance} (renamed)`, { matched: true }, `renamed-budget:${eventId}`);
  }
}
