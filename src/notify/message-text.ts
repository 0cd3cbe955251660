import type { Alert } from './alert.js';
import { firingAlerts, resolvedAlerts, type Notification } from './notification.js';

/**
 * The words every chat receiver uses, so Slack, Mattermost, Discord and Teams say the same thing:
 * a title, then per alert what happened, what Reflex did (actions, operation ids, outcome) and
 * where its audit trail is.
 */

/** `[FIRING:2] instance.crashed: web-1, web-2` or `[RESOLVED] instance.crashed: web-1`. */
export function notificationTitle(n: Notification): string {
  const firing = firingAlerts(n).length;
  const head = n.status === 'firing' ? `[FIRING:${firing}]` : '[RESOLVED]';
  const kinds = [...new Set(n.alerts.map((a) => a.kind))].join(', ');
  const instances = [...new Set(n.alerts.map((a) => a.instance))].join(', ');
  return `${head} ${kinds}: ${instances}`;
}

/** Where the instance is: `web-1 (project default on local)`. */
export function alertPlace(a: Alert): string {
  return `${a.instance} (project ${a.project} on ${a.target})`;
}

/**
 * What Reflex did, one line per action, then the outcome:
 * `Reflex ran start: done, started (was Stopped) [operation 1234]`, `Outcome: restarted`; an
 * action not run yet reads `Reflex queued start, by rule restart-on-crash`.
 */
export function reflexLines(a: Alert): string[] {
  const lines = a.actions.map((x) => {
    const tail = `${x.summary ? `, ${x.summary}` : ''}${x.operationId ? ` [operation ${x.operationId}]` : ''}`;
    return x.result === 'queued' ? `Reflex queued ${x.action}${tail}` : `Reflex ran ${x.action}: ${x.result}${tail}`;
  });
  if (lines.length === 0) lines.push('Reflex took no action');
  if (a.outcome) lines.push(`Outcome: ${a.outcome}`);
  return lines;
}

/** The correlation id to look up with `reflex audit`, after the audit link when one is configured. */
export function auditReference(a: Alert): string {
  return a.auditUrl ? `${a.auditUrl} (correlation id ${a.correlationId})` : `correlation id ${a.correlationId}`;
}

/** Cuts `text` to `max` characters, marking the cut, so a service's field limit never rejects a message. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
