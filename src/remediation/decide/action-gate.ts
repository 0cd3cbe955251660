import type { RedisConnection } from '../../redis/connect.js';
import { stormKind, type crashLoopKind } from '../../alerts/catalogue.js';
import { systemClock, type Clock } from '../../clock/clock.js';
import type { Instance } from '../../client/instance.js';
import { StatusCode } from '../../client/status-code.js';
import type { CanonicalEvent } from '../../events/canonical-event.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { InstanceRef, KeySpace } from '../../redis/key-space.js';
import { releaseIfHeld } from '../../redis/token-lock.js';
import { builtinActions, type ActionRegistry } from '../../actions/registry.js';
import { configFlag } from '../../rules/config-flag.js';
import type { Rule } from '../../rules/rule.js';
import { matchingSilence, type Silence, type Silences } from '../../silences/silences.js';
import { CrashLoopBudget } from '../crash-loop-budget.js';
import { identityOf, identityToken } from '../instance-identity.js';
import { describeStorm, isFailure, StormControl, type StormPolicy } from '../storm-control.js';

/** Whether a matched rule may act now, later, or not at all (and why). */
export type GateVerdict =
  | { admitted: true; delayMs: number; note?: string }
  | {
      admitted: false;
      summary: string;
      /** An alert to raise once (crash-loop quarantine, storm). */
      alert?: string;
      /** Its kind. Default `instance.crash-loop`. */
      alertKind?: typeof crashLoopKind | typeof stormKind;
      /** What the alert is about when it is not the instance (a storm is about a member). */
      alertSubject?: string;
    };

/** Options of the gate. */
export interface GateOptions {
  /** Storm control; false turns it off. Default: failing remediations of 10 instances by one rule on one member within 60 000 ms. */
  storm?: StormPolicy | false;
  /**
   * How long a rule that starts or restarts an instance with `boot.autorestart=true` waits after an
   * unrequested stop before its action runs (the action then re-reads the instance and does nothing
   * if the daemon brought it back). Incus restarts such an instance up to 10 times in a rolling
   * minute and gives up on the 11th exit, so the default, 75 000 ms, outlasts that minute.
   */
  autorestartStandBackMs?: number;
  /** The actions of the rules loaded now (which of a rule's actions restart). Default: the built-ins. */
  actions?: () => ActionRegistry;
  /** The time the crash-loop budget's window, reset and back-off are read against (the back-off itself is a BullMQ delay). Default: the wall clock. */
  clock?: Clock;
}

/**
 * The checks between "a rule matched" and "an action is queued": silences, storm control (the
 * rule's failing remediations on the member), the rule's cooldown, standing back for the daemon's `boot.autorestart`, and the crash-loop budget.
 * All state is in Redis, so replicas agree.
 */
export class ActionGate {
  private readonly budget: CrashLoopBudget;
  /** Storm control (undefined when off); the executor holds and counts remediations with it too. */
  readonly storms: StormControl | undefined;
  private readonly standBackMs: number;
  private readonly actions: (() => ActionRegistry) | undefined;
  private readonly clock: Clock;
  /** The silences in force as read for the event this gate judges ({@link readingSilencesNow}); none: read at admit. */
  private activeSilences: Promise<Silence[]> | undefined;

  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: KeySpace,
    private readonly silences: Silences,
    private readonly metrics?: Metrics,
    options: GateOptions = {},
  ) {
    this.budget = new CrashLoopBudget(redis);
    this.clock = options.clock ?? systemClock;
    this.storms = options.storm === false ? undefined : new StormControl(redis, keys, options.storm, this.clock);
    this.standBackMs = options.autorestartStandBackMs ?? 75_000;
    this.actions = options.actions;
  }

  /**
   * The delayed take-over check queued for `incident` was removed (an operator's transition
   * superseded it): its stand-back no longer covers later stops, so the next one is judged afresh
   * instead of being skipped as covered by a check that will never run.
   */
  async endStandBack(rule: string, ref: InstanceRef, incident: string): Promise<void> {
    await releaseIfHeld(this.redis, this.keys.standBack(rule, ref), incident);
  }

  /**
   * This gate, with the silences in force read now (their read leaves beside the caller's next
   * one), for one event's decision: its {@link admit} judges them instead of reading them again. A
   * silence added after this read and before the action runs is the re-check's, at the moment of
   * acting, as one added after admit's own read always was.
   */
  readingSilencesNow(): ActionGate {
    const active = this.silences.list();
    // Nothing may await it (no rule matched): a failed read is then no one's error.
    active.catch(() => undefined);
    return Object.assign(Object.create(this) as ActionGate, { activeSilences: active });
  }

  /** Whether the event's cluster member is in a failure storm (never, with storm control off). */
  async inStorm(event: CanonicalEvent): Promise<boolean> {
    return (await this.storms?.inStorm(event)) ?? false;
  }

  async admit(rule: Rule, event: CanonicalEvent, ref: InstanceRef, instance: Instance | undefined): Promise<GateVerdict> {
    const instanceName = ref.instance;
    const subject = { target: event.target, project: event.project, location: event.location, instance: instanceName, object: instance };
    const silence = this.activeSilences ? matchingSilence(await this.activeSilences, subject) : await this.silences.matching(subject);
    if (silence) return { admitted: false, summary: `suppressed by silence ${silence.id} until ${silence.until}: ${silence.reason}` };

    if (this.storms && isFailure(event)) {
      const scope = { target: event.target, location: event.location, project: event.project, instance: instanceName, rule: rule.name };
      const s = await this.storms.check(scope, `${rule.name}|${event.id}`);
      if (s.storm) {
        const text = describeStorm(s, scope, this.storms);
        if (!s.alert) return { admitted: false, summary: text.summary };
        this.metrics?.storms.inc();
        return { admitted: false, summary: text.summary, alert: text.alert, alertKind: stormKind, alertSubject: `member:${event.location}` };
      }
    }

    if (rule.cooldownMs) {
      const key = this.keys.cooldown(rule.name, ref);
      // Held as `identity NEWLINE incident`: another instance's cooldown under the name is not this one's.
      const identity = identityToken(identityOf(instance));
      const mine = `${identity}\n${event.id}`;
      const fresh = await this.redis.set(key, mine, 'PX', rule.cooldownMs, 'NX');
      const held = fresh === 'OK' ? mine : await this.redis.get(key);
      const heldIdentity = held?.includes('\n') ? held.slice(0, held.indexOf('\n')) : '';
      if (held !== null && held !== mine && identity !== '' && heldIdentity !== '' && heldIdentity !== identity) {
        await this.redis.set(key, mine, 'PX', rule.cooldownMs);
      } else if (held !== null && held !== mine) {
        return { admitted: false, summary: `skipped: cooldown of ${rule.cooldownMs} ms since the last action of this rule on ${instanceName}` };
      }
    }

    const registry = this.actions?.() ?? builtinActions;
    // What a rule does about a failed health probe (restart the service with exec, or the instance) is a restart: it spends the crash-loop budget.
    const restarting =
      event.kind === 'instance.health' || rule.actions.some((a) => registry.has(a.action) && registry.get(a.action).restarts === true);
    let standBack: string | undefined;
    if (restarting && this.daemonRetries(event, instance)) {
      const key = this.keys.standBack(rule.name, ref);
      const fresh = await this.redis.set(key, event.id, 'PX', this.standBackMs, 'NX');
      const holder = fresh === 'OK' ? event.id : await this.redis.get(key);
      if (holder !== null && holder !== event.id) {
        return {
          admitted: false,
          summary: `skipped: boot.autorestart is on: the daemon is retrying, and the take-over check queued for incident ${holder} covers this stop too`,
        };
      }
      standBack = `boot.autorestart is on: standing back ${this.standBackMs} ms while the daemon retries (Incus restarts up to 10 times a minute); the action then runs only if the instance is still down`;
    }

    if (rule.crashLoop && restarting) {
      const keys = { restarts: this.keys.restarts(ref), quarantine: this.keys.quarantine(ref) };
      const v = await this.budget.reserve(keys, event.id, rule.crashLoop, this.clock.now(), identityToken(identityOf(instance)));
      if (!v.allowed) {
        if (v.newlyQuarantined) this.metrics?.quarantines.inc();
        const summary = `quarantined: crash loop (${v.restarts} restarts within the budget window); no more restarts until released (reflex quarantine release)`;
        return v.newlyQuarantined
          ? {
              admitted: false,
              summary,
              alert: `${instanceName} is crash-looping: ${v.restarts} restarts within the window; Reflex stopped restarting it (quarantine)`,
            }
          : { admitted: false, summary: `skipped: ${summary}` };
      }
      const budgetNote = `restart ${v.restartNumber} of the budget${v.delayMs ? `, after a back-off of ${v.delayMs} ms` : ''}`;
      if (standBack) return { admitted: true, delayMs: Math.max(v.delayMs, this.standBackMs), note: `${standBack}; ${budgetNote}` };
      return { admitted: true, delayMs: v.delayMs, note: budgetNote };
    }
    if (standBack) return { admitted: true, delayMs: this.standBackMs, note: standBack };
    return { admitted: true, delayMs: 0 };
  }

  /** An unrequested stop of an instance whose daemon restarts it by itself (Incus `boot.autorestart`). */
  private daemonRetries(event: CanonicalEvent, instance: Instance | undefined): boolean {
    return (
      event.kind === 'instance.status' &&
      event.to === StatusCode.Stopped &&
      event.intent === 'unrequested' &&
      configFlag(instance, 'boot.autorestart')
    );
  }
}
