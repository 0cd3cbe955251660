import type { AuditInput, AuditLog } from '../audit/audit-log.js';
import type { AuditType } from '../audit/audit-record.js';
import type { CanonicalEvent } from '../events/canonical-event.js';

/** Whom every record of one incident's trail names. */
export interface TrailSubject {
  /** The incident: the id of the event that started it. */
  correlationId: string;
  target: string;
  instance?: string;
  rule?: string;
  /** The instance that had the incident, when known: its records are about it, not its name. */
  uuid?: string;
}

/** An action job as the trail names it. */
export interface TrailJob {
  jobId: string;
  action: string;
  /** The approval the job's action waits for, when it is held for one rather than queued. */
  approval?: string;
}

/** Fields a record carries beyond its subject, type and summary (method, path, attempt, ...). */
type Fields = Record<string, unknown>;

/**
 * Writes the remediation records of one incident to the audit trail: one verb per thing that
 * happens to it (an event, a rule's decision, a job queued, skipped, superseded, its outcome), each
 * with the shape and once-key the readers of the trail (console, dashboard, tests) know. A step run
 * again after a crash writes a record with a once-key only once.
 */
export class Trail {
  constructor(
    private readonly audit: Pick<AuditLog, 'append'>,
    readonly subject: TrailSubject,
  ) {}

  /** The trail of the event's incident, naming the event's instance. */
  static ofEvent(audit: Pick<AuditLog, 'append'>, event: CanonicalEvent, instance?: string): Trail {
    return new Trail(audit, { correlationId: event.id, target: event.target, instance });
  }

  /** The trail of a job's incident and rule, naming the instance `ref` (the job's, or its name before a rename). */
  static ofJob(
    audit: Pick<AuditLog, 'append'>,
    ref: { target: string; instance: string },
    job: { correlationId: string; rule: string; uuid?: string },
  ): Trail {
    return new Trail(audit, { correlationId: job.correlationId, target: ref.target, instance: ref.instance, rule: job.rule, uuid: job.uuid });
  }

  /** The same incident's trail with some of its subject replaced (another rule, the instance's uuid). */
  with(subject: Partial<TrailSubject>): Trail {
    return new Trail(this.audit, { ...this.subject, ...subject });
  }

  /** The event itself, once per event. */
  event(event: CanonicalEvent, summary: string, fields: Fields = {}): Promise<string> {
    return this.write('event', summary, { ...fields, event }, `event:${event.id}`);
  }

  /**
   * One rule's verdict (matched, not, or suppressed), once per event and rule unless `once` names
   * another step.
   */
  decision(summary: string, verdict: { matched: boolean; suppressed?: true }, once?: string): Promise<string> {
    const { correlationId, rule } = this.subject;
    return this.write('decision', summary, { ...verdict }, once ?? `decision:${correlationId}:${rule}`);
  }

  /** An action job put on the queue, once per job. */
  queued(job: Pick<TrailJob, 'jobId'>, summary: string, fields: Fields = {}): Promise<string> {
    return this.write('action', summary, { jobId: job.jobId, ...fields }, `queued:${job.jobId}`);
  }

  /**
   * A delayed job removed because an operator decided otherwise before it ran. `why` follows the
   * word "superseded" as written: "by a requested transition (…)", or ": db was renamed to …".
   */
  superseded(job: TrailJob, why: string): Promise<string> {
    const removed = job.approval ? `the request for approval ${job.approval} was withdrawn` : `the delayed job ${job.jobId} was removed`;
    const summary = `${job.action} skipped: superseded${why.startsWith(':') ? '' : ' '}${why}; ${removed}`;
    return this.write('outcome', summary, { result: 'skipped', recheck: 'superseded', jobId: job.jobId }, `superseded:${job.jobId}`);
  }

  /**
   * A job not run at the moment of acting: `check` is the re-check that stopped it (superseded,
   * storm, rule-unloaded, ...), `why` what it found; `held` when it waits instead of being dropped.
   */
  skipped(check: string, why: string, job: TrailJob, how: 'skipped' | 'held' = 'skipped'): Promise<string> {
    const summary = `${job.action} ${how} at the moment of acting: ${why}`;
    return this.write('outcome', summary, { result: 'skipped', recheck: check, jobId: job.jobId }, `recheck:${job.jobId}`);
  }

  /** How an action (or one attempt of it) ended. */
  outcome(summary: string, result: string, fields: Fields = {}, once?: string): Promise<string> {
    return this.write('outcome', summary, { result, ...fields }, once);
  }

  /** One API call of an action (method, path, status, operation id). */
  call(summary: string, fields: Fields = {}): Promise<string> {
    return this.write('call', summary, fields);
  }

  /** Any other record of the incident; answers '' when its once-key was already written. */
  write(type: AuditType, summary: string, fields: Fields = {}, once?: string): Promise<string> {
    const { uuid, ...subject } = this.subject;
    const record = { ...subject, type, summary, ...fields, ...(uuid ? { uuid } : {}) } as AuditInput;
    return this.audit.append(record, once ? { once } : {});
  }
}
