import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { actionJobOptions, type ActionJob } from '../../actions/action-job.js';
import { actionFailedKind, stormKind, type Alerts } from '../../alerts/alerts.js';
import type { AuditLog } from '../../audit/audit-log.js';
import { StatusCode } from '../../client/status-code.js';
import type { StateTracker } from '../../events/state-tracker.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { InstanceRef } from '../../redis/key-space.js';
import type { PendingActions } from '../pending-actions.js';
import { describeStorm, isFailure, type StormControl, type StormScope } from '../storm-control.js';
import { Trail } from '../trail.js';

/** An action that failed for good and whose rule's `onFailure` branch was queued instead of a give-up. */
export interface BranchedOutcome {
  result: 'failed';
  summary: string;
  /** Job ids of the branch's actions. */
  branched: string[];
}

/** What a job's failure for good needs. */
export interface JobFailureDeps {
  audit: AuditLog;
  pending: PendingActions;
  logger: Logger;
  alerts: Pick<Alerts, 'raise' | 'resolveFiring'>;
  /**
   * The instance's last known status (the events pipeline's tracker): a give-up of an incident's
   * action whose instance runs again since ends its alert at once. None: the Running event's end only.
   */
  tracker?: Pick<StateTracker, 'get'>;
  metrics?: Metrics;
  storms?: StormControl;
  /** Where the jobs of an `onFailure` branch are queued; none: an action with a branch gives up like any other. */
  actionsQueue?: Queue;
}

/**
 * What happens when an action job fails for good: its rule's `onFailure` branch is queued, or it
 * gives up (recorded, alerted, waiting in the dead-letter queue), and a remediation that gave up
 * counts towards its rule's storm on the member.
 */
export class JobFailure {
  constructor(private readonly deps: JobFailureDeps) {}

  /** Whether the job's failure runs its `onFailure` branch instead of a give-up. */
  branches(job: ActionJob): boolean {
    return Boolean(job.onFailure?.length && this.deps.actionsQueue);
  }

  /**
   * An action job failed for good (a 4xx, retries exhausted, or its worker killed more often than
   * the queue allows): it now waits in the dead-letter queue. Records the give-up and raises one
   * alert, so it is neither silent nor lost (`reflex dlq list|retry`).
   */
  async gaveUp(job: ActionJob, jobId: string, reason: string, attempts: number): Promise<void> {
    await this.deps.pending.remove(refOf(job), jobId);
    // A worker that died too often while running it: its branch runs all the same.
    if (this.branches(job)) {
      await this.branch(job, jobId, reason);
      return;
    }
    const summary = `${job.action} on ${job.instance} gave up after ${attempts} attempt(s): ${reason}; job ${jobId} is in the dead-letter queue (reflex dlq list, reflex dlq retry)`;
    const fresh = await trailOf(this.deps.audit, job).write('give-up', summary, { jobId, attempts }, `give-up:${jobId}:${attempts}`);
    if (!fresh) return;
    await this.deps.alerts.raise(
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
    await this.endedSince(job);
    await this.remediationFailed(job, jobId);
  }

  /**
   * The instance of the incident runs again since (someone else's start, or one that came after
   * the job's last try): its Running event, handled before this give-up, found no action-failed
   * alert to end. Read after the raise, as that event's end is made after the tracker's write:
   * whichever comes second ends the alert.
   */
  private async endedSince(job: ActionJob): Promise<void> {
    if (job.incidentAt === undefined || !this.deps.tracker) return;
    const now = await this.deps.tracker.get(refOf(job));
    if (now?.status !== StatusCode.Running || now.at < job.incidentAt) return;
    await this.deps.alerts.resolveFiring(actionFailedKind, refOf(job), {
      summary: `${job.instance} is Running (103) again since ${new Date(now.at).toISOString()}, after the incident`,
      outcome: 'recovered',
    });
  }

  /**
   * The job failed for good and its rule says what to do then: queue the branch's actions as jobs
   * of the same incident instead of giving up. Their ids derive from this job's (`<id>-f<j>`; BullMQ
   * refuses a fourth `:`), so a redelivered failure queues nothing twice; they run like any action.
   */
  async branch(job: ActionJob, jobId: string, reason: string, attempts?: number): Promise<BranchedOutcome> {
    const trail = trailOf(this.deps.audit, job);
    const { onFailure: _branch, ...rest } = job;
    const jobs = (job.onFailure ?? []).map((b, j) => ({
      name: b.action,
      data: { ...rest, action: b.action, params: b.params, branchOf: jobId } satisfies ActionJob,
      opts: actionJobOptions({ jobId: `${jobId}-f${j}`, attempts }),
    }));
    await this.deps.actionsQueue!.addBulk(jobs);
    for (const j of jobs) {
      const summary = `queued ${j.data.action} (onFailure of ${job.action}, which failed: ${reason})${job.dryRun ? ' (dry-run)' : ''}`;
      await trail.queued({ jobId: j.opts.jobId }, summary, { branchOf: jobId });
    }
    const names = jobs.map((j) => j.data.action);
    this.deps.logger.info(
      { instance: job.instance, rule: job.rule, action: job.action, branch: names },
      `${job.action} failed; onFailure branch queued`,
    );
    return {
      result: 'failed',
      summary: `${job.action} failed (${reason}); onFailure branch queued: ${names.join(', ')}`,
      branched: jobs.map((j) => j.opts.jobId),
    };
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
    await this.deps.alerts.raise(
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
}

/** The trail of a job's incident, naming its instance. */
export function trailOf(audit: Pick<AuditLog, 'append'>, job: ActionJob): Trail {
  return Trail.ofJob(audit, job, { correlationId: job.correlationId, rule: job.rule, uuid: job.identity?.uuid });
}

export function refOf(job: Pick<ActionJob, 'target' | 'project' | 'instance'>): InstanceRef {
  return { target: job.target, project: job.project, instance: job.instance };
}

/** The storm scope of a rule's job that answers an instance failing; none for schedules, operators and other events. */
export function stormScope(job: ActionJob): StormScope | undefined {
  if (job.origin !== 'rule' || !job.event || !isFailure(job.event)) return undefined;
  return { target: job.target, location: job.location ?? job.event.location, project: job.project, instance: job.instance, rule: job.rule };
}
