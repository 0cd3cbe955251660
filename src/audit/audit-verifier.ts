import type { RedisConnection } from '../redis/connect.js';
import { canonicalJson } from './canonical-json.js';
import { chainHash, chainKey, GENESIS } from './audit-chain.js';

/** One stream entry as the chain sees it (fields may be missing if someone wrote around the log). */
export interface ChainEntry {
  id: string;
  json?: string;
  prev?: string;
  hash?: string;
}

/**
 * What a verification found. `records` counts the records checked before the first bad one. A
 * history store's files also say where the bad record lies (`segment`, `line`), the hash expected
 * there against the one found, and how many mismatches it holds in all.
 */
export type VerifyResult =
  | { ok: true; records: number; firstId?: string; headId?: string; headHash?: string; anchorId?: string }
  | {
      ok: false;
      records: number;
      badId: string;
      reason: string;
      segment?: string;
      line?: number;
      expectedHash?: string;
      foundHash?: string;
      mismatches?: number;
    };

/**
 * Walks entries oldest first and returns why the first bad one breaks the chain.
 * `anchorId` set: the log was trimmed and the first entry must be that one (its `prev` is then
 * accepted as given, since the record it points to is gone). Not set and `genesis`: the first
 * entry must start the chain. Neither: any first `prev` is accepted (an export of a range).
 */
export class ChainWalker {
  records = 0;
  last: { id: string; hash: string } | undefined;

  constructor(private readonly start: { anchorId?: string; genesis: boolean }) {}

  check(e: ChainEntry): string | undefined {
    if (e.json === undefined || e.prev === undefined || e.hash === undefined) {
      return 'it lacks the json, prev or hash field: it was not written through the audit chain';
    }
    const computed = chainHash(e.prev, e.id, e.json);
    if (computed !== e.hash) return `its content does not match its hash (stored ${e.hash}, recomputed ${computed}): the record was altered`;
    if (this.last) {
      if (e.prev !== this.last.hash) {
        return `its prev ${e.prev} is not the hash of the record before it (${this.last.id}, ${this.last.hash}): a record between them was deleted or inserted, or ${this.last.id} was rewritten`;
      }
    } else if (this.start.anchorId !== undefined) {
      if (e.id !== this.start.anchorId) {
        return compareIds(e.id, this.start.anchorId) > 0
          ? `it is the oldest record but the last retention trim kept ${this.start.anchorId}: the records from ${this.start.anchorId} up to this one were deleted`
          : `it is older than ${this.start.anchorId}, the oldest record the last retention trim kept: it was inserted`;
      }
    } else if (this.start.genesis && e.prev !== GENESIS) {
      return `it is the oldest record and its prev is ${e.prev}, but the log was never trimmed, so it should start the chain (prev ${GENESIS}): older records were deleted`;
    }
    this.last = { id: e.id, hash: e.hash };
    this.records++;
    return undefined;
  }
}

/** Orders two stream ids (`ms-seq`). */
export function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split('-').map(BigInt) as [bigint, bigint];
  if (am !== bm) return am < bm ? -1 : 1;
  return as === bs ? 0 : as < bs ? -1 : 1;
}

function toEntry(id: string, fields: string[]): ChainEntry {
  const e: ChainEntry = { id };
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const k = fields[i];
    if (k === 'json' || k === 'prev' || k === 'hash') e[k] = fields[i + 1];
  }
  return e;
}

/**
 * Verifies the audit stream `key` in Redis: every record's hash matches its content, id and
 * predecessor; the newest record is the recorded head (nothing cut off or added at the end); the
 * oldest is the start of the chain, or, after retention trimmed the log, the oldest record that
 * trim kept (its `prev` is the anchor, since the record it names is gone). Records appended while
 * it runs are left for the next run. Reads in batches of `batch` (default 1000).
 */
export async function verifyAuditLog(redis: RedisConnection, key: string, opts: { batch?: number } = {}): Promise<VerifyResult> {
  // A retention trim running concurrently can remove records between two batches; start over then.
  for (let attempt = 0; ; attempt++) {
    const { anchorAtStart, ...result } = await verifyOnce(redis, key, opts.batch ?? 1000);
    if (result.ok || attempt >= 2) return result;
    const anchorNow = (await redis.hget(chainKey(key), 'anchor-id')) ?? undefined;
    if (anchorNow === anchorAtStart) return result;
  }
}

async function verifyOnce(redis: RedisConnection, key: string, batch: number): Promise<VerifyResult & { anchorAtStart?: string }> {
  const snap = await redis.multi().hgetall(chainKey(key)).xrevrange(key, '+', '-', 'COUNT', 1).exec();
  const meta = (snap?.[0]?.[1] ?? {}) as Record<string, string>;
  const newest = (snap?.[1]?.[1] ?? []) as [string, string[]][];
  const headId = meta['head-id'];
  const headHash = meta['head-hash'];
  const anchorId = meta['anchor-id'];
  const fail = (records: number, badId: string, reason: string) => ({ ok: false as const, records, badId, reason, anchorAtStart: anchorId });
  const newestId = newest[0]?.[0];
  if (newestId === undefined) {
    return headId ? fail(0, headId, `the log is empty but its head is ${headId}: all records were deleted`) : { ok: true, records: 0 };
  }
  if (!headId || !headHash)
    return fail(
      0,
      newestId,
      `the chain head (${chainKey(key)}) is missing: the log was not written through the audit chain, or its head was deleted`,
    );
  if (newestId !== headId) {
    return compareIds(newestId, headId) > 0
      ? fail(0, newestId, `it is newer than the chain head ${headId}: it was added without the audit chain`)
      : fail(0, headId, `the newest record should be ${headId} (the chain head) but is ${newestId}: the newest records were deleted`);
  }
  const walker = new ChainWalker({ anchorId, genesis: true });
  let firstId: string | undefined;
  let start = '-';
  for (;;) {
    const rows = await redis.xrange(key, start, headId, 'COUNT', batch);
    for (const [id, fields] of rows) {
      firstId ??= id;
      const why = walker.check(toEntry(id, fields));
      if (why) return fail(walker.records, id, why);
    }
    if (rows.length < batch) break;
    start = `(${rows[rows.length - 1]![0]}`;
  }
  if (walker.last?.hash !== headHash) {
    return fail(
      walker.records - 1,
      headId,
      `its hash ${walker.last?.hash} is not the recorded head hash ${headHash}: the newest record was rewritten`,
    );
  }
  return { ok: true, records: walker.records, firstId, headId, headHash, anchorId };
}

/**
 * Verifies an export (JSONL as written by `reflex audit export`, oldest first) on its own: each
 * line's hash matches its content, and each line chains to the one before. The first line's `prev`
 * is taken as the anchor, since an export may start anywhere; compare the last hash with the head
 * printed by `reflex audit verify` to tie the file to the live log.
 */
export async function verifyExport(lines: AsyncIterable<string> | Iterable<string>): Promise<VerifyResult> {
  const walker = new ChainWalker({ genesis: false });
  let firstId: string | undefined;
  let n = 0;
  for await (const line of lines) {
    n++;
    if (!line.trim()) continue;
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return { ok: false, records: walker.records, badId: `line ${n}`, reason: 'it is not valid JSON' };
    }
    const { id, prev, hash, ...record } = parsed;
    if (typeof id !== 'string') return { ok: false, records: walker.records, badId: `line ${n}`, reason: 'it has no id' };
    firstId ??= id;
    const why = walker.check({
      id,
      prev: typeof prev === 'string' ? prev : undefined,
      hash: typeof hash === 'string' ? hash : undefined,
      json: canonicalJson(record),
    });
    if (why) return { ok: false, records: walker.records, badId: id, reason: why };
  }
  return { ok: true, records: walker.records, firstId, headId: walker.last?.id, headHash: walker.last?.hash };
}
