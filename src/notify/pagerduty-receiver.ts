import type { Alert } from '../alerts/alert.js';
import { alertPlace, reflexLines, truncate } from './message-text.js';
import type { Notification } from './notification.js';
import type { OutgoingRequest } from './outgoing-request.js';
import type { PagerDutyConfig } from './receiver-config.js';

/** The Events API v2 endpoint; EU accounts use https://events.eu.pagerduty.com/v2/enqueue. */
export const pagerDutyEventsUrl = 'https://events.pagerduty.com/v2/enqueue';

/** Reflex severities as PagerDuty's (`critical`, `error`, `warning`, `info`). */
const severities = { critical: 'critical', warning: 'warning', info: 'info' } as const;

/**
 * The alert's `dedup_key`: the condition (fingerprint) and when this occurrence started, so the
 * resolve closes exactly the alert its trigger opened, a re-sent trigger adds to that alert
 * instead of opening a second one, and the next occurrence of the condition opens a new alert.
 */
export function pagerDutyDedupKey(a: Alert): string {
  return `reflex:${a.fingerprint}:${a.startsAt}`;
}

/** One Events API v2 alert event: `trigger` for a firing alert, `resolve` for a resolved one. */
function alertEvent(cfg: PagerDutyConfig, routingKey: string, a: Alert): Record<string, unknown> {
  const common = { routing_key: routingKey, dedup_key: pagerDutyDedupKey(a) };
  if (a.status === 'resolved') return { ...common, event_action: 'resolve' };
  return {
    ...common,
    event_action: 'trigger',
    payload: {
      summary: truncate(`${a.kind} ${alertPlace(a)}: ${a.summary}`, 1024),
      source: `${a.target}/${a.project}/${a.instance}`,
      severity: severities[a.severity],
      timestamp: a.startsAt,
      component: a.instance,
      group: a.project,
      class: a.kind,
      custom_details: { reflex: reflexLines(a), correlationId: a.correlationId, target: a.target, project: a.project, labels: a.labels },
    },
    client: cfg.client,
    ...(a.auditUrl ? { client_url: a.auditUrl, links: [{ href: a.auditUrl, text: 'Reflex audit trail' }] } : {}),
  };
}

/**
 * The requests of one notification: one event per alert (the Events API takes one at a time), in
 * the notification's order; a firing alert whose incident was acknowledged (its triage) is
 * followed by an `acknowledge` of the same `dedup_key`. Every request of a retry carries the same bytes; PagerDuty merges a
 * repeated trigger into the open alert of its `dedup_key` and drops a repeated resolve.
 */
export function pagerDutyRequests(cfg: PagerDutyConfig, routingKey: string, n: Notification): OutgoingRequest[] {
  const request = (event: Record<string, unknown>) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
  // An incident acknowledged in Reflex is acknowledged in PagerDuty too, after the trigger that carries its triage.
  return n.alerts.flatMap((a) => [
    request(alertEvent(cfg, routingKey, a)),
    ...(a.status === 'firing' && a.triage?.acknowledged
      ? [request({ routing_key: routingKey, dedup_key: pagerDutyDedupKey(a), event_action: 'acknowledge' })]
      : []),
  ]);
}
