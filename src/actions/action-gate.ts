import type { Redis } from 'ioredis';
import type { Instance } from '../client/instance.js';
import type { CanonicalEvent } from '../events/canonical-event.js';
import type { Metrics } from '../metrics/metrics.js';
import type { KeySpace } from '../queue/names.js';
import type { Rule } from '../rules/rule.js';
import type { Silences } from '../rules/silences.js';
import { CrashLoopBudget } from './crash-loop-budget.js';

/** Whether a matched rule may act now, later, or not at all (and why). */
export type GateVerdict =
  | { admitted: true; delayMs: number; note?: string }
  | { admitted: false; summary: string; alert?: string };

/** Actions that restart an instance and so count against its crash-loop budget. */
const restartingActions = new Set(['start', 'restart']);

/**
 * The checks between "a rule matched" and "an action is queued": silences, the rule's cooldown
 * and the crash-loop budget. All state is in Redis, so replicas agree.
 */
export class ActionGate {
  private readonly budget: CrashLoopBudget;

  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    private readonly silences: Silences,
    private readonly metrics?: Metrics,
  ) {
    this.budget = new CrashLoopBudget(redis);
  }

  async admit(rule: Rule, event: CanonicalEvent, instanceName: string, instance: Instance | undefined): Promise<GateVerdict> {
    const silence = await this.silences.matching({ target: event.target, project: event.project, location: event.location, instance: instanceName, object: instance });
    if (silence) return { admitted: false, summary: `suppressed by silence ${silence.id} until ${silence.until}: ${silence.reason}` };

    if (rule.cooldownMs) {
      const key = this.keys.cooldown(rule.name, event.target, event.project, instanceName);
      const fresh = await this.redis.set(key, event.id, 'PX', rule.cooldownMs, 'NX');
      if (fresh !== 'OK' && (await this.redis.get(key)) !== event.id) {
        return { admitted: false, summary: `skipped: cooldown of ${rule.cooldownMs} ms since the last action of this rule on ${instanceName}` };
      }
    }

    if (rule.crashLoop && rule.actions.some((a) => restartingActions.has(a.action))) {
      const keys = { restarts: this.keys.restarts(event.target, event.project, instanceName), quarantine: this.keys.quarantine(event.target, event.project, instanceName) };
      const v = await this.budget.reserve(keys, event.id, rule.crashLoop);
      if (!v.allowed) {
        if (v.newlyQuarantined) this.metrics?.quarantines.inc();
        const summary = `quarantined: crash loop (${v.restarts} restarts within the budget window); no more restarts until released (reflex quarantine release)`;
        return v.newlyQuarantined
          ? { admitted: false, summary, alert: `${instanceName} is crash-looping: ${v.restarts} restarts within the window; Reflex stopped restarting it (quarantine)` }
          : { admitted: false, summary: `skipped: ${summary}` };
      }
      return { admitted: true, delayMs: v.delayMs, note: `restart ${v.restartNumber} of the budget${v.delayMs ? `, after a back-off of ${v.delayMs} ms` : ''}` };
    }
    return { admitted: true, delayMs: 0 };
  }
}
