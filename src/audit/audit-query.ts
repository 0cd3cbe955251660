import { readDuration } from '../config/duration.js';
import type { AuditType, StoredAuditRecord } from './audit-record.js';
import { compareIds } from './audit-verifier.js';

/** Which records to read. Time bounds become a stream id range, so older records are never scanned. */
export interface AuditQuery {
  /** Only records about this instance. */
  instance?: string;
  /** Only records about this rule. */
  rule?: string;
  /** Only records of these types. */
  type?: AuditType | AuditType[];
  /** Only records appended at or after this time (Redis clock, which stamps the stream ids). */
  since?: Date;
  /** Only records appended at or before this time. */
  until?: Date;
  /** Only records from this stream id on, inclusive (where the history store's part of a read ends). */
  startId?: string;
  /** Only records up to this stream id, inclusive (a snapshot point, e.g. before following). */
  endId?: string;
  /** Only the newest `count` matching records (still returned oldest first). */
  count?: number;
  /**
   * With `instance`: the records of the instances that ever bore that name, under any name (a
   * rename keeps the `volatile.uuid`): the records carrying one of these uuids, and every record of
   * their incidents. Filled by {@link withFormerNames}.
   */
  identities?: { uuids: ReadonlySet<string>; incidents: ReadonlySet<string> };
}

/** The XRANGE bounds for a query: `ms-0` (or the start id, whichever is higher) to `ms-max` (or the end id, whichever is lower), `-`/`+` when open. */
export function streamRange(q: AuditQuery): { start: string; end: string } {
  let start = q.since ? `${Math.max(0, q.since.getTime())}-0` : '-';
  if (q.startId && (start === '-' || compareIds(q.startId, start) > 0)) start = q.startId;
  let end = q.until ? `${Math.max(0, q.until.getTime())}-18446744073709551615` : '+';
  if (q.endId && (end === '+' || idMs(q.endId) <= idMs(end))) end = q.endId;
  return { start, end };
}

function idMs(id: string): bigint {
  return BigInt(id.split('-')[0]!);
}

/** Whether a record passes the query's field filters (time bounds are applied by the range). */
export function matchesQuery(r: StoredAuditRecord, q: AuditQuery): boolean {
  if (q.instance !== undefined && r.instance !== q.instance && !ofIdentities(r, q.identities)) return false;
  if (q.rule !== undefined && r.rule !== q.rule) return false;
  if (q.type !== undefined && !(Array.isArray(q.type) ? q.type.includes(r.type) : r.type === q.type)) return false;
  return true;
}

function ofIdentities(r: StoredAuditRecord, ids: AuditQuery['identities']): boolean {
  if (!ids) return false;
  const uuid = (r as { uuid?: unknown }).uuid;
  return (typeof uuid === 'string' && ids.uuids.has(uuid)) || ids.incidents.has(r.correlationId);
}

/**
 * History follows the instance, not the name: widens a query by `instance` to the instances that
 * ever bore that name, found by the `uuid` their incidents' records carry, so `reflex audit
 * --instance a` shows a renamed instance's records under its new name too, and `--instance a-old`
 * its records from before the rename. One pass over the query's time range first.
 */
export async function withFormerNames(records: (q: AuditQuery) => AsyncIterable<StoredAuditRecord>, q: AuditQuery): Promise<AuditQuery> {
  if (q.instance === undefined) return q;
  const uuids = new Set<string>();
  const incidentsOf = new Map<string, Set<string>>();
  for await (const r of records({ since: q.since, until: q.until, endId: q.endId })) {
    const uuid = (r as { uuid?: unknown }).uuid;
    if (typeof uuid !== 'string') continue;
    if (r.instance === q.instance) uuids.add(uuid);
    let incidents = incidentsOf.get(uuid);
    if (!incidents) incidentsOf.set(uuid, (incidents = new Set()));
    incidents.add(r.correlationId);
  }
  const incidents = new Set([...uuids].flatMap((u) => [...(incidentsOf.get(u) ?? [])]));
  return uuids.size ? { ...q, identities: { uuids, incidents } } : q;
}

/**
 * Reads a `--since`/`--until` value: a duration back from `now` (`15m`, `24h`, `7d`, `1h30m`;
 * units ms, s, m, h, d, w) or an ISO-8601 timestamp (`2024-05-01T12:00:00Z`). Returns undefined
 * when the text is neither.
 */
export function parseTimeArg(text: string, now = Date.now()): Date | undefined {
  const t = text.trim();
  // A bare number is neither a duration back from now nor a timestamp here.
  const ms = /^\d+(\.\d+)?$/.test(t) ? undefined : readDuration(t);
  if (ms !== undefined) return new Date(now - ms);
  if (!/^\d{4}-\d{2}-\d{2}/.test(t)) return undefined;
  const at = Date.parse(t);
  return Number.isNaN(at) ? undefined : new Date(at);
}
