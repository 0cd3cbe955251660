import type { RedisConnection } from '../redis/connect.js';
import type { Logger } from 'pino';
import { StatusCode } from '../client/status-code.js';
import type { CanonicalEvent } from '../events/canonical-event.js';
import { alertFingerprint, type Alert, type AlertAction, type AlertChange, type AlertInput } from '../alerts/alert.js';
import { actionFailedKind, crashLoopKind, giveBackFailedKind, type Alerts } from '../alerts/alerts.js';
import { stormKind } from '../alerts/catalogue.js';
import { auditSummary, incidentKind, incidentSummary, instanceAlertKinds } from './instance-incident.js';
import type { Notifier } from './notifier.js';

type StatusEvent = Extract<CanonicalEvent, { kind: 'instance.status' }>;

/** What one rule did about an event, as the event processor reports it to {@link InstanceAlerts}. */
export interface RuleResponse {
  rule: string;
  /**
   * `queued`: its actions are on the actions queue; `dry-run`: queued in dry-run; `suppressed`: the
   * gate held them back (silence, storm, cooldown, quarantine); `skipped`: its condition did not hold.
   */
  result: 'queued' | 'dry-run' | 'suppressed' | 'skipped';
  /** The decision as audited, e.g. `skipped: instance has not opted in`. */
  summary: string;
  /** The actions queued, in order, with the delay before they run. */
  actions: { action: string; delayMs: number }[];
}

const kinds = Object.values(instanceAlertKinds);
/** Alerts about an instance that its recovery (Running again) ends besides the incident's own. */
const healedKinds = [actionFailedKind, crashLoopKind];

/**
 * Turns instance incidents into alerts: a crash (Stopped without a request, or a stop seen only
 * by a resync) or Error raises one firing alert saying what Reflex does about it; each action of
 * the incident that finishes amends it with its result and operation id; Running again resolves
 * it. Every crash alerts, whether or not a rule acts: an instance no rule heals is the one an
 * operator most needs to hear about. The notifier keys alerts by kind and instance, so replicas
 * and retried jobs raising or resolving the same incident send one message of each.
 */
export class InstanceAlerts {
  constructor(
    private readonly deps: {
      /** Without one (no receivers configured) the incidents are audited as alerts only, and nothing tracks their end. */
      notifier?: Notifier | undefined;
      redis: RedisConnection;
      logger?: Logger;
      /**
       * Raises (audited, then sent) each incident's alert, audits its end, and resolves the alerts a
       * recovery ends besides the incident's own: action-failed, crash-loop, storm.
       */
      alerts: Pick<Alerts, 'raise' | 'resolveFiring' | 'resolveEachFiring' | 'amend'>;
      /**
       * Whether the instance's cluster member is in a failure storm: storm control then raises one
       * grouped alert for the member, and the per-instance crash alerts are held back.
       */
      inStorm?: (event: CanonicalEvent) => Promise<boolean>;
      /**
       * When the instance was seen Running after the event (ms), if it was: an incident whose
       * recovery was handled first (a job resumed after a replica died, two replicas' batches
       * side by side) raises nothing, and one raised while the recovery was handled ends at once.
       */
      runningSince?: (event: StatusEvent) => Promise<number | undefined>;
    },
  ) {}

  /**
   * Raises or resolves the alert an event implies, after the rules handled it. Throws when Redis
   * does not take it (full, unreachable): the event job fails and its retry resumes here (the
   * steps before are once-keyed), so an alert's start or end is never dropped with a log line.
   */
  async observe(event: CanonicalEvent, responses: RuleResponse[]): Promise<void> {
    if (event.kind !== 'instance.status') return;
    const kind = incidentKind(event);
    if (kind) await this.raise(event, kind, responses);
    else if (event.to === StatusCode.Running) await this.recover(event);
    // Down, as the operator asked of a start Reflex could not give back: by anyone, crash included.
    if (event.to === StatusCode.Stopped || event.to === StatusCode.Frozen)
      await this.deps.alerts.resolveFiring(giveBackFailedKind, event, {
        summary: `${event.instance} is ${event.to === StatusCode.Frozen ? 'Frozen (110)' : 'Stopped (102)'} now, as the operator asked`,
        outcome: 'recovered',
        endsAt: isoTime(event.timestamp),
      });
  }

  private async raise(event: StatusEvent, kind: string, responses: RuleResponse[]): Promise<void> {
    // Both are reads: they leave together.
    const [runningSince, inStorm] = await Promise.all([this.deps.runningSince?.(event), this.deps.inStorm?.(event)]);
    if (runningSince) {
      this.deps.logger?.info(
        { instance: event.instance, event: event.id },
        'no incident alert: the instance runs again since (its recovery was handled first)',
      );
      return;
    }
    if (inStorm) {
      this.deps.logger?.info(
        { instance: event.instance, location: event.location },
        'crash alert held back: the member is in a failure storm (one grouped alert)',
      );
      return;
    }
    const acting = responses.filter((r) => r.result === 'queued');
    const actions: AlertAction[] = acting.flatMap((r) =>
      r.actions.map((a) => ({
        action: a.action,
        result: 'queued',
        summary: `by rule ${r.rule}${a.delayMs ? `, to run in ${Math.round(a.delayMs / 1000)} s` : ''}`,
      })),
    );
    const idle = responses.filter((r) => r.result !== 'queued').map((r) => `rule ${r.rule} ${r.summary}`);
    // A new incident: a recovery still waiting for an earlier incident's action is moot.
    const { notifier } = this.deps;
    if (notifier)
      await this.deps.redis.del(
        notifier.keys.recovered(alertFingerprint({ kind, target: event.target, project: event.project, instance: event.instance })),
      );
    // A failed start is the starter's to fix (their client got the error), not a page.
    const failedStart = kind === instanceAlertKinds.startFailed;
    const alert: AlertInput = {
      kind,
      // Nobody is fixing it: that is the page-worthy case.
      severity: acting.length || failedStart ? 'warning' : 'critical',
      target: event.target,
      project: event.project,
      instance: event.instance,
      member: event.location,
      summary: incidentSummary(event),
      actions,
      outcome: acting.length
        ? undefined
        : failedStart
          ? 'not restarted: the instance never ran, a failed start is not a crash'
          : `not remediated: ${idle.length ? idle.join('; ') : 'no rule handles it'}`,
      correlationId: event.id,
      startsAt: isoTime(event.timestamp),
      labels: {},
    };
    // Audited in the incident's trail (with the fingerprint its end is recorded under), then sent;
    // once per event and kind, so a retried event job or another replica sends nothing twice.
    await this.deps.alerts.raise(alert, {
      once: `incident:${event.id}:${kind}`,
      record: {
        summary: auditSummary(
          event,
          alert,
          responses.some((r) => r.result === 'queued' || r.result === 'dry-run'),
        ),
      },
    });
    // The recovery handled meanwhile found nothing firing yet: end it here.
    const since = await this.deps.runningSince?.(event);
    if (since)
      await this.deps.alerts.resolveFiring(kind, event, {
        summary: `${event.instance} is Running (103) again`,
        outcome: 'recovered',
        endsAt: new Date(since).toISOString(),
      });
  }

  /**
   * Resolves the instance's incident alerts. When Reflex's own action brought it back and that
   * action has not reported yet, the resolution waits for the report (see {@link actionSettled}), so the
   * resolved message carries the action's result and operation id.
   */
  private async recover(event: StatusEvent): Promise<void> {
    const how =
      event.intent === 'self'
        ? 'started by Reflex'
        : event.synthetic
          ? 'seen by a resync'
          : event.intent === 'requested'
            ? 'started through the API'
            : 'started by the daemon';
    const recovery: Recovery = {
      summary: `${event.instance} is Running (103) again, ${how}`,
      outcome: event.intent === 'self' ? 'restarted' : 'recovered',
      endsAt: isoTime(event.timestamp),
      correlationId: '',
    };
    const { notifier, redis } = this.deps;
    const pending = async (kind: string) => {
      const fp = alertFingerprint({ kind, target: event.target, project: event.project, instance: event.instance });
      await this.deps.alerts.amend(fp, async (known) => {
        if (known.status !== 'firing') return undefined;
        if (event.intent === 'self' && known.actions.some(isPending)) {
          await redis.set(notifier!.keys.recovered(fp), JSON.stringify({ ...recovery, correlationId: known.correlationId }), 'PX', recoveryTtlMs);
          return undefined;
        }
        return resolution(recovery);
      });
    };
    // Each alert is its own: they are looked up side by side, not one round trip after another.
    await Promise.all([
      // Without a notifier nothing waits for the action's report: the end is audited at once.
      notifier ? Promise.all(kinds.map(pending)) : this.deps.alerts.resolveEachFiring(kinds, event, recovery),
      // Healthy again, whoever brought it back: an action that gave up on it, or a crash loop Reflex
      // stopped restarting, is over (a quarantine stays until it lapses or is released).
      this.deps.alerts.resolveEachFiring(healedKinds, event, { summary: recovery.summary, outcome: 'recovered', endsAt: recovery.endsAt }),
      this.stormOver(event, recovery),
    ]);
  }

  /**
   * A storm alert of the instance's member resolves with the first recovery there (in the project
   * the storm alert names) once the member is out of the storm: its windows of failing
   * remediations have lapsed, and an instance on it is Running again.
   */
  private async stormOver(event: StatusEvent, recovery: Recovery): Promise<void> {
    const { alerts, inStorm } = this.deps;
    if (!event.location || !inStorm || (await inStorm(event))) return;
    const summary = `the failure storm on ${event.location} is over: no rule is held there any more, and ${recovery.summary}`;
    await alerts.resolveFiring(
      stormKind,
      { target: event.target, project: event.project, instance: `member:${event.location}` },
      { summary, outcome: 'recovered', endsAt: recovery.endsAt },
    );
  }

  /**
   * Amends the incident's alert with the result of an action job (the worker that ran it reports
   * each result once): replaces the action's `queued` (or `retrying`) line with its result, when the alert is about
   * this job's incident; resolves the alert if the recovery was seen and this was the last action
   * still running.
   */
  async actionSettled(data: SettledAction, result: Omit<AlertAction, 'action'>, final: boolean): Promise<void> {
    const entry: AlertAction = { ...result, action: data.action };
    if (entry.summary === undefined) delete entry.summary;
    if (entry.operationId === undefined) delete entry.operationId;
    const failed = final && entry.result === 'failed';
    const { notifier, redis } = this.deps;
    if (!notifier) return;
    try {
      for (const kind of kinds) {
        const fp = alertFingerprint({ kind, target: data.target, project: data.project, instance: data.instance });
        await this.deps.alerts.amend(fp, async (known): Promise<AlertChange | undefined> => {
          if (known.correlationId !== data.correlationId) return undefined;
          const actions = [...known.actions];
          const i = actions.findIndex((a) => a.action === data.action && isPending(a));
          if (i >= 0) actions[i] = entry;
          else actions.push(entry);
          const change: AlertChange = failed
            ? { actions, severity: 'critical', outcome: `${data.action} failed; ${data.instance} may still be down` }
            : { actions };
          if (known.status !== 'firing' || actions.some(isPending)) return change;
          const raw = await redis.get(notifier.keys.recovered(fp));
          const seen = raw ? (JSON.parse(raw) as Recovery) : undefined;
          if (seen?.correlationId !== known.correlationId) return change;
          await redis.del(notifier.keys.recovered(fp));
          return { ...change, ...resolution(seen) };
        });
      }
    } catch (err) {
      this.deps.logger?.warn({ err, instance: data.instance, action: data.action }, 'instance alert not amended with the action result');
    }
  }
}

/** An action job as {@link InstanceAlerts.actionSettled} needs it. */
export interface SettledAction {
  action: string;
  target: string;
  project: string;
  instance: string;
  correlationId: string;
}

/** A recovery as {@link InstanceAlerts} resolves with it, kept while Reflex's action finishes. */
interface Recovery {
  summary: string;
  outcome: string;
  endsAt: string;
  correlationId: string;
}

/** A recovery waiting for the action's report is kept this long (an action waits at most minutes). */
const recoveryTtlMs = 86_400_000;

function isPending(a: AlertAction): boolean {
  return a.result === 'queued' || a.result === 'retrying';
}

function resolution(r: Recovery): AlertChange {
  return { status: 'resolved', endsAt: r.endsAt, summary: r.summary, outcome: r.outcome };
}

/** The daemon's timestamp as ISO 8601 (it may carry nanoseconds and an offset); now when unreadable. */
function isoTime(timestamp: string): string {
  const ms = Date.parse(timestamp);
  return new Date(Number.isNaN(ms) ? Date.now() : ms).toISOString();
}
