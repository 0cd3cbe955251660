import type { RedisConnection } from '../../redis/connect.js';
import { matchesQuery, streamRange, type AuditQuery } from '../audit-query.js';
import { auditRecordSchema, type ChainedAuditRecord } from '../audit-record.js';
import { compareIds, verifyAuditLog, type VerifyResult } from '../audit-verifier.js';
import type { HistoryEntry, HistoryStore } from './history-store.js';

/** The id just before a stream id (`ms-seq`), for an inclusive upper bound. */
function idBefore(id: string): string | undefined {
  const [ms, seq] = id.split('-').map(BigInt) as [bigint, bigint];
  if (seq > 0n) return `${ms}-${seq - 1n}`;
  return ms > 0n ? `${ms - 1n}-18446744073709551615` : undefined;
}

/** The oldest id the audit stream holds now. */
async function oldestInRedis(redis: RedisConnection, key: string): Promise<string | undefined> {
  return (await redis.xrange(key, '-', '+', 'COUNT', 1))[0]?.[0];
}

/** A stored entry as a record, or undefined when its JSON is not an audit record (verify reports it). */
export function entryRecord(e: HistoryEntry): ChainedAuditRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(e.json);
  } catch {
    return undefined;
  }
  const parsed = auditRecordSchema.safeParse(value);
  return parsed.success ? { ...parsed.data, id: e.id, prev: e.prev, hash: e.hash } : undefined;
}

/**
 * Matching records across the history store and Redis, oldest first, each once: the store gives
 * what is older than the oldest record Redis still holds, Redis the rest. Retention only trims
 * records the store already holds, so a trim that moves Redis's oldest record while the store is
 * being read is followed by reading the store up to the new oldest.
 */
export async function* recordsAcross(
  redis: RedisConnection,
  key: string,
  store: HistoryStore,
  query: AuditQuery,
  fromRedis: (q: AuditQuery) => AsyncIterable<ChainedAuditRecord>,
): AsyncGenerator<ChainedAuditRecord> {
  const { start, end } = streamRange(query);
  let cursor = start;
  const fromStore = async function* (upTo: string) {
    if (cursor !== '-' && upTo !== '+' && compareIds(cursor, upTo) > 0) return;
    for await (const e of store.entries({ start: cursor, end: upTo })) {
      const r = entryRecord(e);
      if (r && matchesQuery(r, query)) yield r;
    }
  };
  for (;;) {
    const oldest = await oldestInRedis(redis, key);
    if (oldest === undefined || (end !== '+' && compareIds(end, oldest) < 0)) {
      yield* fromStore(end);
      return;
    }
    const before = idBefore(oldest);
    if (before !== undefined) yield* fromStore(before);
    if (cursor === '-' || compareIds(cursor, oldest) < 0) cursor = oldest;
    if ((await oldestInRedis(redis, key)) === oldest) {
      yield* fromRedis({ ...query, startId: cursor });
      return;
    }
  }
}

/** What {@link verifyAcross} found: the Redis verifier's answer over both, and the store's part. */
export type AcrossResult = VerifyResult & { store?: { kind: string; records: number; firstId?: string; headId?: string } };

/**
 * Verifies the history store's chain (every record's hash and link, its checkpoints), then Redis's
 * (as `verifyAuditLog`), then the boundary: the oldest record in Redis follows the store's newest
 * (its `prev` is that record's hash), or, where both hold the same records, they match id for id and
 * hash for hash. The first bad record is named with the reason.
 */
export async function verifyAcross(redis: RedisConnection, key: string, store: HistoryStore): Promise<AcrossResult> {
  const inStore = await store.verify();
  if (!inStore.ok) return { ...inStore, reason: `in the ${store.kind} history store: ${inStore.reason}` };
  const part = { kind: store.kind, records: inStore.records, firstId: inStore.firstId, headId: inStore.headId };
  const inRedis = await verifyAuditLog(redis, key);
  if (!inRedis.ok) return { ...inRedis, records: inStore.records + inRedis.records, store: part };
  if (!inStore.headId || !inStore.headHash) return { ...inRedis, store: part };
  if (!inRedis.firstId) return { ...inStore, store: part };
  if (compareIds(inRedis.firstId, inStore.headId) > 0) {
    const [[, fields] = ['', []]] = await redis.xrange(key, inRedis.firstId, inRedis.firstId);
    const prev = fields[fields.indexOf('prev') + 1];
    if (prev !== inStore.headHash) {
      return {
        ok: false,
        records: inStore.records,
        badId: inRedis.firstId,
        reason: `it is the oldest record in Redis and its prev ${prev} is not the hash of the history store's newest record (${inStore.headId}, ${inStore.headHash}): records between them were deleted before they were shipped, or the store lost its newest records`,
      };
    }
    return { ...inRedis, records: inStore.records + inRedis.records, firstId: inStore.firstId ?? inRedis.firstId, store: part };
  }
  // Both hold the records from Redis's oldest to the store's newest: they must be the same.
  const stored = store.entries({ start: inRedis.firstId, end: inStore.headId })[Symbol.asyncIterator]();
  let overlap = 0;
  let from = inRedis.firstId;
  for (;;) {
    const rows = await redis.xrange(key, from, inStore.headId, 'COUNT', 1000);
    for (const [id, fields] of rows) {
      const s = await stored.next();
      const hash = fields[fields.indexOf('hash') + 1];
      if (s.done || s.value.id !== id || s.value.hash !== hash) {
        const what = s.done
          ? 'the history store does not hold it'
          : s.value.id !== id
            ? `the history store holds ${s.value.id} in its place`
            : `its hash ${hash} differs from the history store's ${s.value.hash}`;
        return { ok: false, records: inStore.records, badId: id, reason: `it is in Redis and in the history store, but ${what}` };
      }
      overlap++;
    }
    if (rows.length < 1000) break;
    from = `(${rows.at(-1)![0]}`;
  }
  return { ...inRedis, records: inStore.records + inRedis.records - overlap, firstId: inStore.firstId ?? inRedis.firstId, store: part };
}
