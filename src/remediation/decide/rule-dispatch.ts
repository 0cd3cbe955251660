import { crashLoopKind, type Alerts } from '../../alerts/alerts.js';
import type { AuditLog } from '../../audit/audit-log.js';
import type { Instance } from '../../client/instance.js';
import type { CanonicalEvent } from '../../events/canonical-event.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { RuleResponse } from '../../notify/instance-alerts.js';
import type { InstanceRef } from '../../redis/key-space.js';
import type { Decision, RuleEngine } from '../../rules/engine.js';
import { approvalOf } from '../../rules/rule.js';
import { actionJobOptions, type ActionJob } from '../../actions/action-job.js';
import type { ActionGate } from './action-gate.js';
import { identityOf } from '../instance-identity.js';
import type { PendingActions } from '../pending-actions.js';
import { Trail } from '../trail.js';

/** What the rules' decisions on an event are taken through. */
export interface RuleDispatchDeps {
  audit: AuditLog;
  gate: ActionGate;
  /** Where admitted jobs go: queued, or held for approval. */
  pending: PendingActions;
  alerts: Pick<Alerts, 'raise'>;
  metrics?: Metrics;
  /** Attempts per action job (first try included). Default 5. */
  actionAttempts?: number;
}

type Matched = Extract<Decision, { matched: true }>;

/**
 * Lets every rule decide on the event (on the instance as read), audits each decision, and takes
 * each matched one through the gate to the actions queue. Answers what each rule did.
 */
export async function decideAndDispatch(
  deps: RuleDispatchDeps,
  engine: RuleEngine,
  event: CanonicalEvent,
  ref: InstanceRef | undefined,
  instance: Instance | undefined,
): Promise<RuleResponse[]> {
  const responses: RuleResponse[] = [];
  const decisions = await engine.decide(event, instance);
  const trail = Trail.ofEvent(deps.audit, event, ref?.instance).with({ uuid: identityOf(instance).uuid });
  for (const d of decisions) {
    if (!d.matched || !ref) {
      deps.metrics?.ruleDecisions.inc({ rule: d.rule, decision: d.matched ? 'matched' : 'skipped' });
      // Actions act on an instance: an event naming none (an alert without an instance label) is decided, not acted on.
      const summary = d.matched ? `${d.summary}; no action: the event names no instance` : d.summary;
      await trail.with({ rule: d.rule }).decision(summary, { matched: d.matched });
      responses.push({ rule: d.rule, result: 'skipped', summary: d.summary, actions: [] });
      continue;
    }
    responses.push(await dispatch(deps, d, event, ref, instance));
  }
  return responses;
}

/** Runs a matched decision through the gate (silences, cooldown, crash-loop budget, storm) and queues its actions. */
async function dispatch(
  deps: RuleDispatchDeps,
  d: Matched,
  event: CanonicalEvent,
  ref: InstanceRef,
  instance: Instance | undefined,
): Promise<RuleResponse> {
  // The instance that had the incident: its jobs, budget and audit records are about it, not its name.
  const identity = identityOf(instance);
  const base = { correlationId: event.id, target: event.target, instance: ref.instance, rule: d.rule, uuid: identity.uuid };
  const trail = new Trail(deps.audit, base);
  const verdict = d.dryRun ? ({ admitted: true, delayMs: 0 } as const) : await deps.gate.admit(d.definition, event, ref, instance);
  deps.metrics?.ruleDecisions.inc({ rule: d.rule, decision: verdict.admitted ? 'matched' : 'suppressed' });
  if (!verdict.admitted) {
    await trail.decision(verdict.summary, { matched: true, suppressed: true });
    if (verdict.alert) {
      // Audited in the trail of the instance whose event it was, also when the alert is about its member (a storm).
      const alert = {
        kind: verdict.alertKind ?? crashLoopKind,
        severity: 'critical',
        summary: verdict.alert,
        target: event.target,
        project: event.project,
        instance: verdict.alertSubject ?? ref.instance,
        ...(event.location ? { member: event.location } : {}),
        correlationId: event.id,
      } as const;
      await deps.alerts.raise(alert, { once: `gate-alert:${event.id}:${d.rule}`, record: base });
    }
    return { rule: d.rule, result: 'suppressed', summary: verdict.summary, actions: [] };
  }
  const approval = d.dryRun ? undefined : approvalOf(d.definition);
  const note = [
    'note' in verdict ? verdict.note : undefined,
    approval && `held for the approval of ${approval.role === 'admin' ? 'an admin' : 'an operator'}`,
  ].filter(Boolean);
  await trail.decision(`${d.summary}${note.length ? `; ${note.join('; ')}` : ''}`, { matched: true });
  const jobs = jobsOf(d, event, ref, identity, verdict.delayMs, deps.actionAttempts);
  if (approval) {
    // Nothing is queued until someone decides: the request waits in the instance's pending actions.
    const held = await deps.pending.holdForApproval(ref, {
      rule: d.rule,
      target: ref.target,
      project: ref.project,
      instance: ref.instance,
      ...(identity.uuid ? { uuid: identity.uuid } : {}),
      ...(event.location ? { location: event.location } : {}),
      correlationId: event.id,
      summary: d.summary,
      role: approval.role,
      timeoutMs: approval.timeoutMs,
      jobs,
    });
    const summary = `awaiting approval ${held.id} until ${new Date(held.expiresAt).toISOString()}`;
    return { rule: d.rule, result: 'suppressed', summary, actions: [] };
  }
  await deps.pending.queueJobs(ref, jobs);
  for (const j of jobs)
    await trail.queued(
      { jobId: j.opts.jobId },
      `queued ${j.data.action}${d.dryRun ? ' (dry-run)' : ''}${j.opts.delay ? ` to run in ${j.opts.delay} ms` : ''}`,
    );
  return {
    rule: d.rule,
    result: d.dryRun ? 'dry-run' : 'queued',
    summary: d.summary,
    actions: jobs.map((j) => ({ action: j.data.action, delayMs: j.opts.delay ?? 0 })),
  };
}

/** The action jobs of an admitted decision, with deterministic ids (a redelivered event queues none twice). */
function jobsOf(
  d: Matched,
  event: CanonicalEvent,
  ref: InstanceRef,
  identity: ReturnType<typeof identityOf>,
  delayMs: number,
  attempts: number | undefined,
): { name: string; data: ActionJob; opts: ReturnType<typeof actionJobOptions> }[] {
  const incidentAt = Date.parse(event.timestamp);
  return d.actions.map((a, i) => {
    const data: ActionJob = {
      rule: d.rule,
      action: a.action,
      params: a.params ?? {},
      target: ref.target,
      project: ref.project,
      instance: ref.instance,
      correlationId: event.id,
      incidentAt: Number.isNaN(incidentAt) ? Date.now() : incidentAt,
      ...(identity.uuid || identity.createdAt ? { identity } : {}),
      event,
      origin: 'rule',
      dryRun: d.dryRun,
      location: event.location,
      ...(event.kind === 'rule.event' ? { chain: event.chain } : {}),
      ...(a.onFailure?.length ? { onFailure: a.onFailure.map((b) => ({ action: b.action, params: b.params ?? {} })) } : {}),
    };
    const opts = actionJobOptions({ jobId: `${d.rule}:${event.id}:${i}`, attempts, delayMs, priority: d.definition.priority });
    return { name: a.action, data, opts };
  });
}
