import type { AuditLog, StoredAuditRecord } from '../../audit/audit-log.js';
import { alertNotesKept, applyTriage, triageWords, type Triage, type TriageChange } from '../../alerts/triage.js';
import type { AlertUpdates } from '../../notify/alert-update.js';
import type { OperatorOrigin } from '../../remediation/operator-actions.js';
import { incidentOf, type Incident } from './incident-story.js';

/** What triage reads and writes: the audit (where incidents and their triage live) and, when notifications are configured, the firing alerts. */
export interface TriageDeps {
  audit: Pick<AuditLog, 'append' | 'records'>;
  /** None: no notifier holds alerts (nothing configured): the triage is audited only. */
  updates?: Pick<AlertUpdates, 'update'>;
}

/** What a triage step did. */
export interface TriageOutcome {
  /** False when it changed nothing (acknowledged already, the same assignee): nothing was audited or sent. */
  changed: boolean;
  /** In words: `alice acknowledged the incident of default/web-1 (crashed at …)`, or why nothing changed. */
  summary: string;
  /** The incident's triage after the step. */
  triage: Triage | undefined;
  /** The firing alerts updated (each goes to its receivers at its group's next flush). */
  alerts: number;
}

/**
 * The incident of a correlation id (an alert's `correlationId`, the console's incident), read from
 * the audit records since `since`; undefined when that id opened no incident (an operator's stop,
 * a heal, an id never seen).
 */
export async function findIncident(audit: Pick<AuditLog, 'records'>, correlationId: string, since: Date): Promise<Incident | undefined> {
  const records: StoredAuditRecord[] = [];
  for await (const r of audit.records({ since })) if (r.correlationId === correlationId) records.push(r);
  return records.length ? incidentOf(records) : undefined;
}

const kindWords: Record<Incident['kind'], string> = {
  crash: 'crashed',
  error: 'went to Error',
  'failed-operation': 'operation failed',
  'unknown-stop': 'stopped, cause unknown',
  'failed-start': 'failed to start',
};

/**
 * Acknowledges, assigns or annotates an incident, as the console and `reflex incident` do: audited
 * in the incident's trail (type `triage`) with who did it and from where, then put on the
 * incident's firing alerts (the instance's), which their receivers get as an update. A step that
 * changes nothing (a second acknowledgement, the same assignee) is neither audited nor sent.
 */
export async function triageIncident(deps: TriageDeps, incident: Incident, change: TriageChange, by: OperatorOrigin): Promise<TriageOutcome> {
  const place = `${incident.project}/${incident.instance}`;
  const at = new Date().toISOString();
  const triage = applyTriage(incident.triage, change, by.actor, at);
  if (!triage) {
    const why =
      'ack' in change
        ? `already acknowledged by ${incident.triage?.acknowledged?.by} at ${incident.triage?.acknowledged?.at}`
        : `already assigned to ${incident.triage?.assignee?.name}`;
    return { changed: false, summary: `the incident of ${place} is ${why}: nothing changed`, triage: incident.triage, alerts: 0 };
  }
  const through = by.origin === 'cli' ? 'reflex incident' : `the ${by.origin}`;
  const summary = `${by.actor} ${triageWords(change)} (the incident of ${place}, ${kindWords[incident.kind]} at ${incident.at}; from ${through})`;
  await deps.audit.append({
    type: 'triage',
    correlationId: incident.correlationId,
    target: incident.target,
    instance: incident.instance,
    project: incident.project,
    summary,
    origin: by.origin,
    actor: by.actor,
    triage: 'ack' in change ? 'ack' : 'assign' in change ? 'assign' : 'note',
    ...('assign' in change ? { assignee: change.assign } : {}),
    ...('note' in change ? { note: change.note } : {}),
  });
  const updated =
    (await deps.updates?.update(incident, (known) => ({
      triage: { ...triage, notes: triage.notes.slice(-alertNotesKept), revision: (known.triage?.revision ?? 0) + 1 },
    }))) ?? [];
  return { changed: true, summary, triage, alerts: updated.length };
}
