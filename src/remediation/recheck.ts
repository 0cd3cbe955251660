import type { RedisConnection } from '../redis/connect.js';
import { builtinActions, type ActionRegistry } from '../actions/registry.js';
import { isApiStatus } from '../client/api-error.js';
import { StatusCode } from '../client/status-code.js';
import type { InstanceClient } from '../client/client.js';
import type { Instance } from '../client/instance.js';
import type { StateTracker } from '../events/state-tracker.js';
import type { KeySpace } from '../redis/key-space.js';
import type { RuleEngine } from '../rules/engine.js';
import { matchingSilence, type Silences } from '../silences/silences.js';
import type { ActionJob } from '../actions/action-job.js';
import { CrashLoopBudget, quarantineHolds } from './crash-loop-budget.js';
import { describeIdentity, identityOf, identityToken, isAnotherInstance } from './instance-identity.js';
import { causedBy, evacuatedMembers } from '../events/intent.js';
import type { OwnOperations } from '../events/own-operations.js';
import { describeRequest, heldDownSince, incidentOnset, OperatorRequests, type OperatorRequest } from './operator-requests.js';

/** What the re-check found: go ahead (with the instance as just read), or skip and why. */
export type RecheckVerdict =
  | { proceed: true; instance: Instance }
  | { proceed: false; check: 'gone' | 'rule-unloaded' | 'superseded' | 'silenced' | 'quarantined' | 'evacuated' | 'condition'; summary: string };

/** What the re-check reads. */
export interface RecheckDeps {
  client: (target: string) => InstanceClient;
  tracker: StateTracker;
  silences: Silences;
  /** The rules loaded now: a job of a rule that is gone or changed is judged by what is loaded. */
  engine: () => RuleEngine;
  redis: RedisConnection;
  keys: KeySpace;
  /** The actions of the rules loaded now (whether the job's action restarts). Default: the built-ins. */
  actions?: () => ActionRegistry;
  /** Reflex's own operations: a start after the incident that was not one of them was someone else's. */
  ownOperations: OwnOperations;
}

/**
 * Decide twice, act once: the decision made when a job was queued is an optimisation; this is the
 * authority, run under the instance's lock just before the call, level-triggered like a
 * controller's reconcile. It reads the instance again and asks, in order: is it still there; is it
 * still the instance that had the incident (its `volatile.uuid`, or `created_at`: a name deleted and
 * re-created, or renamed away and made anew, names another instance, which had no incident); did
 * an operator request a transition since the incident (a stop or start through the API wins over
 * any pending remediation: known from the processed events, and from the daemon's `last_used_at`
 * when the instance was started since by anyone but Reflex, whose events may still be held back
 * by a Redis outage; and from the operations the stream showed, so a stop the daemon refused
 * while it still ran the crash's stop hook counts too: {@link OperatorRequests}); is it silenced
 * or quarantined now; do the rule's scope and `when` still hold on what was just read; on a
 * cluster, is the instance's member being evacuated (the operator's decision: LXD itself refuses
 * a start there). A job an operator queued (`reflex heal`) is the operator's decision: only the
 * first question applies. A schedule's job skips only the rule questions.
 */
export class Recheck {
  private readonly budget: CrashLoopBudget;
  private readonly requests: OperatorRequests;

  constructor(private readonly deps: RecheckDeps) {
    this.budget = new CrashLoopBudget(deps.redis);
    this.requests = new OperatorRequests(deps.redis, deps.keys);
  }

  private restarts(action: string): boolean {
    const registry = this.deps.actions?.() ?? builtinActions;
    return registry.has(action) && registry.get(action).restarts === true;
  }

  /** Whether rule `name` is loaded now (a reload may have removed it since its jobs were queued). */
  ruleLoaded(name: string): boolean {
    return this.deps.engine().rule(name) !== undefined;
  }

  async check(job: ActionJob): Promise<RecheckVerdict> {
    const ref = { target: job.target, project: job.project, instance: job.instance };
    const byRule = job.origin === 'rule';
    // Every read at once: this runs between an event and its first call.
    const client = this.deps.client(job.target);
    const incident = byRule && job.incidentAt !== undefined;
    // An operator's heal yields only to the operator's own later word (a stop sent after it).
    const heal = job.origin === 'operator' && job.incidentAt !== undefined;
    const [read, tracked, silenceList, quarantined, evacuated, requested] = await Promise.all([
      client
        .withProject(job.project)
        .getInstance(job.instance)
        .then(
          (r) => r.value,
          (err: unknown) => {
            if (isApiStatus(err, 404)) return undefined;
            throw err;
          },
        ),
      job.incidentAt !== undefined ? this.deps.tracker.get(ref) : undefined,
      byRule ? this.deps.silences.list() : undefined,
      byRule && this.restarts(job.action)
        ? this.budget.quarantine({ restarts: this.deps.keys.restarts(ref), quarantine: this.deps.keys.quarantine(ref) })
        : undefined,
      byRule && job.location && job.location !== 'none' ? evacuatedMembers(client) : undefined,
      incident || heal ? Promise.all([this.requests.list(ref), this.deps.ownOperations.ids(ref)]) : undefined,
    ]);
    if (!read) return { proceed: false, check: 'gone', summary: `${job.instance} is gone (deleted or renamed since the incident)` };
    const instance: Instance = read;
    const now = identityOf(instance);
    if (isAnotherInstance(job.identity, now)) {
      const meant = job.origin === 'operator' ? 'the instance the operator asked to heal' : 'the instance that had the incident';
      return {
        proceed: false,
        check: 'superseded',
        summary: `superseded: ${job.instance} is another instance now (re-created / renamed): ${describeIdentity(now)}, ${meant} had ${describeIdentity(job.identity)}; nothing is done to an instance nobody asked about`,
      };
    }
    if (job.origin === 'operator') return laterStop(job, tracked, requested) ?? { proceed: true, instance };

    if (job.incidentAt !== undefined && tracked?.requestedAt !== undefined && tracked.requestedAt > job.incidentAt) {
      return {
        proceed: false,
        check: 'superseded',
        summary: `superseded: a transition to ${tracked.requestedTo} was requested through the API at ${new Date(tracked.requestedAt).toISOString()}, after the incident (${new Date(job.incidentAt).toISOString()}); an operator's decision is never undone`,
      };
    }
    const heldDown = requested && heldDownSince(requested[0], incidentOnset(instance, job.incidentAt!), requested[1]);
    if (heldDown) {
      return {
        proceed: false,
        check: 'superseded',
        summary: `superseded: ${describeRequest(heldDown)}, since ${job.instance} last started (${instance.last_used_at}): the operator's last word on the incident (${new Date(job.incidentAt!).toISOString()}); an operator's decision is never undone, even one the daemon refused`,
      };
    }
    // A rule's remediation of an incident only: a schedule's tick is not undone by a start since.
    const startedBySomeone = incident ? await this.startedSince(ref, instance, job.incidentAt!) : undefined;
    if (startedBySomeone) {
      return {
        proceed: false,
        check: 'superseded',
        summary: `superseded: the instance was started at ${startedBySomeone} (the daemon's last_used_at), after the incident (${new Date(job.incidentAt!).toISOString()}), and not by Reflex; whatever was decided since (it is ${instance.status} now) is an operator's decision, never undone`,
      };
    }
    if (!byRule) return { proceed: true, instance };

    const silence = matchingSilence(silenceList ?? [], {
      target: job.target,
      project: job.project,
      location: job.location ?? 'none',
      instance: job.instance,
      object: instance,
    });
    if (silence)
      return {
        proceed: false,
        check: 'silenced',
        summary: `silenced since it was queued: silence ${silence.id} until ${silence.until}: ${silence.reason}`,
      };

    // Another instance's quarantine under the name does not hold this one (a new instance starts afresh).
    if (quarantineHolds(quarantined, identityToken(now)))
      return {
        proceed: false,
        check: 'quarantined',
        summary: `${job.instance} is quarantined (crash loop); no restarts until released (reflex quarantine release)`,
      };

    if (instance.location && evacuated?.has(instance.location)) {
      return {
        proceed: false,
        check: 'evacuated',
        summary: `cluster member ${instance.location} is evacuated (lxc cluster evacuate: an operator's decision); no rule acts on its instances until it is restored`,
      };
    }

    const engine = this.deps.engine();
    const rule = engine.rule(job.rule);
    if (!rule) return { proceed: false, check: 'rule-unloaded', summary: `rule ${job.rule} is not loaded any more` };
    if (job.event) {
      const decision = await engine.evaluate(rule, job.event, instance);
      if (!decision.matched)
        return { proceed: false, check: 'condition', summary: `the rule no longer holds on the instance as read now: ${decision.summary}` };
    }
    return { proceed: true, instance };
  }

  /**
   * When the daemon says the instance was started after the incident by someone other than Reflex
   * (its `last_used_at`, daemon time like the incident's). The tracker knows of an operator's
   * start and stop only once their events are processed; this knows at once, also when the events
   * are still held (a Redis outage: a delayed action due during it runs as Redis comes back, before
   * the stream's backlog) or were lost, and long after the daemon forgot the operations.
   */
  private async startedSince(
    ref: { target: string; project: string; instance: string },
    instance: Instance,
    incidentAt: number,
  ): Promise<string | undefined> {
    const at = instance.last_used_at;
    const lastStart = at ? Date.parse(at) : Number.NaN;
    if (!(lastStart > incidentAt)) return undefined;
    const own = await this.deps.ownOperations.list(ref);
    return own.some((op) => causedBy(op, { intent: 'requested', timestamp: at! })) ? undefined : at;
  }
}

/**
 * An operator's stop (or freeze) sent after their heal was asked: the later decision wins, so the
 * heal's start is not made. Known from the processed events (the tracker's last requested
 * transition) and from the operations the stream showed, refused or not.
 */
function laterStop(
  job: ActionJob,
  tracked: { requestedAt?: number; requestedTo?: number } | undefined,
  requested: [OperatorRequest[], string[]] | undefined,
): Extract<RecheckVerdict, { proceed: false }> | undefined {
  const asked = job.incidentAt;
  if (asked === undefined) return undefined;
  const when = (at: number) => `at ${new Date(at).toISOString()}, after the heal was asked (${new Date(asked).toISOString()})`;
  if (tracked?.requestedAt !== undefined && tracked.requestedAt > asked && tracked.requestedTo !== StatusCode.Running)
    return {
      proceed: false,
      check: 'superseded',
      summary: `superseded: a transition to ${tracked.requestedTo} was requested through the API ${when(tracked.requestedAt)}; the operator's later decision wins`,
    };
  const later = requested && heldDownSince(requested[0], asked, requested[1]);
  if (later)
    return {
      proceed: false,
      check: 'superseded',
      summary: `superseded: ${describeRequest(later)} ${when(later.at)}; the operator's later decision wins`,
    };
  return undefined;
}
