import { duplicateConnection, type RedisConnection } from '../redis/connect.js';
import { appendChained } from './audit-chain.js';
import { auditRecordSchema, reservedAuditFields, type AuditInput, type ChainedAuditRecord, type StoredAuditRecord } from './audit-record.js';
import { matchesQuery, streamRange, type AuditQuery } from './audit-query.js';
import { verifyAuditLog, type VerifyResult } from './audit-verifier.js';
import { recordsAcross, verifyAcross, type AcrossResult } from './history/history-reading.js';
import type { HistoryStore } from './history/history-store.js';
import { canonicalJson } from './canonical-json.js';
import { redact } from './redact.js';

export type { AuditInput, AuditRecord, StoredAuditRecord } from './audit-record.js';

/** How long a once-key of {@link AuditLog.append} is remembered by default. */
const ONCE_TTL_MS = 24 * 3600_000;

/** Options of {@link AuditLog}: retention, applied on every append. */
export interface AuditLogOptions {
  /** Records kept at least (trimming drops whole stream nodes, so a few more may stay). Default 1 000 000; 0 keeps all. */
  maxRecords?: number;
  /** Records older than this (by stream id, i.e. Redis time) are dropped on the next append. Default 0: no age limit. */
  maxAgeMs?: number;
  /**
   * Where records live on after Redis (src/audit/history/): reads and `verify()` go across it and
   * Redis. Appending does not need it: the append script never trims past the shipped watermark.
   */
  history?: HistoryStore;
  /**
   * How long a once-key of {@link AuditLog.append} is remembered: as long as the step it guards can
   * be run again (`dedupeWindowMs` of the retry policy). Default 24 h.
   */
  onceTtlMs?: number;
}

/** Options of {@link AuditLog.follow}. */
export interface FollowOptions {
  /** Yield only records after this stream id. Default: the newest record when following starts. */
  afterId?: string;
  /** Stops following; the iterator then returns. */
  signal?: AbortSignal;
  /** How long one XREAD blocks, in ms; also how late an abort may be noticed. Default 1000. */
  blockMs?: number;
}

/**
 * The audit trail: an append-only Redis stream in which each record carries the hash of the one
 * before it (see audit-chain.ts), so `verify()` exposes any record edited, deleted or inserted
 * behind the log's back. Records are redacted before they are hashed and stored. Safe to share
 * between replicas: appends are serialised by Redis; a process's appends made at the same moment
 * share one round trip (audit-chain.ts).
 */
export class AuditLog {
  private readonly retention: { maxRecords: number; maxAgeMs: number };
  private readonly history: HistoryStore | undefined;
  private readonly onceTtlMs: number;

  constructor(
    private readonly redis: RedisConnection,
    private readonly key: string,
    opts: AuditLogOptions = {},
  ) {
    this.retention = { maxRecords: opts.maxRecords ?? 1_000_000, maxAgeMs: opts.maxAgeMs ?? 0 };
    this.onceTtlMs = opts.onceTtlMs ?? ONCE_TTL_MS;
    if (!(this.retention.maxRecords >= 0) || !(this.retention.maxAgeMs >= 0)) throw new RangeError('audit retention limits must be >= 0');
    this.history = opts.history;
    if (!(this.onceTtlMs >= 1)) throw new RangeError('audit once-key TTL must be >= 1 ms');
  }

  /**
   * Stamps `at`, redacts secrets, and appends the record to the chain. Returns its stream id.
   * With `once`, the record is appended only the first time that key is given (within
   * `onceTtlMs`): a step retried after a crash is recorded once. Answers '' when it was already recorded.
   */
  async append(input: AuditInput, opts: { once?: string } = {}): Promise<string> {
    for (const f of reservedAuditFields) {
      if (f in input) throw new TypeError(`audit record field "${f}" is reserved for the log`);
    }
    const record = redact({ ...input, at: new Date().toISOString() });
    const once = opts.once ? { key: this.onceKey(opts.once), ttlMs: this.onceTtlMs } : undefined;
    return (await appendChained(this.redis, this.key, canonicalJson(record), this.retention, once)) ?? '';
  }

  /**
   * Gives a once-key of {@link append} back, so the next append with it records again: for a step
   * that recorded itself and then failed before it took effect (an alert the notifier did not
   * accept), whose retry must not be taken for a repeat. The record already appended stays.
   */
  async forget(once: string): Promise<void> {
    await this.redis.del(this.onceKey(once));
  }

  /** Whether a record was appended under this once-key (and the key is still remembered). */
  async recorded(once: string): Promise<boolean> {
    return (await this.redis.exists(this.onceKey(once))) === 1;
  }

  private onceKey(once: string): string {
    return `${this.key}:once:${once}`;
  }

  /** Matching records, oldest first. */
  async read(query: AuditQuery = {}): Promise<StoredAuditRecord[]> {
    if (query.count !== undefined) return this.readNewest(query, query.count);
    const out: StoredAuditRecord[] = [];
    for await (const r of this.records(query)) out.push(stored(r));
    return out;
  }

  /** Matching records with their chain fields, oldest first, read in batches: from the history store, then Redis. */
  records(query: AuditQuery = {}): AsyncGenerator<ChainedAuditRecord> {
    return this.history ? recordsAcross(this.redis, this.key, this.history, query, (q) => this.redisRecords(q)) : this.redisRecords(query);
  }

  private async *redisRecords(query: AuditQuery, batch = 1000): AsyncGenerator<ChainedAuditRecord> {
    const { start, end } = streamRange(query);
    let from = start;
    for (;;) {
      const rows = await this.redis.xrange(this.key, from, end, 'COUNT', batch);
      for (const [id, fields] of rows) {
        const r = parseEntry(id, fields);
        if (r && matchesQuery(r, query)) yield r;
      }
      if (rows.length < batch) return;
      from = `(${rows[rows.length - 1]![0]}`;
    }
  }

  /** The newest record's stream id, or `0-0` when the log is empty. */
  async lastId(): Promise<string> {
    const rows = await this.redis.xrevrange(this.key, '+', '-', 'COUNT', 1);
    return rows[0]?.[0] ?? '0-0';
  }

  /**
   * Matching records appended after `afterId`, as they arrive, until the signal aborts. Uses its
   * own connection, since XREAD BLOCK holds the one it runs on.
   */
  async *follow(query: AuditQuery = {}, opts: FollowOptions = {}): AsyncGenerator<StoredAuditRecord> {
    let after = opts.afterId ?? (await this.lastId());
    const conn = duplicateConnection(this.redis);
    const stop = () => conn.disconnect();
    opts.signal?.addEventListener('abort', stop, { once: true });
    try {
      while (!opts.signal?.aborted) {
        let res: [string, [string, string[]][]][] | null;
        try {
          res = (await conn.xread('COUNT', 1000, 'BLOCK', opts.blockMs ?? 1000, 'STREAMS', this.key, after)) as typeof res;
        } catch (err) {
          if (opts.signal?.aborted) return;
          throw err;
        }
        for (const [id, fields] of res?.[0]?.[1] ?? []) {
          after = id;
          const r = parseEntry(id, fields);
          if (r && matchesQuery(r, query)) yield stored(r);
        }
      }
    } finally {
      opts.signal?.removeEventListener('abort', stop);
      conn.disconnect();
    }
  }

  /** Checks the whole chain, across the history store when there is one; see {@link verifyAuditLog} and {@link verifyAcross}. */
  verify(): Promise<VerifyResult | AcrossResult> {
    return this.history ? verifyAcross(this.redis, this.key, this.history) : verifyAuditLog(this.redis, this.key);
  }

  private async readNewest(query: AuditQuery, count: number): Promise<StoredAuditRecord[]> {
    const newest = await this.readNewestInRedis(query, count);
    if (!this.history || newest.length >= count) return newest;
    // Redis holds fewer: the newest `count` of the whole history, kept as the read goes.
    const kept: StoredAuditRecord[] = [];
    for await (const r of this.records(query)) {
      kept.push(stored(r));
      if (kept.length > count) kept.shift();
    }
    return kept;
  }

  private async readNewestInRedis(query: AuditQuery, count: number): Promise<StoredAuditRecord[]> {
    const { start, end } = streamRange(query);
    const out: StoredAuditRecord[] = [];
    let to = end;
    const batch = 1000;
    while (out.length < count) {
      const rows = await this.redis.xrevrange(this.key, to, start, 'COUNT', batch);
      for (const [id, fields] of rows) {
        const r = parseEntry(id, fields);
        if (r && matchesQuery(r, query)) out.push(stored(r));
        if (out.length >= count) break;
      }
      if (rows.length < batch) break;
      to = `(${rows[rows.length - 1]![0]}`;
    }
    return out.reverse();
  }
}

/** Parses and validates one stream entry; entries that are not audit records are skipped (verify reports them). */
function parseEntry(id: string, fields: string[]): ChainedAuditRecord | undefined {
  const get = (name: string) => {
    for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
    return undefined;
  };
  const json = get('json');
  if (json === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  const parsed = auditRecordSchema.safeParse(value);
  if (!parsed.success) return undefined;
  return { ...parsed.data, id, prev: get('prev') ?? '', hash: get('hash') ?? '' };
}

function stored(r: ChainedAuditRecord): StoredAuditRecord {
  const { prev: _prev, hash: _hash, ...rest } = r;
  return rest;
}
