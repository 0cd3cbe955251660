import type { Alert } from '../alerts/alert.js';
import { triageLines } from '../alerts/triage.js';
import { firingAlerts, resolvedAlerts, type Notification } from './notification.js';
import { fillPlaceholders, placeholders } from './placeholders.js';

/**
 * The words every chat receiver uses, so Slack, Mattermost, Discord and Teams say the same thing:
 * a title, then per alert what happened, what Reflex did (actions, operation ids, outcome) and
 * where its audit trail is.
 */

const distinct = (values: string[]): string => [...new Set(values)].join(', ');

/** The values a receiver's `titleTemplate` may name (and `group.KEY` for each group label). */
const titleFields = {
  status: (n: Notification) => n.status.toUpperCase(),
  firing: (n: Notification) => String(firingAlerts(n).length),
  resolved: (n: Notification) => String(resolvedAlerts(n).length),
  count: (n: Notification) => String(n.alerts.length),
  kinds: (n: Notification) => distinct(n.alerts.map((a) => a.kind)),
  instances: (n: Notification) => distinct(n.alerts.map((a) => a.instance)),
  projects: (n: Notification) => distinct(n.alerts.map((a) => a.project)),
  targets: (n: Notification) => distinct(n.alerts.map((a) => a.target)),
  receiver: (n: Notification) => n.receiver,
} as const;

/** The placeholders of a title template that do not exist (empty when it is valid). */
export function unknownTitlePlaceholders(template: string): string[] {
  return placeholders(template)
    .filter((p) => (p.path === undefined ? !(p.name in titleFields) : p.name !== 'group'))
    .map((p) => p.text);
}

/**
 * `[FIRING:2] instance.crashed: web-1, web-2` or `[RESOLVED] instance.crashed: web-1`; with a
 * receiver's `titleTemplate`, that text with its placeholders filled in (plain text, no code).
 */
export function notificationTitle(n: Notification, template?: string): string {
  if (template !== undefined)
    return fillPlaceholders(template, ({ name, path }) =>
      path !== undefined
        ? name === 'group'
          ? (n.groupLabels[path] ?? '')
          : undefined
        : name in titleFields
          ? titleFields[name as keyof typeof titleFields](n)
          : undefined,
    );
  const head = n.status === 'firing' ? `[FIRING:${firingAlerts(n).length}]` : '[RESOLVED]';
  return `${head} ${titleFields.kinds(n)}: ${titleFields.instances(n)}`;
}

/** Where the instance is: `web-1 (project default on local)`. */
export function alertPlace(a: Alert): string {
  return `${a.instance} (project ${a.project} on ${a.target})`;
}

/**
 * What Reflex did, one line per action, then the outcome:
 * `Reflex ran start: done, started (was Stopped) [operation 1234]`, `Outcome: restarted`; an
 * action not run yet reads `Reflex queued start, by rule restart-on-crash`. Then the incident's
 * triage by the people on call, when there is one (`Acknowledged by alice at …`, `Assigned to bob
 * (by alice at …)`, `Note by alice at …: …`), so every receiver shows an update the same way.
 */
export function reflexLines(a: Alert): string[] {
  const lines = a.actions.map((x) => {
    const tail = `${x.summary ? `, ${x.summary}` : ''}${x.operationId ? ` [operation ${x.operationId}]` : ''}`;
    return x.result === 'queued' ? `Reflex queued ${x.action}${tail}` : `Reflex ran ${x.action}: ${x.result}${tail}`;
  });
  if (lines.length === 0) lines.push('Reflex took no action');
  if (a.outcome) lines.push(`Outcome: ${a.outcome}`);
  lines.push(...triageLines(a.triage));
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
