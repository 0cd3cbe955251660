import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { CanonicalEvent } from '../events/canonical-event.js';
import { alertFingerprint, type AlertInput } from '../alerts/alert.js';
import type { Alerts } from '../alerts/alerts.js';
import type { RuleErrorSink } from './engine.js';
import type { Rule } from './rule.js';

/** The alert kind of a rule whose code keeps failing. */
export const ruleFailingKind = 'rule.failing';

/** Options of {@link RuleErrors}. */
export interface RuleErrorsOptions {
  logger: Logger;
  /** Counted once per failure, by rule (`reflex_rule_errors_total`). */
  counter?: Pick<Counter<'rule'>, 'inc'>;
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
  /** The alert raised for each failing rule, as raised (its resolution is the same alert, resolved). */
  private readonly firing = new Map<string, AlertInput>();
  private alerts: Pick<Alerts, 'raise' | 'resolve'> | undefined;
  private readonly threshold: number;
  private readonly windowMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: RuleErrorsOptions) {
    this.threshold = opts.threshold ?? 5;
    this.windowMs = opts.windowMs ?? 600_000;
    this.now = opts.now ?? Date.now;
  }

  /**
   * Raises and resolves the alerts through `alerts` from now on. The rules load (and report here)
   * before the process connects to Redis, where alerts are audited; until this is called, failures
   * are logged and counted only.
   */
  alertThrough(alerts: Pick<Alerts, 'raise' | 'resolve'>): void {
    this.alerts = alerts;
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
    const summary = `rule ${rule.name}${at ? ` (${at})` : ''} failed ${recent.length} times in ${Math.round(this.windowMs / 1000)} s; its when ${why}: ${error.message}. Its decisions count as not met until it is fixed (reflex rules reload)`;
    // One fingerprint for the rule whatever the event's target and project: replicas raising it share it.
    const fingerprint = alertFingerprint({ kind: ruleFailingKind, target: '', project: '', instance: `rule:${rule.name}` });
    const alert: AlertInput = {
      kind: ruleFailingKind,
      severity: 'warning',
      summary,
      target: event.target,
      project: event.project,
      instance: `rule:${rule.name}`,
      correlationId: event.id,
      fingerprint,
      startsAt: new Date(now).toISOString(),
    };
    this.firing.set(rule.name, alert);
    this.send(rule.name, (alerts) => alerts.raise(alert, { record: { rule: rule.name } }));
  }

  answered(rule: Rule): void {
    const alert = this.firing.get(rule.name);
    if (!alert) return;
    this.firing.delete(rule.name);
    this.failures.delete(rule.name);
    this.send(rule.name, (alerts) =>
      alerts.resolve({ ...alert, summary: `rule ${rule.name} evaluates cleanly again`, outcome: 'recovered' }, { record: { rule: rule.name } }),
    );
  }

  /** The rules were replaced (a reload): every failing rule's alert resolves, and counting starts again. */
  reset(): void {
    for (const [rule, alert] of this.firing)
      this.send(rule, (alerts) =>
        alerts.resolve({ ...alert, summary: `rule ${rule}: the rules were reloaded`, outcome: 'reloaded' }, { record: { rule } }),
      );
    this.firing.clear();
    this.failures.clear();
  }

  private send(rule: string, call: (alerts: Pick<Alerts, 'raise' | 'resolve'>) => Promise<unknown>): void {
    if (this.alerts) void call(this.alerts).catch((err: unknown) => this.opts.logger.error({ err, rule }, 'rule failure alert not sent'));
  }
}
