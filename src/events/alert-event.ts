import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { AlertEvent } from './canonical-event.js';

/**
 * Alerts received from outside, turned into canonical `alert` events: the payload of an
 * Alertmanager webhook (version 4, as its `webhook_config` sends it) and the payload of the generic
 * signed webhook. Both are validated here, at the edge; nothing else reads them raw.
 */

const labelSet = z.record(z.string(), z.string());

/** One alert as Alertmanager sends it (extra fields, e.g. Grafana's `silenceURL`, are allowed). */
const alertmanagerAlertSchema = z.looseObject({
  status: z.enum(['firing', 'resolved']),
  labels: labelSet.refine((l) => typeof l.alertname === 'string' && l.alertname !== '', 'needs an alertname label'),
  annotations: labelSet.default({}),
  startsAt: z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'an RFC 3339 time'),
  endsAt: z.string().optional(),
  generatorURL: z.string().optional(),
  /** Alertmanager ≥ 0.19 sends it; derived from the labels when absent. */
  fingerprint: z.string().min(1).optional(),
});

/**
 * The body of an Alertmanager webhook (https://prometheus.io/docs/alerting/latest/configuration/#webhook_config):
 * a group of alerts with the group's labels. Only `version: "4"` exists; another version is refused,
 * so a future format change is a 400 someone sees, not alerts silently misread.
 */
export const alertmanagerPayloadSchema = z.looseObject({
  version: z.literal('4'),
  receiver: z.string(),
  status: z.enum(['firing', 'resolved']),
  alerts: z.array(alertmanagerAlertSchema).min(1),
  groupLabels: labelSet.default({}),
  commonLabels: labelSet.default({}),
  commonAnnotations: labelSet.default({}),
  externalURL: z.string().optional(),
  groupKey: z.string().optional(),
  truncatedAlerts: z.number().int().min(0).optional(),
});
export type AlertmanagerPayload = z.infer<typeof alertmanagerPayloadSchema>;

/**
 * The body of the generic signed webhook: `{ "alerts": [ … ] }`, each alert with `labels` (holding
 * `alertname`, or given as `alertname`), and optionally `status` (default firing), `annotations`,
 * `startsAt`, `endsAt`, `fingerprint`. An Alertmanager body fits it too.
 */
export const webhookPayloadSchema = z.looseObject({
  alerts: z
    .array(
      z
        .looseObject({
          alertname: z.string().min(1).optional(),
          status: z.enum(['firing', 'resolved']).default('firing'),
          labels: labelSet.default({}),
          annotations: labelSet.default({}),
          startsAt: z
            .string()
            .refine((s) => !Number.isNaN(Date.parse(s)), 'an RFC 3339 time')
            .optional(),
          endsAt: z.string().optional(),
          generatorURL: z.string().optional(),
          fingerprint: z.string().min(1).optional(),
        })
        .refine((a) => a.alertname ?? a.labels.alertname, 'needs an alertname (field or label)'),
    )
    .min(1),
});
export type WebhookPayload = z.infer<typeof webhookPayloadSchema>;

/** How labels map to the instance, project and target an alert is about. */
export interface AlertMapping {
  /** Labels tried in order for the instance name. Default `lxd_instance`, `instance`, `name`. */
  instanceLabels?: readonly string[];
  /** Label naming the project. Default `project`; absent label: `default`. */
  projectLabel?: string;
  /** Label naming the target (a configured target's name or id). Default `lxd_target`; absent label: `defaultTarget`. */
  targetLabel?: string;
  /** The target an alert is about when no label names one (the id of a configured target). */
  defaultTarget: string;
  /** Configured targets: name or id → id. */
  targets: ReadonlyMap<string, string>;
}

export const defaultInstanceLabels = ['lxd_instance', 'instance', 'name'] as const;

/** An instance name as LXD accepts it: a host name label (letters, digits, dashes; not all digits). */
const instanceName = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * The instance named by the first of `labels` that holds one. A `:port` suffix is dropped (an
 * exporter's scrape address `web-1:9100`); a value that is still no valid instance name (an IP
 * address, a fully qualified host name, a URL) names nothing, and the next label is tried.
 */
export function instanceOf(labels: Record<string, string>, names: readonly string[] = defaultInstanceLabels): string | undefined {
  for (const name of names) {
    const value = labels[name]?.replace(/:\d{1,5}$/, '');
    if (value && instanceName.test(value) && !/^\d+$/.test(value)) return value;
  }
  return undefined;
}

/** Why an alert cannot be mapped (an unknown target label), for the 400 answer. */
export class AlertMappingError extends Error {}

/** A fingerprint from the label set, as Alertmanager derives its own (when the sender gave none). */
function labelsFingerprint(labels: Record<string, string>): string {
  const h = createHash('sha256');
  for (const k of Object.keys(labels).sort()) h.update(`${k}\u0000${labels[k]}\u0000`);
  return h.digest('hex').slice(0, 16);
}

/** The event id: the same alert episode (fingerprint, startsAt) in the same status is one event. */
export function alertEventId(source: AlertEvent['source'], target: string, fingerprint: string, status: string, startsAt: string): string {
  return createHash('sha256').update(`alert|${source}|${target}|${fingerprint}|${status}|${startsAt}`).digest('hex').slice(0, 32);
}

interface AlertInput {
  status: 'firing' | 'resolved';
  alertname: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt?: string;
  generatorURL?: string;
  fingerprint?: string;
}

/** `episode` stands in for startsAt in the id when the sender gave no startsAt. */
function toEvent(source: AlertEvent['source'], a: AlertInput, map: AlertMapping, receivedAt: Date, episode?: string): AlertEvent {
  const targetLabel = map.targetLabel ?? 'lxd_target';
  const named = a.labels[targetLabel];
  const target = named === undefined ? map.defaultTarget : map.targets.get(named);
  if (target === undefined)
    throw new AlertMappingError(
      `alert ${a.alertname}: label ${targetLabel}="${named}" names no configured target (${[...new Set(map.targets.keys())].join(', ')})`,
    );
  const fingerprint = a.fingerprint ?? labelsFingerprint(a.labels);
  const instance = instanceOf(a.labels, map.instanceLabels);
  // Alertmanager's "no end" is Go's zero time; it says nothing, so it is left out.
  const endsAt = a.endsAt && !a.endsAt.startsWith('0001-01-01') ? a.endsAt : undefined;
  return {
    kind: 'alert',
    id: alertEventId(source, target, fingerprint, a.status, episode ?? a.startsAt),
    target,
    location: 'none',
    project: a.labels[map.projectLabel ?? 'project'] || 'default',
    // When it was received: the rules, the crash-loop budget and the archive order by it.
    timestamp: receivedAt.toISOString(),
    synthetic: false,
    source,
    alertname: a.alertname,
    status: a.status,
    labels: a.labels,
    annotations: a.annotations,
    startsAt: a.startsAt,
    ...(endsAt ? { endsAt } : {}),
    fingerprint,
    ...(instance ? { instance } : {}),
    ...(a.generatorURL ? { generatorURL: a.generatorURL } : {}),
  };
}

/** The events of an Alertmanager webhook, one per alert. Throws AlertMappingError for an alert naming an unknown target. */
export function alertmanagerEvents(payload: AlertmanagerPayload, map: AlertMapping, receivedAt = new Date()): AlertEvent[] {
  return payload.alerts.map((a) => toEvent('alertmanager', { ...a, alertname: a.labels.alertname! }, map, receivedAt));
}

/**
 * The events of a generic webhook, one per alert. An alert without `startsAt` takes the message's
 * time, and its id the message id (`webhook-id`, the same on every retry), so a retry is one event.
 */
export function webhookEvents(
  payload: WebhookPayload,
  map: AlertMapping,
  message: { id: string; timestamp: number },
  receivedAt = new Date(),
): AlertEvent[] {
  return payload.alerts.map((a, i) => {
    const alertname = a.alertname ?? a.labels.alertname!;
    const labels = { ...a.labels, alertname };
    const startsAt = a.startsAt ?? new Date(message.timestamp * 1000).toISOString();
    return toEvent('webhook', { ...a, alertname, labels, startsAt }, map, receivedAt, a.startsAt ? undefined : `${message.id}#${i}`);
  });
}

/** What a zod error says, field by field (`alerts.0.status: Invalid option…`). */
export function payloadProblem(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
}
