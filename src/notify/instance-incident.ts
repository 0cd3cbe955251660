import { StatusCode } from '../client/status-code.js';
import type { AlertKind } from '../alerts/catalogue.js';
import type { AlertInput } from '../alerts/alert.js';
import type { InstanceStatusEvent } from '../events/canonical-event.js';
import { describeStartFailure } from '../events/start-failure-text.js';

/** The alert kinds of instance incidents. A recovery (Running again) resolves each, and the instance's `action.failed` alert. */
export const instanceAlertKinds = {
  crashed: 'instance.crashed',
  error: 'instance.error',
  startFailed: 'instance.start-failed',
} as const satisfies Record<string, AlertKind>;

/** The alert kind of an incident event, or undefined when the event is not an incident. */
export function incidentKind(event: InstanceStatusEvent): string | undefined {
  if (event.to === StatusCode.Error) return instanceAlertKinds.error;
  if (event.to === StatusCode.Stopped && (event.intent === 'unrequested' || event.intent === 'unknown')) return instanceAlertKinds.crashed;
  if (event.to === StatusCode.Stopped && event.intent === 'failed-start') return instanceAlertKinds.startFailed;
  return undefined;
}

/**
 * The incident's alert as its audit record says it: the alert's summary, and for an incident
 * Reflex leaves alone (a stop whose cause is unknown, a failed start) what it does not do and why.
 */
export function auditSummary(event: InstanceStatusEvent, alert: AlertInput, acting: boolean): string {
  if (event.intent === 'failed-start' && event.startFailure)
    return `${describeStartFailure(event, event.startFailure)}; not a crash: Reflex does not restart it and counts no restart`;
  if (event.to === StatusCode.Stopped && event.intent === 'unknown' && !acting)
    return `${event.instance} found Stopped after a gap, cause unknown: Reflex does not start it; to start it: reflex heal ${event.instance}${event.project !== 'default' ? ` --project ${event.project}` : ''} (or lxc start ${event.instance})`;
  return alert.summary;
}

/** The incident's alert summary: what happened to the instance. */
export function incidentSummary(event: InstanceStatusEvent): string {
  if (event.to === StatusCode.Error) return `${event.instance} reports Error (112)`;
  if (event.intent === 'failed-start' && event.startFailure) return describeStartFailure(event, event.startFailure);
  if (event.intent === 'unknown')
    return `${event.instance} found Stopped after a gap, cause unknown (seen by a resync); Reflex does not start it on a guess: reflex heal ${event.instance}${event.project !== 'default' ? ` --project ${event.project}` : ''}, or lxc start ${event.instance}`;
  return `${event.instance} stopped without a request (a crash or a guest poweroff)`;
}
