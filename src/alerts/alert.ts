import { createHash } from 'node:crypto';
import { z } from 'zod';
import { fingerprintKind } from './catalogue.js';
import { triageSchema } from './triage.js';

/** How bad an alert is; routes match on it and receivers colour by it. */
export const severitySchema = z.enum(['info', 'warning', 'critical']);
export type Severity = z.infer<typeof severitySchema>;

/** One thing Reflex did about the condition: the action, how it ended and the operation it ran. */
export const alertActionSchema = z.object({
  action: z.string(),
  result: z.string(),
  summary: z.string().optional(),
  operationId: z.string().optional(),
});
export type AlertAction = z.infer<typeof alertActionSchema>;

/**
 * An alert as Reflex stores and forwards it. The fingerprint identifies the condition (the same
 * crash of the same instance), so a firing alert and the resolved one that clears it share it.
 */
export const alertSchema = z.object({
  fingerprint: z.string(),
  status: z.enum(['firing', 'resolved']),
  severity: severitySchema,
  /** What kind of condition, e.g. `instance.crashed`, `instance.crash-loop`. */
  kind: z.string(),
  target: z.string(),
  project: z.string(),
  instance: z.string(),
  /**
   * The cluster member (`location`) the condition is on, when known: instance alerts carry it, and
   * an alert about a member itself (`instance: 'member:NAME'`, e.g. a storm) gets it from there.
   * Not part of the fingerprint. Inhibition rules and silences (`--member`) match on it.
   */
  member: z.string().optional(),
  /** What happened, one line. */
  summary: z.string(),
  /** What Reflex did about it, in order. */
  actions: z.array(alertActionSchema).default([]),
  /** Overall outcome of what Reflex did (e.g. `restarted`, `quarantined`, `gave up`). */
  outcome: z.string().optional(),
  /** Audit correlation id of the incident (`reflex audit --correlation <id>`). */
  correlationId: z.string(),
  /** Link to the audit trail entry, when an audit URL base is configured. */
  auditUrl: z.string().optional(),
  labels: z.record(z.string(), z.string()).default({}),
  /**
   * A notice: about a moment (one frame, already handled), not a condition that lasts. It is shown
   * firing in one message and then resolves by itself (the group's next message says so), so it
   * never stays firing. Default: a condition, resolved by whoever raised it.
   */
  notice: z.boolean().optional(),
  /**
   * The incident's triage (acknowledged, assignee, the newest notes) while the alert fires: a
   * change is an update of this alert, sent at the group's next flush (alerts/triage.ts).
   */
  triage: triageSchema.optional(),
  /** ISO times the condition started and (when resolved) ended. */
  startsAt: z.string(),
  endsAt: z.string().optional(),
});
export type Alert = z.infer<typeof alertSchema>;

/** What a caller passes to raise an alert: the fingerprint, status and times are filled in when absent. */
export type AlertInput = Omit<z.input<typeof alertSchema>, 'fingerprint' | 'status' | 'startsAt'> & {
  fingerprint?: string;
  status?: 'firing' | 'resolved';
  startsAt?: string;
};

/** What a known alert's amendment may change: what Reflex did, the outcome, severity, the triage; `status: 'resolved'` with `endsAt` resolves it. */
export type AlertChange = Partial<Pick<Alert, 'summary' | 'actions' | 'outcome' | 'severity' | 'status' | 'endsAt' | 'triage'>>;

/**
 * The stable identity of a condition: kind, target, project, instance and labels. Severity,
 * summary and actions are left out so a change of wording does not open a second alert, and a
 * renamed kind counts by its former spelling (alerts/catalogue.ts).
 */
export function alertFingerprint(a: Pick<Alert, 'kind' | 'target' | 'project' | 'instance'> & { labels?: Record<string, string> }): string {
  const labels = Object.entries(a.labels ?? {}).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
  const identity = JSON.stringify([fingerprintKind(a.kind), a.target, a.project, a.instance, labels]);
  return createHash('sha256').update(identity).digest('hex').slice(0, 16);
}

/** Validates an alert input and fills in fingerprint, status and start time. */
export function toAlert(input: AlertInput, now = new Date()): Alert {
  const labels = input.labels ?? {};
  const member = input.member ?? (input.instance.startsWith('member:') ? input.instance.slice('member:'.length) : undefined);
  return alertSchema.parse({
    ...input,
    ...(member !== undefined ? { member } : {}),
    labels,
    status: input.status ?? 'firing',
    startsAt: input.startsAt ?? now.toISOString(),
    fingerprint: input.fingerprint ?? alertFingerprint({ ...input, labels }),
  });
}

/**
 * The value of a grouping or routing key on an alert: one of its fields (`kind`, `severity`,
 * `instance`, `project`, `target`, `member`, `status`) or, failing that, a label.
 */
export function alertValue(alert: Alert, key: string): string | undefined {
  switch (key) {
    case 'kind':
    case 'severity':
    case 'instance':
    case 'project':
    case 'target':
    case 'member':
    case 'status':
      return alert[key];
    default:
      return alert.labels[key];
  }
}
