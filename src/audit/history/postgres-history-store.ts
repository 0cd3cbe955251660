import type pg from 'pg';
import { ReflexError } from '../../errors/reflex-error.js';
import { ChainWalker, type VerifyResult } from '../audit-verifier.js';
import type { HistoryEntry, HistoryHead, HistoryRange, HistoryStore } from './history-store.js';

const TABLE = 'reflex_audit_history';

// `log` is the audit stream's key, so deployments with their own prefix share a database. The id
// is kept as text and ordered by (ms, seq), as Redis orders stream ids. `json` is text, not jsonb:
// the hash covers its exact bytes. Indexes serve what `reflex audit` asks: a time range (the
// primary key: ids are times), an instance within a time range, an incident, an instance's uuid.
const schema = [
  `CREATE TABLE IF NOT EXISTS ${TABLE} (
    log text NOT NULL, ms bigint NOT NULL, seq bigint NOT NULL, id text NOT NULL,
    at timestamptz, instance text, rule text, type text, correlation_id text, uuid text,
    json text NOT NULL, prev text NOT NULL, hash text NOT NULL,
    PRIMARY KEY (log, ms, seq))`,
  `CREATE INDEX IF NOT EXISTS ${TABLE}_instance ON ${TABLE} (log, instance, ms, seq)`,
  `CREATE INDEX IF NOT EXISTS ${TABLE}_correlation ON ${TABLE} (log, correlation_id)`,
  `CREATE INDEX IF NOT EXISTS ${TABLE}_uuid ON ${TABLE} (log, uuid) WHERE uuid IS NOT NULL`,
  `CREATE INDEX IF NOT EXISTS ${TABLE}_at ON ${TABLE} (log, at)`,
];

/** Any number that names this schema's migration lock among the database's advisory locks. */
const MIGRATION_LOCK = 0x5265666c; // "Refl"

const MAX_BIGINT = 9223372036854775807n;

/** A stream id as (ms, seq) bigint texts; parts past PostgreSQL's bigint (an open `ms-max` bound) are clamped. */
function idParts(id: string): [string, string] {
  const [ms, seq] = id.split('-').map((p) => BigInt(p || '0'));
  const clamp = (n: bigint | undefined) => String(n === undefined ? 0n : n > MAX_BIGINT ? MAX_BIGINT : n);
  return [clamp(ms), clamp(seq)];
}

function str(v: unknown): string | null {
  return typeof v === 'string' ? v : null;
}

/** Options of {@link PostgresHistoryStore}. */
export interface PostgresHistoryStoreOptions {
  /** Rows read per query when iterating. Default 1000. */
  batch?: number;
}

/**
 * The history store for fleets that query months: one PostgreSQL table, created or migrated at
 * `open()` (idempotent, under an advisory lock so replicas starting together do not race). A batch
 * is one transaction, checked against the newest row first, so the newest row is the shipped
 * watermark.
 */
export class PostgresHistoryStore implements HistoryStore {
  readonly kind = 'postgres';
  /** Made at the first use: the driver is loaded only by a process whose history store is PostgreSQL. */
  private poolMade?: Promise<pg.Pool>;
  private readonly batch: number;

  constructor(
    private readonly url: string,
    /** The audit stream's key: the rows of this log. */
    private readonly log: string,
    opts: PostgresHistoryStoreOptions = {},
  ) {
    this.batch = opts.batch ?? 1000;
  }

  private pool(): Promise<pg.Pool> {
    this.poolMade ??= import('pg').then(({ default: driver }) => {
      // A database that does not answer fails a round (or the doctor's check) instead of hanging it.
      const pool = new driver.Pool({ connectionString: this.url, max: 4, connectionTimeoutMillis: 10_000 });
      // An idle client whose server went away emits 'error' on the pool; the next query reports it.
      pool.on('error', () => undefined);
      return pool;
    });
    return this.poolMade;
  }

  async open(): Promise<void> {
    await this.transaction(async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      for (const sql of schema) await c.query(sql);
    });
  }

  async head(): Promise<HistoryHead | undefined> {
    const res = await this.query<{ id: string; hash: string }>(`SELECT id, hash FROM ${TABLE} WHERE log = $1 ORDER BY ms DESC, seq DESC LIMIT 1`, [
      this.log,
    ]);
    return res.rows[0];
  }

  async append(entries: readonly HistoryEntry[]): Promise<void> {
    if (!entries.length) return;
    await this.transaction(async (c) => {
      // One writer is the rule (the shipper's lock); the row lock makes a second one wait and fail the check.
      await c.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MIGRATION_LOCK, this.log]);
      const head = (
        await c.query<{ id: string; hash: string }>(`SELECT id, hash FROM ${TABLE} WHERE log = $1 ORDER BY ms DESC, seq DESC LIMIT 1`, [this.log])
      ).rows[0];
      const first = entries[0]!;
      if (head && first.prev !== head.hash)
        throw new ReflexError('HISTORY_STORE_FAILED', `history batch starting at ${first.id} does not follow the store's head ${head.id}`);
      const cols: unknown[][] = Array.from({ length: 13 }, () => []);
      for (const e of entries) {
        const r = JSON.parse(e.json) as Record<string, unknown>;
        const [ms, seq] = idParts(e.id);
        const at = str(r.at);
        const row = [
          this.log,
          ms,
          seq,
          e.id,
          at && !Number.isNaN(Date.parse(at)) ? at : null,
          str(r.instance),
          str(r.rule),
          str(r.type),
          str(r.correlationId),
          str(r.uuid),
          e.json,
          e.prev,
          e.hash,
        ];
        row.forEach((v, i) => cols[i]!.push(v));
      }
      await c.query(
        `INSERT INTO ${TABLE} (log, ms, seq, id, at, instance, rule, type, correlation_id, uuid, json, prev, hash)
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::timestamptz[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[])`,
        cols,
      );
    });
  }

  async *entries(range: HistoryRange): AsyncGenerator<HistoryEntry> {
    let [fromMs, fromSeq] = range.start === '-' ? ['0', '0'] : idParts(range.start);
    const [toMs, toSeq] = range.end === '+' ? [String(MAX_BIGINT), String(MAX_BIGINT)] : idParts(range.end);
    let inclusive = true;
    for (;;) {
      const res: pg.QueryResult<HistoryEntry & { ms: string; seq: string }> = await this.query(
        `SELECT id, json, prev, hash, ms, seq FROM ${TABLE}
         WHERE log = $1 AND (ms, seq) ${inclusive ? '>=' : '>'} ($2::bigint, $3::bigint) AND (ms, seq) <= ($4::bigint, $5::bigint)
         ORDER BY ms, seq LIMIT $6`,
        [this.log, fromMs, fromSeq, toMs, toSeq, this.batch],
      );
      for (const { id, json, prev, hash } of res.rows) yield { id, json, prev, hash };
      if (res.rows.length < this.batch) return;
      const last: { ms: string; seq: string } = res.rows.at(-1)!;
      [fromMs, fromSeq, inclusive] = [last.ms, last.seq, false];
    }
  }

  async verify(): Promise<VerifyResult> {
    const walker = new ChainWalker({ genesis: false });
    let firstId: string | undefined;
    for await (const e of this.entries({ start: '-', end: '+' })) {
      firstId ??= e.id;
      const why = walker.check(e);
      if (why) return { ok: false, records: walker.records, badId: e.id, reason: `${why} (PostgreSQL table ${TABLE})` };
    }
    return { ok: true, records: walker.records, firstId, headId: walker.last?.id, headHash: walker.last?.hash };
  }

  async close(): Promise<void> {
    await (await this.poolMade)?.end();
  }

  private async query<R extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await (await this.pool()).query<R>(sql, params);
    } catch (err) {
      throw storeError(err);
    }
  }

  private async transaction(run: (c: pg.PoolClient) => Promise<void>): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await (await this.pool()).connect();
    } catch (err) {
      throw storeError(err);
    }
    try {
      await client.query('BEGIN');
      await run(client);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw storeError(err);
    } finally {
      client.release();
    }
  }
}

function storeError(err: unknown): ReflexError {
  if (err instanceof ReflexError) return err;
  return new ReflexError('HISTORY_STORE_FAILED', `PostgreSQL history store: ${(err as Error).message}`, { cause: err });
}
