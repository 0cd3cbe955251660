import type { Alert } from '../alerts/alert.js';
import { reflexLines } from './message-text.js';
import type { Notification } from './notification.js';
import type { OutgoingRequest } from './outgoing-request.js';
import type { AlertmanagerConfig } from './receiver-config.js';

/** Alertmanager's alerts endpoint, appended to the receiver's URL unless it already ends with it. */
const alertsPath = '/api/v2/alerts';

/** Prometheus label names: letters, digits and `_`, not starting with a digit. */
function labelName(key: string): string {
  const name = key.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

/**
 * The alert's labels, which are its identity in Alertmanager (it merges alerts with the same
 * labels, so a re-posted alert is the same alert): `alertname` is the kind, then the place and
 * the alert's own labels (names made valid). Severity is a label too, for routing.
 */
export function alertmanagerLabels(a: Alert): Record<string, string> {
  const own = Object.fromEntries(Object.entries(a.labels).map(([k, v]) => [labelName(k), v]));
  return { ...own, alertname: a.kind, severity: a.severity, target: a.target, project: a.project, instance: a.instance, source: 'reflex' };
}

/**
 * One postableAlert (Alertmanager API v2): labels, annotations (summary, what Reflex did,
 * correlation id; the triage: acknowledged_by/_at, assignee, the newest note), `startsAt`, and `endsAt`: the recovery time of a resolved alert, else
 * `firingTtlMs` after the message was queued, so a Reflex that stops reporting does not leave an
 * alert firing for ever (and Alertmanager's own resolve_timeout never resolves it early).
 */
function postableAlert(cfg: AlertmanagerConfig, a: Alert, createdAt: Date): Record<string, unknown> {
  const endsAt = a.status === 'resolved' ? (a.endsAt ?? createdAt.toISOString()) : new Date(createdAt.getTime() + cfg.firingTtlMs).toISOString();
  return {
    labels: alertmanagerLabels(a),
    annotations: {
      summary: a.summary,
      description: reflexLines(a).join('\n'),
      correlation_id: a.correlationId,
      ...(a.outcome ? { outcome: a.outcome } : {}),
      // An update of the same alert (same labels): Alertmanager replaces its annotations.
      ...(a.triage?.acknowledged ? { acknowledged_by: a.triage.acknowledged.by, acknowledged_at: a.triage.acknowledged.at } : {}),
      ...(a.triage?.assignee ? { assignee: a.triage.assignee.name } : {}),
      ...(a.triage?.notes.length ? { note: a.triage.notes.at(-1)!.text } : {}),
    },
    startsAt: a.startsAt,
    endsAt,
    ...(a.auditUrl ? { generatorURL: a.auditUrl } : {}),
  };
}

/** The request posting a notification's alerts to `<url>/api/v2/alerts`; the same bytes on every retry. */
export function alertmanagerRequest(
  cfg: AlertmanagerConfig,
  url: string,
  headers: Record<string, string>,
  n: Notification,
  createdAt: Date,
): OutgoingRequest {
  const base = url.replace(/\/+$/, '');
  return {
    url: base.endsWith(alertsPath) ? base : `${base}${alertsPath}`,
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(n.alerts.map((a) => postableAlert(cfg, a, createdAt))),
  };
}
