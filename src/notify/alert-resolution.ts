import type { AuditLog } from '../audit/audit-log.js';
import { alertFingerprint, type Alert } from './alert.js';
import type { Notifier } from './notifier.js';

/** The kind of the alert raised when an action gives up (dead-lettered) on an instance. */
export const actionFailedKind = 'action-failed';

/** What an instance alert is about. */
export interface AlertSubject {
  target: string;
  project: string;
  instance: string;
}

/** Why an alert clears: one line, how it ended, and when (the recovery event's time; default now). */
export interface Resolution {
  summary: string;
  outcome: 'recovered' | 'remediated';
  endsAt?: string;
}

/** Where a resolution goes: the notifier, and the audit log that records it. */
export interface ResolutionDeps {
  notifier: Pick<Notifier, 'amend'>;
  audit?: AuditLog;
}

/**
 * Resolves the alert of this kind about the subject if it fires, and audits the transition (an
 * `alert` record with `resolved: true` in the alert's trail). The episode is over: the next time
 * the condition arises, a new alert fires, and so a new message. Returns the resolved alert, or
 * undefined when none was firing (another replica or path resolved it first).
 */
export async function resolveAlert(deps: ResolutionDeps, kind: string, subject: AlertSubject, why: Resolution): Promise<Alert | undefined> {
  const fingerprint = alertFingerprint({ kind, target: subject.target, project: subject.project, instance: subject.instance });
  // amend answers an unknown fingerprint without taking the alert's lock: most recoveries have no such alert.
  const resolved = await deps.notifier.amend(fingerprint, (known) => (known.status === 'firing' ? { status: 'resolved', endsAt: why.endsAt ?? new Date().toISOString(), summary: why.summary, outcome: why.outcome } : undefined));
  if (!resolved) return undefined;
  await deps.audit?.append({ type: 'alert', correlationId: resolved.correlationId, target: subject.target, instance: subject.instance, summary: `${kind} resolved: ${why.summary}`, severity: 'info', resolved: true, kind });
  return resolved;
}
