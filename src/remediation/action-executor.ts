import { UnrecoverableError, type Queue } from 'bullmq';
import type { RedisConnection } from '../redis/connect.js';
import type { Logger } from 'pino';
import type { ActionContext, ActionOutcome } from '../actions/action.js';
import { runAction } from '../actions/define-action.js';
import { builtinActions, type ActionRegistry } from '../actions/registry.js';
import { actionFailedKind, Alerts, stormKind } from '../alerts/alerts.js';
import type { AuditLog } from '../audit/audit-log.js';
import { isApiStatus } from '../client/api-error.js';
import type { InstanceClient } from '../client/client.js';
import type { OperationObject } from '../client/envelope.js';
import { ReflexError } from '../errors/reflex-error.js';
import type { EventJob } from '../events/event-job.js';
import { OWN_OPERATION_MAX_MS } from '../events/intent.js';
import type { OwnOperations } from '../events/own-operations.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Notifier } from '../notify/notifier.js';
import type { InstanceRef, KeySpace } from '../redis/key-space.js';
import type { HeldLock, TokenLock } from '../redis/token-lock.js';
import { actingClient } from './act/acting-client.js';
import { actionJobOptions, type ActionJob } from '../actions/action-job.js';
import type { PendingActions } from './pending-actions.js';
import { OthersOperations } from './others-operations.js';
import type { Recheck } from './recheck.js';
import { isFinalFailure } from '../errors/retry-policy.js';
import { describeStorm, heldByStormSummary, isFailure, type StormControl, type StormScope } from './storm-control.js';

/** An action that failed for good and whose rule's `onFailure` branch was queued instead of a give-up. */
export interface BranchedOutcome {
  result: 'failed';
  summary: string;
  /** Job ids of the branch's actions. */
  branched: string[];
}

/** What running a job came to: an action's outcome, or its failure handed to its `onFailure` branch. */
export type ExecutedOutcome = ActionOutcome | BranchedOutcome;

/** Returned instead of an outcome when another action holds the instance: the caller re-queues the job shortly. */
export const instanceBusy = Symbol('instance-busy');

/** What the executor needs. */
export interface ActionExecutorDeps {
  client: (target: string) => InstanceClient;
  audit: AuditLog;
  ownOperations: OwnOperations;
  /** The instance lock (short-lived: a dead holder's lock lapses within seconds). */
  locks: TokenLock;
  /** Decides again, just before the call, whether the job may still act. */
  recheck: Recheck;
  pending: PendingActions;
  keys: KeySpace;
  redis: RedisConnection;
  logger: Logger;
  /** Counts outcomes and retries; none: not counted. */
  metrics?: Metrics;
  /** Where the `emit` action publishes follow-up events; none: `emit` fails. */
  events?: Queue;
  /** The `notify` action's notifier; none: `notify` fails. */
  notifier?: Pick<Notifier, 'notify' | 'amend'>;
  /** Storm control: holds a rule's actions on a member in a storm, and counts its remediations; none: off. */
  storms?: StormControl;
  /** The actions of the rules loaded now (built-ins and the rules folder's own; swapped by a reload). Default: the built-ins. */
  actions?: () => ActionRegistry;
  /** Where the jobs of an `onFailure` branch are queued; none: an action with a branch gives up like any other. */
  actionsQueue?: Queue;
  /**
   * Raises the alert of an action that gave up (or of the storm it tripped), and resolves an
   * `action-failed` alert when a later action on its instance succeeds. Default: audited only.
   */
  alerts?: Pick<Alerts, 'raise' | 'resolveFiring'>;
}

/**
 * The one way Reflex acts on an instance, for rules, schedules and operators alike: take the
 * instance's lock (not for actions that only tell or publish), resume an operation a killed worker
 * left behind, re-check that the job may still act, then send each call marked as Reflex's own,
 * audited with the path really sent, and wait for its operation within one bound. Whether a
 * failure is worth a retry is the retry policy's call, on error codes.
 */
export class ActionExecutor {
  private readonly others: OthersOperations;
  private readonly alerts: Pick<Alerts, 'raise' | 'resolveFiring'>;

  constructor(private readonly deps: ActionExecutorDeps) {
    this.others = new OthersOperations(deps.ownOperations);
    this.alerts = deps.alerts ?? new Alerts({ audit: deps.audit });
  }

  private actions(): ActionRegistry {
    return this.deps.actions?.() ?? builtinActions;
  }

  /**
   * An action job failed for good (a 4xx, retries exhausted, or its worker killed more often than
   * the queue allows): it now waits in the dead-letter queue. Records the give-up and raises one
   * alert, so it is neither silent nor lost (`reflex dlq list|retry`).
   */
  async gaveUp(job: ActionJob, jobId: string, reason: string, attempts: number): Promise<void> {
    const { audit } = this.deps;
    // A worker that died too often while running it: its branch runs all the same.
    if (job.onFailure?.length && this.deps.actionsQueue) {
      await this.deps.pending.remove(refOf(job), jobId);
      await this.branch(job, jobId, reason);
      return;
    }
    const base = { correlationId: job.correlationId, instance: job.instance, target: job.target, rule: job.rule };
    const summary = `${job.action} on ${job.instance} gave up after ${attempts} attempt(s): ${reason}; job ${jobId} is in the dead-letter queue (reflex dlq list, reflex dlq retry)`;
    await this.deps.pending.remove(refOf(job), jobId);
    const fresh = await audit.append({ ...base, type: 'give-up', summary, jobId, attempts }, { once: `give-up:${jobId}:${attempts}` });
    if (!fresh) return;
    await this.alerts.raise(
      {
        kind: actionFailedKind,
        severity: 'critical',
        summary,
        target: job.target,
        project: job.project,
        instance: job.instance,
        ...(job.event?.location ? { member: job.event.location } : {}),
        correlationId: job.correlationId,
      },
      { record: { rule: job.rule } },
    );
    await this.remediationFailed(job, jobId);
  }

  /** A remediation that gave up counts towards its rule's storm on the member; the one that trips it raises the storm's alert. */
  private async remediationFailed(job: ActionJob, jobId: string): Promise<void> {
    const scope = stormScope(job);
    const storms = this.deps.storms;
    if (!storms || !scope) return;
    const s = await storms.failed(scope, `${job.rule}|give-up:${jobId}`);
    if (!s.storm || !s.alert) return;
    this.deps.metrics?.storms.inc();
    const { alert } = describeStorm(s, scope, storms);
    await this.alerts.raise(
      {
        kind: stormKind,
        severity: 'critical',
        summary: alert,
        target: job.target,
        project: job.project,
        instance: `member:${scope.location}`,
        member: scope.location,
        correlationId: job.correlationId,
      },
      { once: `storm-alert:${jobId}`, record: { rule: job.rule } },
    );
  }

  /**
   * Executes the job; throws to let BullMQ retry, or UnrecoverableError when a retry cannot help.
   * Returns {@link instanceBusy} when another action holds the instance.
   */
  async execute(job: ActionJob, jobId: string, attempt: number, maxAttempts: number): Promise<ExecutedOutcome | typeof instanceBusy> {
    let action;
    try {
      action = this.actions().get(job.action);
    } catch (err) {
      // A reload removed the action a rule's job was queued with (the rule with it, or the rule now
      // does without it): the operator changed this remediation, as when only the rule goes (the
      // re-check's verdict), so skip it, not give up.
      if (job.origin === 'rule') {
        const ruleStays = this.deps.recheck.ruleLoaded(job.rule);
        const summary = ruleStays
          ? `action ${job.action} is not defined any more (a reload removed it; rule ${job.rule} stays)`
          : `rule ${job.rule} is not loaded any more (nor its action ${job.action})`;
        await this.deps.audit.append(
          {
            correlationId: job.correlationId,
            instance: job.instance,
            target: job.target,
            rule: job.rule,
            type: 'outcome',
            summary: `${job.action} skipped at the moment of acting: ${summary}`,
            result: 'skipped',
            recheck: ruleStays ? 'action-unloaded' : 'rule-unloaded',
            jobId,
          },
          { once: `recheck:${jobId}` },
        );
        return this.finish(refOf(job), jobId, { result: 'skipped', summary });
      }
      throw new UnrecoverableError(`${(err as ReflexError).code}: ${(err as Error).message}`);
    }
    const touches = action.touchesInstance !== false;
    const held = touches ? await this.deps.locks.tryAcquire(this.deps.keys.instanceLock(refOf(job))) : undefined;
    if (touches && !held) return instanceBusy;
    try {
      const outcome = await this.executeLocked(job, jobId, attempt, maxAttempts, held);
      this.deps.metrics?.actions.inc({ action: job.action, outcome: outcome.result });
      return outcome;
    } catch (err) {
      const final = isFinalFailure({ attemptsMade: attempt, opts: { attempts: maxAttempts } }, err);
      this.deps.metrics?.actions.inc({ action: job.action, outcome: final ? 'failed' : 'retrying' });
      if (!final) this.deps.metrics?.actionRetries.inc({ action: job.action });
      // BullMQ retries whatever is not marked unrecoverable: a final failure from outside the action's own catch is marked here.
      if (final && (err as Error).name !== 'UnrecoverableError')
        throw new UnrecoverableError(`${(err as { code?: string }).code ?? 'UNKNOWN'}: ${(err as Error).message}`);
      throw err;
    } finally {
      await held?.release();
    }
  }

  private async executeLocked(
    job: ActionJob,
    jobId: string,
    attempt: number,
    maxAttempts: number,
    held: HeldLock | undefined,
  ): Promise<ExecutedOutcome> {
    const { audit, logger, redis, keys, events } = this.deps;
    const ref = refOf(job);
    const client = this.deps.client(job.target).withProject(job.project);
    const base = {
      correlationId: job.correlationId,
      instance: job.instance,
      target: job.target,
      rule: job.rule,
      ...(job.identity?.uuid ? { uuid: job.identity.uuid } : {}),
    };
    const action = this.actions().get(job.action);
    const resumed = await this.resume(job, jobId, client, base);
    if (resumed) return this.finish(ref, jobId, resumed);
    let observed: ActionContext['observed'];
    if (held) {
      // The re-check's reads, storm control and the listing of the server's operations are
      // independent: read them at once, so a mass failure pays one round of reads per action.
      const listing = this.others.recent(client, `${job.target}\u0000${job.project}`).catch(() => undefined);
      const [verdict, storm] = await Promise.all([this.deps.recheck.check(job), this.heldByStorm(job)]);
      if (!verdict.proceed) {
        const outcome: ActionOutcome = { result: 'skipped', summary: verdict.summary };
        await audit.append(
          {
            ...base,
            type: 'outcome',
            summary: `${job.action} skipped at the moment of acting: ${verdict.summary}`,
            result: 'skipped',
            recheck: verdict.check,
            jobId,
          },
          { once: `recheck:${jobId}` },
        );
        logger.info(
          { instance: job.instance, project: job.project, rule: job.rule, action: job.action, check: verdict.check },
          `${job.action} skipped: ${verdict.summary}`,
        );
        return this.finish(ref, jobId, outcome);
      }
      if (storm) {
        const outcome: ActionOutcome = { result: 'skipped', summary: storm };
        await audit.append(
          { ...base, type: 'outcome', summary: `${job.action} held at the moment of acting: ${storm}`, result: 'skipped', recheck: 'storm', jobId },
          { once: `recheck:${jobId}` },
        );
        return this.finish(ref, jobId, outcome);
      }
      const others = await this.others.settle(client, job, await listing, verdict.instance);
      const operators = others.superseded;
      // Read under the lock a moment ago, and nobody else's operation on it since: the action may
      // act on that reading instead of reading the instance once more.
      if (!others.waited) observed = verdict.instance;
      if (operators) {
        const outcome: ActionOutcome = { result: 'skipped', summary: operators };
        await audit.append(
          {
            ...base,
            type: 'outcome',
            summary: `${job.action} skipped at the moment of acting: ${operators}`,
            result: 'skipped',
            recheck: 'superseded',
            jobId,
          },
          { once: `recheck:${jobId}` },
        );
        return this.finish(ref, jobId, outcome);
      }
    }
    const acting = actingClient(this.deps, { job, jobId, attempt, held }, client);
    const ctx: ActionContext<unknown> = {
      client: acting.client,
      clientNoting: acting.noting,
      instance: job.instance,
      params: job.params,
      dryRun: job.dryRun,
      ...(observed ? { observed } : {}),
      audit: (r) => audit.append({ ...base, ...r }).then(() => undefined),
      job: {
        rule: job.rule,
        correlationId: job.correlationId,
        target: job.target,
        project: job.project,
        location: job.location ?? 'none',
        chain: job.chain ?? [],
        ...(job.event ? { event: job.event } : {}),
      },
      ...(events
        ? {
            publish: async (event, id) =>
              void (await events.add(event.kind, { kind: 'synthetic', target: event.target, event, receivedAt: Date.now() } satisfies EventJob, {
                jobId: id,
              })),
          }
        : {}),
      ...(this.deps.notifier ? { notifier: this.deps.notifier } : {}),
    };
    try {
      // Params were checked when the rules loaded; runAction checks them again, for a job queued before the rules changed.
      const outcome = await runAction(action, ctx).catch((err: unknown) => {
        const dry = acting.dryRunOutcome(err);
        if (dry) return dry;
        throw err;
      });
      await redis.del(keys.inflight(jobId));
      const scope = stormScope(job);
      if (scope && outcome.result === 'done' && !job.dryRun) await this.deps.storms?.remediated(scope);
      await audit.append({
        ...base,
        type: 'outcome',
        summary: `${job.action}: ${outcome.summary}`,
        result: outcome.result,
        operationId: outcome.operationId,
        attempt,
      });
      logger.info({ instance: job.instance, rule: job.rule, action: job.action, result: outcome.result }, outcome.summary);
      if (held && outcome.result === 'done' && !job.dryRun) await this.actionSucceeded(job, outcome);
      return this.finish(ref, jobId, outcome);
    } catch (err) {
      await redis.del(keys.inflight(jobId));
      const code = (err as { code?: string }).code ?? 'UNKNOWN';
      // Deleted or renamed while the job waited: nothing left to act on, and nobody to page.
      if (isApiStatus(err, 404)) {
        const outcome: ActionOutcome = { result: 'skipped', summary: `${job.instance} is gone (deleted or renamed): ${(err as Error).message}` };
        await audit.append({ ...base, type: 'outcome', summary: `${job.action} skipped: ${outcome.summary}`, result: 'skipped', code, attempt });
        return this.finish(ref, jobId, outcome);
      }
      const retry = !isFinalFailure({ attemptsMade: attempt, opts: { attempts: maxAttempts } }, err);
      const branch = !retry && job.onFailure?.length && this.deps.actionsQueue ? job.onFailure : undefined;
      await audit.append({
        ...base,
        type: 'outcome',
        summary: `${job.action} failed (${code}): ${(err as Error).message}${retry ? `; retrying (attempt ${attempt} of ${maxAttempts})` : branch ? `; running its onFailure branch (${branch.map((b) => b.action).join(', ')})` : '; giving up'}`,
        result: retry ? 'retrying' : 'failed',
        code,
        attempt,
      });
      logger.warn({ instance: job.instance, action: job.action, err, retry }, 'action failed');
      if (branch) return this.finish(ref, jobId, await this.branch(job, jobId, `${code}: ${(err as Error).message}`, maxAttempts));
      if (!retry) throw new UnrecoverableError(`${code}: ${(err as Error).message}`);
      throw err;
    }
  }

  /**
   * An action on the instance succeeded: an earlier give-up's `action-failed` alert is over. Its
   * failure to resolve is logged, not thrown: the action did succeed.
   */
  private async actionSucceeded(job: ActionJob, outcome: ActionOutcome): Promise<void> {
    const summary = `a later ${job.action} on ${job.instance} succeeded: ${outcome.summary}`;
    await this.alerts
      .resolveFiring(actionFailedKind, refOf(job), { summary, outcome: 'remediated' })
      .catch((err: Error) => this.deps.logger.warn({ err, instance: job.instance }, 'action-failed alert not resolved'));
  }

  /** Why the job is held: its rule is in a storm on the instance's member (declared after the job was queued). */
  private async heldByStorm(job: ActionJob): Promise<string | undefined> {
    const scope = stormScope(job);
    if (!scope || !this.deps.storms || !(await this.deps.storms.holds(scope))) return undefined;
    return heldByStormSummary(scope);
  }

  /**
   * The job failed for good and its rule says what to do then: queue the branch's actions as jobs
   * of the same incident instead of giving up. Their ids derive from this job's (`<id>-f<j>`; BullMQ
   * refuses a fourth `:`), so a redelivered failure queues nothing twice; they run like any action.
   */
  private async branch(job: ActionJob, jobId: string, reason: string, attempts?: number): Promise<BranchedOutcome> {
    const { audit } = this.deps;
    const base = { correlationId: job.correlationId, instance: job.instance, target: job.target, rule: job.rule };
    const { onFailure: _branch, ...rest } = job;
    const jobs = (job.onFailure ?? []).map((b, j) => ({
      name: b.action,
      data: { ...rest, action: b.action, params: b.params, branchOf: jobId } satisfies ActionJob,
      opts: actionJobOptions({ jobId: `${jobId}-f${j}`, attempts }),
    }));
    await this.deps.actionsQueue!.addBulk(jobs);
    for (const j of jobs) {
      await audit.append(
        {
          ...base,
          type: 'action',
          summary: `queued ${j.data.action} (onFailure of ${job.action}, which failed: ${reason})${job.dryRun ? ' (dry-run)' : ''}`,
          jobId: j.opts.jobId,
          branchOf: jobId,
        },
        { once: `queued:${j.opts.jobId}` },
      );
    }
    this.deps.logger.info(
      { instance: job.instance, rule: job.rule, action: job.action, branch: jobs.map((j) => j.data.action) },
      `${job.action} failed; onFailure branch queued`,
    );
    return {
      result: 'failed',
      summary: `${job.action} failed (${reason}); onFailure branch queued: ${jobs.map((j) => j.data.action).join(', ')}`,
      branched: jobs.map((j) => j.opts.jobId),
    };
  }

  private async finish<T extends ExecutedOutcome>(ref: InstanceRef, jobId: string, outcome: T): Promise<T> {
    await this.deps.pending.remove(ref, jobId);
    return outcome;
  }

  /**
   * A previous run of this job (killed mid-action) left the id of the operation it was waiting on:
   * wait on that one and record its outcome instead of acting again. When the operation is already
   * gone, fall through: the re-check and the action's own read of the instance decide again.
   */
  private async resume(job: ActionJob, jobId: string, client: InstanceClient, base: Record<string, string>): Promise<ActionOutcome | undefined> {
    const { redis, keys, audit, ownOperations } = this.deps;
    const raw = await redis.get(keys.inflight(jobId));
    if (!raw) return undefined;
    const left = parseInflight(raw);
    let final: OperationObject;
    try {
      final = await (await client.getOperation(left.operationId)).wait({ timeoutMs: OWN_OPERATION_MAX_MS });
    } catch (err) {
      if (isApiStatus(err, 404) || (err as { code?: string }).code === 'OPERATION_VANISHED') {
        await redis.del(keys.inflight(jobId));
        await audit.append({
          ...base,
          type: 'call',
          summary: `operation ${left.operationId} of an earlier attempt is gone; re-checking the instance`,
        });
        return undefined;
      }
      throw err;
    }
    if (left.action)
      await ownOperations.record(refOf(job), left.operationId, {
        action: left.action,
        state: final.status_code === 200 ? 'done' : 'failed',
        sentAt: left.sentAt ?? Date.now(),
        createdAt: left.createdAt,
        endedAt: daemonTime(final.updated_at) ?? Date.now(),
      });
    await redis.del(keys.inflight(jobId));
    // An exec's exit code is in the operation; its output went with the dead worker's sockets.
    const ret = (final.metadata as { return?: unknown } | null | undefined)?.return;
    const summary = `resumed after a restart of the worker: operation ${left.operationId} ended ${final.status}${typeof ret === 'number' ? ` (exit code ${ret}; its output is lost)` : ''}`;
    const outcome: ActionOutcome = { result: 'done', summary, operationId: left.operationId };
    await audit.append({
      ...base,
      type: 'outcome',
      summary: `${job.action}: ${summary}`,
      result: 'done',
      operationId: left.operationId,
      resumed: true,
    });
    return outcome;
  }
}

export function refOf(job: Pick<ActionJob, 'target' | 'project' | 'instance'>): InstanceRef {
  return { target: job.target, project: job.project, instance: job.instance };
}

/** The storm scope of a rule's job that answers an instance failing; none for schedules, operators and other events. */
function stormScope(job: ActionJob): StormScope | undefined {
  if (job.origin !== 'rule' || !job.event || !isFailure(job.event)) return undefined;
  return { target: job.target, location: job.location ?? job.event.location, project: job.project, instance: job.instance, rule: job.rule };
}

function daemonTime(s: string | undefined): number | undefined {
  const ms = s ? Date.parse(s) : Number.NaN;
  return Number.isNaN(ms) ? undefined : ms;
}

/** The in-flight record of a job: JSON now, a bare operation id in records written before. */
function parseInflight(raw: string): { operationId: string; action?: string; sentAt?: number; createdAt?: number } {
  try {
    const v = JSON.parse(raw) as { operationId?: unknown };
    if (v && typeof v.operationId === 'string') return v as { operationId: string };
  } catch {
    // A bare id.
  }
  return { operationId: raw };
}
