import { z } from 'zod';

/**
 * What an audit record is about:
 * - `event`: an event was received (or ignored as stale);
 * - `decision`: one rule's verdict on an event (matched, skipped and why, suppressed);
 * - `action`: an action job was queued;
 * - `call`: one API call (method, path, status, operation id);
 * - `retry`: an attempt failed and will be retried;
 * - `outcome`: how an action ended;
 * - `alert`: a rule raised an alert (with its severity);
 * - `notification`: a notification was sent (or failed to be);
 * - `give-up`: an action failed for good;
 * - `rejected`: a malformed event frame was archived;
 * - `silence`: an operator added or removed a silence (`origin`: cli, dashboard);
 * - `reload`: a replica reloaded its rules, schedules and receivers, or refused to (`by`: signal, cli; `result`; what changed or every file:line error);
 * - `access`: the console's sign-ins, sign-outs, lock-outs and ended sessions (`actor`, `result`, `source`);
 * - `queue`: a change made to a queue on the queues page (pause, resume, clean, retry; `actor`, `queue`);
 * - `triage`: an incident acknowledged, assigned or annotated (`actor`, `origin`, `triage`: ack, assign, note; `assignee`, `note`), in the incident's trail;
 * - `approval`: a rule's actions asked for an operator's approval, and what became of the request (`approval`: its id; `result`: requested, approved, denied, expired; `actor`, `origin`, `role`), in the incident's trail.
 */
export const auditTypes = [
  'event',
  'decision',
  'action',
  'call',
  'retry',
  'outcome',
  'alert',
  'notification',
  'give-up',
  'rejected',
  'silence',
  'reload',
  'access',
  'queue',
  'triage',
  'approval',
] as const;
export type AuditType = (typeof auditTypes)[number];

/**
 * One audit record. Every record of one incident shares `correlationId`; any extra fields (method,
 * path, status, operationId, attempt, ...) are kept as given, after redaction.
 */
export const auditRecordSchema = z.looseObject({
  type: z.enum(auditTypes),
  /** ISO time the writer appended the record. */
  at: z.string(),
  correlationId: z.string(),
  target: z.string().optional(),
  instance: z.string().optional(),
  rule: z.string().optional(),
  /** Short human summary, e.g. "matched", "skipped: instance has no opt-in". */
  summary: z.string(),
});
export type AuditRecord = z.infer<typeof auditRecordSchema>;

/**
 * Field names the log adds when a record is read back; a record may not carry them itself, so an
 * exported line can be split back into the hashed record and its chain fields.
 */
export const reservedAuditFields = ['id', 'prev', 'hash'] as const;

/** What a writer passes to `AuditLog.append`: a record without `at` (the log stamps it). */
export type AuditInput = Omit<AuditRecord, 'at'> & Record<string, unknown> & { id?: never; prev?: never; hash?: never };

/** An audit record as read back, with its stream id. */
export type StoredAuditRecord = AuditRecord & { id: string };

/** A record with its place in the hash chain, as exported: `hash` = SHA-1(prev, id, canonical JSON of the record). */
export type ChainedAuditRecord = StoredAuditRecord & { prev: string; hash: string };
