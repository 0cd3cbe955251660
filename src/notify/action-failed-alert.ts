import type { AuditLog } from '../audit/audit-log.js';
import { alertFingerprint, type Alert } from './alert.js';
import type { Notifier } from './notifier.js';

/** The kind of the alert raised when an action gives up (dead-lettered) on an instance. */
export const actionFailedKind = 'action-failed';

/** The instance an `action-failed` alert is about. */
export interface ActionFailedSubject {
  target: string;
  project: string;
  instance: string;
}

/** Why an `action-failed` alert clears: one line, how it ended, and when (the recovery event's time; default now). */
export interface ActionFailedResolution {
  summary: string;
  outcome: 'recovered' | 'remediated';
  endsAt?: string;
}

/**
 * Resolves the instance's `action-failed` alert if it fires, and audits the transition (an
 * `alert` record with `resolved: true` in the failure's trail). The failure episode is over: the
 * next action that gives up on the instance fires a new alert, and so a new message. Returns the
 * resolved alert, or undefined when none was firing (another replica or path resolved it first).
 */
export async function resolveActionFailed(deps: { notifier: Pick<Notifier, 'resolve'>; audit?: AuditLog }, subject: ActionFailedSubject, why: ActionFailedResolution): Promise<Alert | undefined> {
  const fingerprint = alertFingerprint({ kind: actionFailedKind, target: subject.target, project: subject.project, instance: subject.instance });
  const resolved = await deps.notifier.resolve(fingerprint, { summary: why.summary, outcome: why.outcome, ...(why.endsAt ? { endsAt: why.endsAt } : {}) });
  if (!resolved) return undefined;
  await deps.audit?.append({ type: 'alert', correlationId: resolved.correlationId, target: subject.target, instance: subject.instance, summary: `${actionFailedKind} resolved: ${why.summary}`, severity: 'info', resolved: true });
  return resolved;
}
