import type { Redis } from 'ioredis';
import { z } from 'zod';

/**
 * One audit record. `type` says what happened: an event was received, a rule decided, an action
 * was queued/called/finished. Every record of one incident shares `correlationId`.
 */
export const auditRecordSchema = z.looseObject({
  type: z.enum(['event', 'decision', 'action', 'call', 'outcome', 'rejected']),
  at: z.string(),
  correlationId: z.string(),
  target: z.string().optional(),
  instance: z.string().optional(),
  rule: z.string().optional(),
  /** Short human summary, e.g. "matched", "skipped: instance has no opt-in". */
  summary: z.string(),
});
export type AuditRecord = z.infer<typeof auditRecordSchema>;
export type AuditInput = Omit<AuditRecord, 'at'> & Record<string, unknown>;

/** An audit record as read back, with its stream id. */
export type StoredAuditRecord = AuditRecord & { id: string };

/** Options of {@link AuditLog}. */
export interface AuditLogOptions {
  /** Approximate number of records kept (stream MAXLEN ~). Default 1 000 000. */
  maxRecords?: number;
}

/** Append-only audit trail in a Redis stream. */
export class AuditLog {
  private readonly maxRecords: number;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    opts: AuditLogOptions = {},
  ) {
    this.maxRecords = opts.maxRecords ?? 1_000_000;
  }

  async append(input: AuditInput): Promise<string> {
    const record = { ...input, at: new Date().toISOString() };
    const id = await this.redis.xadd(this.key, 'MAXLEN', '~', String(this.maxRecords), '*', 'json', JSON.stringify(record));
    return id ?? '';
  }

  /** Records oldest first, optionally only those about one instance. */
  async read(opts: { instance?: string; count?: number } = {}): Promise<StoredAuditRecord[]> {
    const out: StoredAuditRecord[] = [];
    let start = '-';
    const batch = 1000;
    for (;;) {
      const rows = await this.redis.xrange(this.key, start, '+', 'COUNT', batch);
      for (const [id, fields] of rows) {
        const json = fields[fields.indexOf('json') + 1];
        if (json === undefined) continue;
        const rec = { ...(JSON.parse(json) as AuditRecord), id };
        if (!opts.instance || rec.instance === opts.instance) out.push(rec);
      }
      if (rows.length < batch) break;
      start = `(${rows[rows.length - 1]![0]}`;
    }
    return opts.count ? out.slice(-opts.count) : out;
  }
}
