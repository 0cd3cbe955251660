import type { Instance } from '../client/instance.js';
import type { CanonicalEvent } from '../events/canonical-event.js';
import { evaluateFilter } from '../filter/evaluator.js';
import { ReflexError } from '../errors/reflex-error.js';
import type { ActionSpec, Rule, Trigger } from './rule.js';

/** The outcome of one rule for one event. */
export type Decision =
  | { rule: string; matched: true; actions: ActionSpec[]; dryRun: boolean; summary: string; definition: Rule }
  | { rule: string; matched: false; summary: string };

/** Mismatches too plain to audit: the rule does not listen to this kind of event at all. */
const notNearMisses = new Set(['kind', 'status', 'action', 'name', 'labels', 'health', 'probe']);

/** Why a trigger does not match, or undefined when it matches. */
function triggerMismatch(t: Trigger, e: CanonicalEvent): string | undefined {
  if (t.kind !== e.kind) return 'kind';
  if (t.to && 'to' in e && !t.to.includes(e.to)) return 'status';
  if (t.action && !('action' in e && e.action && t.action.includes(e.action))) return 'action';
  if (t.name && !(e.kind === 'rule.event' && t.name.includes(e.name))) return 'name';
  if (t.alertname && !(e.kind === 'alert' && t.alertname.includes(e.alertname))) return 'name';
  if (t.status && !(e.kind === 'alert' && t.status.includes(e.status))) return 'status';
  if (t.labels && !(e.kind === 'alert' && Object.entries(t.labels).every(([k, v]) => e.labels[k] === v))) return 'labels';
  if (t.health && !(e.kind === 'instance.health' && t.health.includes(e.health))) return 'health';
  if (t.probe && !(e.kind === 'instance.health' && t.probe.includes(e.probe))) return 'probe';
  if (t.intent && e.kind === 'instance.status' && !t.intent.includes(e.intent)) {
    return `intent is ${e.intent}${e.intent === 'requested' ? ' (stopped or changed through the API by a user; never undone)' : ''}, rule wants ${t.intent.join('|')}`;
  }
  return undefined;
}

/**
 * Told how a rule's code fared on an event: {@link RuleErrorSink.failed} when its `when` threw or
 * timed out (the decision is then "not met"), {@link RuleErrorSink.answered} when it returned.
 * Called for every evaluation, the first decision and each re-check alike. Must not throw.
 */
export interface RuleErrorSink {
  failed(rule: Rule, event: CanonicalEvent, error: Error, why: 'threw' | 'timed out'): void;
  answered(rule: Rule, event: CanonicalEvent): void;
}

/**
 * Evaluates rules against one event. A rule is *relevant* when some trigger matches the event's
 * kind and status/action; only relevant rules yield a decision (matched, or skipped with a reason),
 * so the audit log explains every near miss without a record per rule per event.
 */
export class RuleEngine {
  private readonly byName: Map<string, Rule>;
  private readonly conditionTimeoutMs: number;
  private readonly errors: RuleErrorSink | undefined;

  /**
   * @param opts.conditionTimeoutMs how long a rule's `when` may take before it counts as not met (default 5000 ms).
   * @param opts.errors told of each `when` that throws or times out, and of each that answers (default: none).
   */
  constructor(
    private readonly rules: Rule[],
    opts: { conditionTimeoutMs?: number; errors?: RuleErrorSink } = {},
  ) {
    this.byName = new Map(rules.map((r) => [r.name, r]));
    this.conditionTimeoutMs = opts.conditionTimeoutMs ?? 5_000;
    this.errors = opts.errors;
  }

  /** The enabled rule of that name, if loaded. */
  rule(name: string): Rule | undefined {
    const r = this.byName.get(name);
    return r && r.enabled !== false ? r : undefined;
  }

  get size(): number {
    return this.rules.length;
  }

  /** Whether any enabled rule could care about this event (lets the caller skip reading the instance). */
  isRelevant(event: CanonicalEvent): boolean {
    return this.rules.some(
      (r) =>
        r.enabled !== false &&
        r.triggers.some((t) => {
          const why = triggerMismatch(t, event);
          return why === undefined || !notNearMisses.has(why);
        }),
    );
  }

  async decide(event: CanonicalEvent, instance: Instance | undefined): Promise<Decision[]> {
    const out: Decision[] = [];
    for (const rule of this.rules) {
      if (rule.enabled === false) continue;
      const reasons = rule.triggers.map((t) => triggerMismatch(t, event));
      if (reasons.includes(undefined)) {
        out.push(await this.evaluate(rule, event, instance));
        continue;
      }
      const nearMiss = reasons.find((r) => r !== undefined && !notNearMisses.has(r));
      if (nearMiss) out.push({ rule: rule.name, matched: false, summary: `skipped: ${nearMiss}` });
    }
    return out;
  }

  /**
   * A rule's scope and `when` on an event and the instance as read (also the re-check before an
   * action runs). A `when` that throws or does not answer within the condition timeout is a
   * recorded "not met", never a crash of the worker; the error sink hears of it.
   */
  async evaluate(rule: Rule, event: CanonicalEvent, instance: Instance | undefined): Promise<Decision> {
    const outOfScope = scopeMismatch(rule, event, instance);
    if (outOfScope) return { rule: rule.name, matched: false, summary: `skipped: out of scope (${outOfScope})` };
    if (rule.when) {
      let ok: boolean;
      let timer: NodeJS.Timeout | undefined;
      try {
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new ReflexError('RULE_TIMEOUT', `condition timed out after ${this.conditionTimeoutMs} ms`)),
            this.conditionTimeoutMs,
          );
        });
        ok = await Promise.race([Promise.resolve().then(() => rule.when!({ event, instance })), timeout]);
      } catch (thrown) {
        const err = thrown instanceof Error ? thrown : new Error(String(thrown));
        const timedOut = (err as ReflexError).code === 'RULE_TIMEOUT';
        this.errors?.failed(rule, event, err, timedOut ? 'timed out' : 'threw');
        return { rule: rule.name, matched: false, summary: timedOut ? `skipped: ${err.message}` : `skipped: condition threw: ${err.message}` };
      } finally {
        clearTimeout(timer);
      }
      this.errors?.answered(rule, event);
      if (!ok) return { rule: rule.name, matched: false, summary: `skipped: ${rule.whenNot ?? 'condition not met'}` };
    }
    return {
      rule: rule.name,
      matched: true,
      actions: rule.actions,
      dryRun: rule.dryRun ?? false,
      summary: `matched${rule.dryRun ? ' (dry-run)' : ''}`,
      definition: rule,
    };
  }
}

function scopeMismatch(rule: Rule, event: CanonicalEvent, instance: Instance | undefined): string | undefined {
  const sc = rule.scope;
  if (!sc) return undefined;
  if (sc.projects && !sc.projects.includes(event.project)) return `project ${event.project} not in ${sc.projects.join(', ')}`;
  if (sc.targets && !sc.targets.includes(event.target)) return `target ${event.target} not in ${sc.targets.join(', ')}`;
  if (sc.locations && !sc.locations.includes(event.location)) return `member ${event.location} not in ${sc.locations.join(', ')}`;
  if (rule.scopeFilter) {
    if (!instance) return `filter "${sc.filter}" needs the instance, which is gone`;
    if (!evaluateFilter(rule.scopeFilter, instance)) return `filter "${sc.filter}" does not match`;
  }
  return undefined;
}
