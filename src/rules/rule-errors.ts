import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { CanonicalEvent } from '../events/canonical-event.js';
import { alertFingerprint, type AlertInput } from '../notify/alert.js';
import type { RuleErrorSink } from './engine.js';
import type { Rule } from './rule.js';

/** The alert kind of a rule whose code keeps failing. */
export const ruleFailingKind = 'rule.failing';

/** Where {@link RuleErrors} raises and resolves its alerts (the notifier). */
export interface RuleAlertSink {
  notify(alert: AlertInput): Promise<unknown>;
  resolve(fingerprint: string, update: { summary?: string; outcome?: string }): Promise<unknown>;
}

/** Options of {@link RuleErrors}. */
export interface RuleErrorsOptions {
  logger: Logger;
  /** Counted once per failure, by rule (`reflex_rule_errors_total`). */
  counter?: Pick<Counter<'rule'>, 'inc'>;
  /** Read when an alert is due: the notifier, or undefined when no receiver is configured (the log and the metric remain). */
  alerts?: () => RuleAlertSink | undefined;
  /** Failures of one rule within {@link windowMs} that raise its alert. Default 5. */
  threshold?: number;
  /** Default 600 000 ms (10 min). */
  windowMs?: number;
  now?: () => number;
}

/** The instance (or instances) an event is about, for the log. */
function instanceOf(event: CanonicalEvent): string | undefined {
  if (event.kind === 'operation.status') return event.instances.join(',') || undefined;
  return event.instance;
}

/**
 * Makes a rule whose code fails loud: each `when` that throws or times out (the decision is then
 * "not met", and the audit says so) is logged at warn with the rule, the file:line of its
 * `defineRule`, the instance and the error, and counted by rule. A rule that fails `threshold`
 * times within `windowMs` on this replica raises one warning alert (kind `rule.failing`, about
 * `rule:NAME`); it resolves at the rule's next clean evaluation, or when a reload replaces the
 * rules ({@link reset}). Counted per replica; replicas raising the same rule's alert share its
 * fingerprint, so receivers get one message.
 */
export class RuleErrors implements RuleErrorSink {
  private readonly failures = new Map<string, number[]>();
  private readonly firing = new Map<string, string>();
  private readonly threshold: number;
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: RuleErrorsOptions) {
    this.threshold = opts.threshold ?? 5;
    this.windowMs = opts.windowMs ?? 600_000;
    this.now = opts.now ?? Date.now;
  }

  failed(rule: Rule, event: CanonicalEvent, error: Error, why: 'threw' | 'timed out'): void {
    const at = rule.definedAt ? `${rule.definedAt.file}:${rule.definedAt.line}` : undefined;
    const instance = instanceOf(event);
    this.opts.logger.warn(
      { rule: rule.name, at, instance, project: event.project, target: event.target, event: event.id, err: error },
      `rule ${rule.name}${at ? ` (${at})` : ''}: when ${why} on ${instance ?? event.kind}: ${error.message}`,
    );
    this.opts.counter?.inc({ rule: rule.name });
    const now = this.now();
    const recent = [...(this.failures.get(rule.name) ?? []).filter((t) => t > now - this.windowMs), now];
    this.failures.set(rule.name, recent);
    if (recent.length < this.threshold || this.firing.has(rule.name)) return;
    const fingerprint = alertFingerprint({ kind: ruleFailingKind, target: '', project: '', instance: `rule:${rule.name}` });
    this.firing.set(rule.name, fingerprint);
    const summary = `rule ${rule.name}${at ? ` (${at})` : ''} failed ${recent.length} times in ${Math.round(this.windowMs / 1000)} s; its when ${why}: ${error.message}. Its decisions count as not met until it is fixed (reflex rules reload)`;
    const alert: AlertInput = { kind: ruleFailingKind, severity: 'warning', summary, target: event.target, project: event.project, instance: `rule:${rule.name}`, correlationId: event.id, fingerprint };
    this.send(rule.name, (sink) => sink.notify(alert));
  }

  answered(rule: Rule): void {
    const fingerprint = this.firing.get(rule.name);
    if (!fingerprint) return;
    this.firing.delete(rule.name);
    this.failures.delete(rule.name);
    this.send(rule.name, (sink) => sink.resolve(fingerprint, { summary: `rule ${rule.name} evaluates cleanly again`, outcome: 'recovered' }));
  }

  /** The rules were replaced (a reload): every failing rule's alert resolves, and counting starts again. */
  reset(): void {
    for (const [rule, fingerprint] of this.firing) this.send(rule, (sink) => sink.resolve(fingerprint, { summary: `rule ${rule}: the rules were reloaded`, outcome: 'reloaded' }));
    this.firing.clear();
    this.failures.clear();
  }

  private send(rule: string, call: (sink: RuleAlertSink) => Promise<unknown>): void {
    const sink = this.opts.alerts?.();
    if (sink) void call(sink).catch((err: unknown) => this.opts.logger.error({ err, rule }, 'rule failure alert not sent'));
  }
}
