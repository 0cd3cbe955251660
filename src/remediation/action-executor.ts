import { UnrecoverableError, type Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { ActionContext, ActionOutcome } from '../actions/action.js';
import type { ActionJob } from '../actions/action-job.js';
import { runAction } from '../actions/define-action.js';
import { builtinActions, type ActionRegistry } from '../actions/registry.js';
import { actionFailedKind, Alerts, giveBackFailedKind } from '../alerts/alerts.js';
import type { AuditLog } from '../audit/audit-log.js';
import { isApiStatus } from '../client/api-error.js';
import { StatusCode } from '../client/status-code.js';
import type { InstanceClient } from '../client/client.js';
import type { OperationObject } from '../client/envelope.js';
import type { ReflexError } from '../errors/reflex-error.js';
import { isFinalFailure } from '../errors/retry-policy.js';
import type { OwnOperations } from '../events/own-operations.js';
import type { OwnOperation } from '../events/intent.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Notifier } from '../notify/notifier.js';
import type { RedisConnection } from '../redis/connect.js';
import type { InstanceRef, KeySpace } from '../redis/key-space.js';
import type { HeldLock, TokenLock } from '../redis/token-lock.js';
import { actionContext } from './act/action-context.js';
import { actingClient } from './act/acting-client.js';
import { giveBack } from './act/give-back.js';
import { identityOf, isAnotherInstance } from './instance-identity.js';
import { JobFailure, refOf, stormScope, trailOf, type BranchedOutcome } from './act/job-failure.js';
import { resumeLeftOperation, startedByEarlierRun } from './act/resume.js';
import { parseInflight, recordJobEnd } from './act/inflight.js';
import type { StateTracker } from '../events/state-tracker.js';
import { describeRequest, incidentOnset, OperatorRequests, type OperatorRequest } from './operator-requests.js';
import { OthersOperations } from './others-operations.js';
import type { PendingActions } from './pending-actions.js';
import type { Recheck, RecheckVerdict } from './recheck.js';
import { heldByStormSummary, type StormControl } from './storm-control.js';
import type { Trail } from './trail.js';

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
  /** The instance's last known status: a give-up whose instance runs again since ends its alert at once. */
  tracker?: Pick<StateTracker, 'get'>;
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
  private readonly failure: JobFailure;

  constructor(private readonly deps: ActionExecutorDeps) {
    this.others = new OthersOperations(deps.ownOperations, new OperatorRequests(deps.redis, deps.keys));
    this.alerts = deps.alerts ?? new Alerts({ audit: deps.audit });
    this.failure = new JobFailure({ ...deps, alerts: this.alerts });
  }

  private actions(): ActionRegistry {
    return this.deps.actions?.() ?? builtinActions;
  }

  /**
   * An action job failed for good (a 4xx, retries exhausted, or its worker killed more often than
   * the queue allows): it gives up, recorded and alerted, or runs its rule's `onFailure` branch.
   */
  gaveUp(job: ActionJob, jobId: string, reason: string, attempts: number): Promise<void> {
    return this.failure.gaveUp(job, jobId, reason, attempts);
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
        return this.skipped(job, jobId, trailOf(this.deps.audit, job), ruleStays ? 'action-unloaded' : 'rule-unloaded', summary);
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
    const { logger, redis, keys } = this.deps;
    const ref = refOf(job);
    const trail = trailOf(this.deps.audit, job);
    const client = this.deps.client(job.target).withProject(job.project);
    const action = this.actions().get(job.action);
    // Under the lock, the in-flight record of an earlier run and the re-check's reads are
    // independent: read at once, so the hot path pays one round of reads between the lock and the
    // call. A record found wins: the reads taken beside it are dropped, and read again when the
    // earlier run's operation turns out gone.
    let reads = held ? this.readsAtOnce(job, client) : undefined;
    const left = await redis.get(keys.inflight(jobId));
    // The operation an earlier run left and the daemon forgot: it may be what started the instance since.
    let gone: ReturnType<typeof parseInflight> | undefined;
    if (left !== null) {
      const resumed = await resumeLeftOperation(this.deps, job, jobId, client, trail, left);
      if (resumed) {
        // The earlier run's start may have met an operator's stop, and that run died before it looked.
        const given =
          job.incidentAt !== undefined && resumed.result === 'done'
            ? await this.giveBackIfHeldDown(job, jobId, attempt, held, trail, resumed, job.incidentAt)
            : undefined;
        if (given) return this.finish(ref, jobId, given);
        // The earlier run acted and died before all of its success was recorded: an earlier give-up's alert ends now.
        if (held && resumed.result === 'done' && !job.dryRun) await this.actionSucceeded(job, resumed);
        return this.finish(ref, jobId, resumed);
      }
      gone = parseInflight(left);
      reads = held ? this.readsAtOnce(job, client) : undefined;
    }
    let observed: ActionContext['observed'];
    // Since when an operator's stop or freeze holds the instance down (the re-check's reading): a
    // remediation's start that one meets in flight is given back.
    let since: number | undefined;
    if (reads) {
      const { listing, verdict, storm, own } = await reads;
      // An earlier run of this job sent a start whose operation is gone, and died: that start may be
      // what an operator's stop met in flight, so a job superseded now gives it back first.
      const earlierStart = gone && 'operationId' in gone ? gone : undefined;
      const givenBackFirst = async (): Promise<ActionOutcome | undefined> =>
        earlierStart && job.incidentAt !== undefined
          ? this.giveBackIfHeldDown(
              job,
              jobId,
              attempt,
              held,
              trail,
              {
                result: 'done',
                summary: `an earlier run's ${earlierStart.action ?? job.action} (operation ${earlierStart.operationId}) was sent`,
                operationId: earlierStart.operationId,
              },
              job.incidentAt,
            )
          : undefined;
      if (!verdict.proceed) {
        const given = verdict.check === 'superseded' ? await givenBackFirst() : undefined;
        if (given) return this.finish(ref, jobId, given);
        logger.info(
          { instance: job.instance, project: job.project, rule: job.rule, action: job.action, check: verdict.check },
          `${job.action} skipped: ${verdict.summary}`,
        );
        return this.skipped(job, jobId, trail, verdict.check, verdict.summary);
      }
      if (storm) return this.skipped(job, jobId, trail, 'storm', storm, 'held');
      const earlier = startedByEarlierRun(own, jobId, verdict.instance, earlierStart);
      if (earlier) return this.skipped(job, jobId, trail, 'earlier-run', earlier);
      const others = await this.others.settle(client, job, await listing, verdict.instance);
      // Read under the lock a moment ago, and nobody else's operation on it since: the action may
      // act on that reading instead of reading the instance once more.
      if (!others.waited) observed = verdict.instance;
      if (others.superseded) {
        const given = await givenBackFirst();
        if (given) return this.finish(ref, jobId, given);
        return this.skipped(job, jobId, trail, 'superseded', others.superseded);
      }
      // A heal's: the moment it was asked (a stop since is the operator's later decision); an incident's: its onset.
      if (job.incidentAt !== undefined) since = job.origin === 'operator' ? job.incidentAt : incidentOnset(verdict.instance, job.incidentAt);
      // Someone else's operation on it ran meanwhile (an operator's config change is one: an opt-out
      // sent during a crash's stop hook lands after the re-check's read): ask again, now.
      if (others.waited) {
        const again = await this.deps.recheck.check(job);
        if (!again.proceed) return this.skipped(job, jobId, trail, again.check, again.summary);
      }
    }
    const acting = actingClient(this.deps, { job, jobId, attempt, held, trail }, client);
    const ctx = actionContext(job, { acting, trail, observed, events: this.deps.events, notifier: this.deps.notifier });
    try {
      // Params were checked when the rules loaded; runAction checks them again, for a job queued before the rules changed.
      const outcome = await runAction(action, ctx).catch((err: unknown) => {
        const dry = acting.dryRunOutcome(err);
        if (dry) return dry;
        throw err;
      });
      // Before anything else: a worker that dies from here on leaves a job that is not run again.
      await recordJobEnd(redis, keys, jobId, outcome);
      const given = since !== undefined ? await this.giveBackIfHeldDown(job, jobId, attempt, held, trail, outcome, since, acting.client) : undefined;
      if (given) return this.finish(ref, jobId, given, 'recorded');
      const scope = stormScope(job);
      if (scope && outcome.result === 'done' && !job.dryRun) await this.deps.storms?.remediated(scope);
      await trail.outcome(`${job.action}: ${outcome.summary}`, outcome.result, { operationId: outcome.operationId, attempt });
      logger.info({ instance: job.instance, rule: job.rule, action: job.action, result: outcome.result }, outcome.summary);
      if (held && outcome.result === 'done' && !job.dryRun) await this.actionSucceeded(job, outcome);
      return this.finish(ref, jobId, outcome, 'recorded');
    } catch (err) {
      await redis.del(keys.inflight(jobId));
      const code = (err as { code?: string }).code ?? 'UNKNOWN';
      const message = (err as Error).message;
      // Deleted or renamed while the job waited: nothing left to act on, and nobody to page.
      if (isApiStatus(err, 404)) {
        const outcome: ActionOutcome = { result: 'skipped', summary: `${job.instance} is gone (deleted or renamed): ${message}` };
        await trail.outcome(`${job.action} skipped: ${outcome.summary}`, 'skipped', { code, attempt });
        return this.finish(ref, jobId, outcome);
      }
      const retry = !isFinalFailure({ attemptsMade: attempt, opts: { attempts: maxAttempts } }, err);
      const branch = !retry && this.failure.branches(job) ? job.onFailure! : undefined;
      const then = retry
        ? `retrying (attempt ${attempt} of ${maxAttempts})`
        : branch
          ? `running its onFailure branch (${branch.map((b) => b.action).join(', ')})`
          : 'giving up';
      await trail.outcome(`${job.action} failed (${code}): ${message}; ${then}`, retry ? 'retrying' : 'failed', { code, attempt });
      logger.warn({ instance: job.instance, action: job.action, err, retry }, 'action failed');
      if (branch) return this.finish(ref, jobId, await this.failure.branch(job, jobId, `${code}: ${message}`, maxAttempts));
      if (!retry) throw new UnrecoverableError(`${code}: ${message}`);
      throw err;
    }
  }

  /**
   * After a remediation or a heal brought its instance up (`outcome`, an action with `restarts`):
   * when an operator's stop or freeze sent since `since` met it in flight (the daemon refused it), does what
   * the operator asked ({@link giveBack}) with the run's acting client, records it on the trail and
   * answers the outcome that replaces the action's; undefined when nobody held the instance down
   * meanwhile. Requests that cannot be read (Redis unreachable) are logged, and the action's
   * outcome stands.
   */
  private async giveBackIfHeldDown(
    job: ActionJob,
    jobId: string,
    attempt: number,
    held: HeldLock | undefined,
    trail: Trail,
    outcome: ActionOutcome,
    since: number,
    acting?: InstanceClient,
  ): Promise<ActionOutcome | undefined> {
    if (job.dryRun || outcome.result !== 'done' || !this.actions().get(job.action).restarts) return undefined;
    const client = this.deps.client(job.target).withProject(job.project);
    const listingFailed = (err: unknown) =>
      this.deps.logger.warn(
        { instance: job.instance, action: job.action, err },
        "could not list the daemon's operations after the action: an operator's stop is looked for in the stream's records only",
      );
    const request = await this.others.heldDownMeanwhile(client, job, since, listingFailed).catch((err: unknown) => {
      this.deps.logger.warn(
        { instance: job.instance, action: job.action, err },
        "could not read the operator's requests after the action: a stop sent meanwhile is not looked for",
      );
      return undefined;
    });
    if (!request) return undefined;
    let given: Awaited<ReturnType<typeof giveBack>>;
    try {
      given = await giveBack(
        acting ?? actingClient(this.deps, { job, jobId, attempt, held, trail }, client).client,
        job.instance,
        request,
        job.identity,
      );
    } catch (err) {
      return this.giveBackFailed(job, jobId, attempt, trail, outcome, request, err as Error & { code?: string }, client);
    }
    const { ended, done } = given;
    const summary = `superseded: ${describeRequest(ended)}, while this ${job.action} ran; an operator's decision is never undone: ${done}`;
    this.deps.logger.warn(
      { instance: job.instance, project: job.project, rule: job.rule, action: job.action, operation: request.operationId },
      summary,
    );
    await trail.outcome(`${job.action} given back: ${outcome.summary}, then ${summary}`, 'skipped', {
      recheck: 'superseded',
      operationId: outcome.operationId,
      attempt,
    });
    return { result: 'skipped', summary };
  }

  /**
   * The instance could not be brought down again as the operator asked (GIVE_BACK_FAILED): it runs
   * against their request, and only a person can settle it. Recorded as the job's failed outcome
   * (not retried, not dead-lettered, no `onFailure` branch: the start itself succeeded, and another
   * run would not stop it), logged at error, and alerted once as `action.give-back-failed`, which
   * stays firing until the instance is down (not when it runs: running is the trouble). The job's
   * outcome for the incident is `skipped`: the operator's stop superseded it.
   */
  private async giveBackFailed(
    job: ActionJob,
    jobId: string,
    attempt: number,
    trail: Trail,
    outcome: ActionOutcome,
    request: OperatorRequest,
    err: Error & { code?: string },
    client: InstanceClient,
  ): Promise<ActionOutcome> {
    const verb = request.action === 'freeze' ? 'freeze' : 'stop';
    const code = err.code ?? 'GIVE_BACK_FAILED';
    const summary = `superseded: ${describeRequest(request)}, while this ${job.action} ran; ${err.message}`;
    this.deps.logger.error(
      { instance: job.instance, project: job.project, rule: job.rule, action: job.action, operation: request.operationId, err },
      `${job.instance} runs against an operator's ${request.action}: it could not be given back`,
    );
    await trail.outcome(`${job.action} given back, and that failed (${code}): ${outcome.summary}, then ${summary}`, 'failed', {
      code,
      recheck: 'superseded',
      operationId: outcome.operationId,
      attempt,
    });
    await this.alerts.raise(
      {
        kind: giveBackFailedKind,
        severity: 'critical',
        summary: `${job.instance} runs against an operator's ${request.action} (operation ${request.operationId}): ${err.message}; ${verb} it by hand`,
        target: job.target,
        project: job.project,
        instance: job.instance,
        ...(job.event?.location ? { member: job.event.location } : {}),
        correlationId: job.correlationId,
      },
      { once: `give-back-failed:${jobId}`, record: { rule: job.rule } },
    );
    // The operator may have brought it down by hand already, its event handled before the raise:
    // read it now, after the raise, so that one side or the other ends the alert; the instance Reflex
    // started, not another one made under its name since.
    const state = await client.getInstance(job.instance).then(
      (read) => read.value,
      (readErr: unknown) => {
        this.deps.logger.warn(
          { instance: job.instance, err: readErr },
          'could not read the instance after raising action.give-back-failed: its Stopped event ends it',
        );
        return undefined;
      },
    );
    const down = state?.status_code === StatusCode.Stopped || state?.status_code === StatusCode.Frozen;
    if (state && down && !isAnotherInstance(job.identity, identityOf(state)))
      await this.alerts.resolveFiring(giveBackFailedKind, refOf(job), {
        summary: `${job.instance} is ${state.status} (${state.status_code}) now, as the operator asked`,
        outcome: 'recovered',
      });
    return { result: 'skipped', summary };
  }

  /** The job is not run at the moment of acting (`check` stopped it): recorded once, and it leaves the pending set. */
  private async skipped(
    job: ActionJob,
    jobId: string,
    trail: Trail,
    check: string,
    why: string,
    how: 'skipped' | 'held' = 'skipped',
  ): Promise<ActionOutcome> {
    await trail.skipped(check, why, { jobId, action: job.action }, how);
    return this.finish(refOf(job), jobId, { result: 'skipped', summary: why });
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

  /**
   * The reads of the moment of acting, started at once: the re-check's, storm control's, Reflex's
   * own operations on the instance (an earlier run's call left unsettled) and the listing of the
   * server's operations (independent, so a mass failure pays one round of reads per action). A
   * dropped read's failure is nobody's: marked handled here.
   */
  private readsAtOnce(
    job: ActionJob,
    client: InstanceClient,
  ): Promise<{ listing: Promise<OperationObject[] | undefined>; verdict: RecheckVerdict; storm: string | undefined; own: OwnOperation[] }> {
    const listing = this.others.recent(client, `${job.target}\u0000${job.project}`).catch(() => undefined);
    const reads = Promise.all([this.deps.recheck.check(job), this.heldByStorm(job), this.deps.ownOperations.list(refOf(job))]).then(
      ([verdict, storm, own]) => ({ listing, verdict, storm, own }),
    );
    reads.catch(() => undefined);
    return reads;
  }

  /** Why the job is held: its rule is in a storm on the instance's member (declared after the job was queued). */
  private async heldByStorm(job: ActionJob): Promise<string | undefined> {
    const scope = stormScope(job);
    if (!scope || !this.deps.storms || !(await this.deps.storms.holds(scope))) return undefined;
    return heldByStormSummary(scope);
  }

  /** The job's end: it leaves the pending set, and its end is recorded so that a stalled copy of it does not run again. */
  private async finish<T extends ExecutedOutcome>(ref: InstanceRef, jobId: string, outcome: T, end?: 'recorded'): Promise<T> {
    await Promise.all([this.deps.pending.remove(ref, jobId), end ? undefined : recordJobEnd(this.deps.redis, this.deps.keys, jobId, outcome)]);
    return outcome;
  }
}
