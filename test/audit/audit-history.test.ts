import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainKey } from '../../src/audit/audit-chain.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { FileHistoryStore } from '../../src/audit/history/file-history-store.js';
import { HistoryShipper } from '../../src/audit/history/history-shipper.js';
import type { HistoryEntry, HistoryHead, HistoryRange, HistoryStore } from '../../src/audit/history/history-store.js';
import { PostgresHistoryStore } from '../../src/audit/history/postgres-history-store.js';
import type { RedisConnection } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { postgresAvailable, startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { runReflex } from '../support/reflex-process.js';
import { parseConfig } from '../../src/config/config.js';
import { checkHistory } from '../../src/doctor/history-check.js';
import { recordingAlerts } from '../alerts/recording-alerts.js';

/**
 * Audit history that outlives Redis: records shipped to a store (gzip NDJSON segments on disk, and a
 * real PostgreSQL) before retention trims them are read and verified across the store and Redis;
 * a record altered or deleted in the store is found; a store that fails keeps the records in Redis,
 * alerts, and shipping resumes without gap or duplicate.
 */

// Skipped where PostgreSQL is not installed, unless REFLEX_REQUIRE_POSTGRES=1 (CI) turns its absence into a failure.
if (!postgresAvailable && process.env.REFLEX_REQUIRE_POSTGRES === '1') {
  describe('audit history on PostgreSQL', () => {
    it('needs PostgreSQL', () => {
      throw new Error('PostgreSQL required (REFLEX_REQUIRE_POSTGRES=1) but it is not installed: apt-get install postgresql, or set POSTGRES_URL');
    });
  });
}

const redis = redisClient();
const logger = pino({ level: 'silent' });
const dirs: string[] = [];
let postgres: PrivatePostgres | undefined;
const stores: HistoryStore[] = [];

beforeAll(async () => {
  if (postgresAvailable) postgres = await startPrivatePostgres();
}, 120_000);

afterAll(async () => {
  for (const s of stores) await s.close();
  await postgres?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  redis.disconnect();
});

interface Bed {
  store: HistoryStore;
  /** Changes the stored JSON of one record, as someone with access to the store could. */
  alter(id: string, edit: (record: Record<string, unknown>) => void): Promise<void>;
  /** Deletes one record from the store. */
  remove(id: string): Promise<void>;
}

function fileBed(segmentMaxBytes = 600, dir = mkdtempSync(join(tmpdir(), 'reflex-history-'))): Bed {
  dirs.push(dir);
  const store = new FileHistoryStore(dir, { segmentMaxBytes });
  // Rewrites the segment holding the record, with its manifest entry's byte count, so only the chain can tell.
  const rewrite = async (id: string, edit: (lines: Record<string, unknown>[]) => Record<string, unknown>[]) => {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { segments: { file: string; bytes: number; count: number }[] };
    for (const s of manifest.segments) {
      const lines = gunzipSync(readFileSync(join(dir, s.file)).subarray(0, s.bytes))
        .toString('utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      if (!lines.some((l) => l.id === id)) continue;
      const out = edit(lines);
      const bytes = gzipSync(out.map((l) => `${JSON.stringify(l)}\n`).join(''));
      writeFileSync(join(dir, s.file), bytes);
      s.bytes = bytes.length;
      writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
      return;
    }
    throw new Error(`no segment holds ${id}`);
  };
  return {
    store,
    alter: (id, edit) => rewrite(id, (lines) => lines.map((l) => (l.id === id ? (edit(l), l) : l))),
    remove: (id) => rewrite(id, (lines) => lines.filter((l) => l.id !== id)),
  };
}

function postgresBed(log = `${uniquePrefix('history')}:audit`): Bed {
  const store = new PostgresHistoryStore(postgres!.url, log, { batch: 7 });
  const sql = async (text: string, params: unknown[]) => {
    const c = new pg.Client({ connectionString: postgres!.url });
    await c.connect();
    try {
      await c.query(text, params);
    } finally {
      await c.end();
    }
  };
  return {
    store,
    alter: async (id, edit) => {
      const c = new pg.Client({ connectionString: postgres!.url });
      await c.connect();
      try {
        const { rows } = await c.query<{ json: string }>('SELECT json FROM reflex_audit_history WHERE log = $1 AND id = $2', [log, id]);
        const record = JSON.parse(rows[0]!.json) as Record<string, unknown>;
        edit(record);
        await c.query('UPDATE reflex_audit_history SET json = $3 WHERE log = $1 AND id = $2', [log, id, JSON.stringify(record)]);
      } finally {
        await c.end();
      }
    },
    remove: (id) => sql('DELETE FROM reflex_audit_history WHERE log = $1 AND id = $2', [log, id]),
  };
}

/** A store that fails while `down` is set, as a full disk or a database that went away would. */
class FlakyStore implements HistoryStore {
  readonly kind: string;
  down = false;
  constructor(private readonly inner: HistoryStore) {
    this.kind = inner.kind;
  }
  private check(): void {
    if (this.down) throw new Error('store unreachable (test)');
  }
  open(): Promise<void> {
    return this.inner.open();
  }
  async head(): Promise<HistoryHead | undefined> {
    this.check();
    return this.inner.head();
  }
  async append(entries: readonly HistoryEntry[]): Promise<void> {
    this.check();
    return this.inner.append(entries);
  }
  entries(range: HistoryRange): AsyncIterable<HistoryEntry> {
    return this.inner.entries(range);
  }
  verify() {
    return this.inner.verify();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

async function setup(bed: Bed, maxRecords = 10, key = keySpace(uniquePrefix('history')).audit) {
  stores.push(bed.store);
  await bed.store.open();
  const flaky = new FlakyStore(bed.store);
  // Audited apart from the shipped stream, whose records the tests count.
  const { alerts: raising, raised: alerts } = recordingAlerts(new AuditLog(redis, keySpace(uniquePrefix('history-alerts')).audit));
  const lags: number[] = [];
  let errors = 0;
  const shipper = new HistoryShipper({
    redis,
    streamKey: key,
    store: flaky,
    logger,
    batch: 7,
    intervalMs: 3_600_000,
    onLag: (n) => lags.push(n),
    onError: () => errors++,
    alerts: raising,
  });
  await shipper.start();
  await shipper.stop();
  // Appends as a replica does, trimming to `maxRecords`; reads as `reflex audit` does, across the store.
  const writer = new AuditLog(redis, key, { maxRecords });
  const reader = new AuditLog(redis, key, { history: bed.store });
  let n = 0;
  const append = async (count: number, instance = 'web-1') => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++)
      ids.push(await writer.append({ type: 'event', correlationId: `c${n}`, instance: n % 2 ? instance : 'db-1', summary: `record ${n++}` }));
    return ids;
  };
  const inRedis = async () => (await redis.xrange(key, '-', '+')).map(([id]) => id);
  return { key, flaky, shipper, writer, reader, append, inRedis, alerts, lags, errors: () => errors };
}

const beds: [string, () => Bed][] = [
  ['gzip NDJSON segments on disk', () => fileBed()],
  ['a real PostgreSQL', () => postgresBed()],
];

/** A store where `reflex audit` finds it for a prefix, and the flags and environment that name it. */
const cliBeds: [string, (prefix: string) => { bed: Bed; args: string[]; env: Record<string, string> }][] = [
  [
    'gzip NDJSON segments on disk',
    (prefix) => {
      const dir = mkdtempSync(join(tmpdir(), 'reflex-history-'));
      return { bed: fileBed(600, join(dir, prefix)), args: ['--history-dir', dir], env: {} };
    },
  ],
  [
    'a real PostgreSQL',
    (prefix) => ({ bed: postgresBed(keySpace(prefix).audit), args: ['--history', 'postgres'], env: { REFLEX_HISTORY_POSTGRES_URL: postgres!.url } }),
  ],
];

describe.each(cliBeds)('reflex audit with a history store in %s', { timeout: 60_000 }, (name, makeBed) => {
  it.skipIf(name.includes('PostgreSQL') && !postgresAvailable)(
    'finds records older than the Redis window with --since, and verifies across the store and Redis',
    async () => {
      const prefix = uniquePrefix('history');
      const { bed, args, env } = makeBed(prefix);
      const h = await setup(bed, 10, keySpace(prefix).audit);
      const early = await h.append(25);
      await h.shipper.shipAll();
      const late = await h.append(30);
      expect(await h.inRedis()).not.toContain(early[0]);
      const reflex = (...a: string[]) => runReflex(['audit', ...a, '--redis', redisUrl(), '--prefix', prefix, ...args], env);
      const since = new Date(Number(early[2]!.split('-')[0])).toISOString();
      const listed = await reflex('--json', '--since', since);
      expect(listed.code, listed.stderr).toBe(0);
      const ids = listed.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { id: string }).id);
      const ms = (id: string) => Number(id.split('-')[0]);
      expect(ids).toEqual([...early, ...late].filter((id) => ms(id) >= ms(early[2]!)));
      expect(ids).toContain(early[2]);
      const web = await reflex('--json', '--instance', 'web-1');
      const webIds = web.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { id: string; instance: string }).instance);
      expect(webIds.length).toBe(27);
      expect(new Set(webIds)).toEqual(new Set(['web-1']));

      const verified = await reflex('verify');
      expect(verified.code, verified.stderr).toBe(0);
      expect(verified.stdout).toMatch(new RegExp(`^verified 55 records \\(${early[0]} to ${late.at(-1)}; head hash [0-9a-f]{40}.*history store`));

      await bed.alter(early[1]!, (r) => (r.summary = 'rewritten'));
      const broken = await reflex('verify');
      expect(broken.code).not.toBe(0);
      expect(broken.stderr).toContain(`audit chain broken at record ${early[1]}`);
    },
  );
});

describe.each(beds)('audit history in %s', (name, makeBed) => {
  const skip = name.includes('PostgreSQL') && !postgresAvailable;

  it.skipIf(skip)('finds and verifies records older than the Redis window, oldest first, each once', async () => {
    const h = await setup(makeBed());
    const early = await h.append(25);
    expect(await h.shipper.shipAll()).toBe(25);
    const late = await h.append(30);
    await h.shipper.shipAll();
    await h.append(1);
    const all = [...early, ...late];
    const redisIds = await h.inRedis();
    expect(redisIds).not.toContain(early[0]);
    expect(redisIds.length).toBeLessThan(all.length);

    const read = await h.reader.read();
    expect(read.map((r) => r.id).slice(0, all.length)).toEqual(all);
    expect(new Set(read.map((r) => r.id)).size).toBe(read.length);
    const since = await h.reader.read({ since: new Date(Number(early[3]!.split('-')[0])) });
    expect(since[0]!.id <= early[3]! || since.some((r) => r.id === early[3])).toBe(true);
    expect(since.map((r) => r.id)).toContain(early[5]);
    const web = await h.reader.read({ instance: 'web-1' });
    expect(web.length).toBeGreaterThan(0);
    expect(web.every((r) => r.instance === 'web-1')).toBe(true);
    expect(web.map((r) => r.id)).toContain(early[1]);
    expect((await h.reader.read({ count: 3 })).map((r) => r.id)).toEqual(read.slice(-3).map((r) => r.id));
    expect((await h.reader.read({ count: 40 })).map((r) => r.id)).toEqual(read.slice(-40).map((r) => r.id));

    const verified = await h.reader.verify();
    expect(verified).toMatchObject({ ok: true, records: all.length + 1, firstId: early[0] });
    expect((await new AuditLog(redis, h.key).verify()).ok).toBe(true);
  });

  /** A bed with 40 records: the first 20 (their ids) shipped to the store, the next 20 still in Redis. */
  const twentyShippedTwentyNot = async () => {
    const bed = makeBed();
    const h = await setup(bed);
    const ids = await h.append(20);
    await h.shipper.shipAll();
    await h.append(20);
    return { bed, h, ids };
  };

  it.skipIf(skip)('detects a record altered in the store', async () => {
    const { bed, h, ids } = await twentyShippedTwentyNot();
    await bed.alter(ids[4]!, (r) => (r.summary = 'nothing happened here'));
    const result = await h.reader.verify();
    expect(result).toMatchObject({ ok: false, badId: ids[4] });
    expect(!result.ok && result.reason).toMatch(/altered/);
  });

  it.skipIf(skip)('detects a record deleted from the store', async () => {
    const { bed, h, ids } = await twentyShippedTwentyNot();
    await bed.remove(ids[6]!);
    const result = await h.reader.verify();
    expect(result).toMatchObject({ ok: false, badId: ids[7] });
    expect(!result.ok && result.reason).toMatch(/deleted/);
  });

  it.skipIf(skip)('keeps unshipped records in Redis while the store fails, alerts once, and resumes without gap or duplicate', async () => {
    const h = await setup(makeBed());
    const first = await h.append(12);
    await h.shipper.round();
    expect(h.alerts).toEqual([]);
    h.flaky.down = true;
    const during = await h.append(30);
    await h.shipper.round();
    await h.shipper.round();
    expect(h.alerts.map((a) => [a.kind, a.status])).toEqual([['history.store-failing', 'firing']]);
    expect(h.errors()).toBe(2);
    expect(h.lags.at(-1)).toBe(30);
    // Retention wants 10 records; nothing past the shipped watermark is trimmed.
    const redisIds = await h.inRedis();
    for (const id of during) expect(redisIds).toContain(id);
    expect(await redis.hget(chainKey(h.key), 'shipped-id')).toBe(first.at(-1));

    h.flaky.down = false;
    await h.shipper.round();
    expect(h.alerts.map((a) => [a.kind, a.status])).toEqual([
      ['history.store-failing', 'firing'],
      ['history.store-failing', 'resolved'],
    ]);
    expect(h.lags.at(-1)).toBe(0);
    await h.append(3);
    const stored: string[] = [];
    for await (const e of h.flaky.entries({ start: '-', end: '+' })) stored.push(e.id);
    expect(stored).toEqual([...first, ...during]);
    expect((await h.inRedis()).length).toBeLessThan(20);
    expect(await h.reader.verify()).toMatchObject({ ok: true, records: 45 });
  });
});

describe('the audit stream while a history store takes it', () => {
  it('trims by count and age as configured once records are shipped, and not before', async () => {
    const key = keySpace(uniquePrefix('history')).audit;
    const writer = new AuditLog(redis as RedisConnection, key, { maxRecords: 5 });
    await redis.hset(chainKey(key), 'shipped-id', '0-0');
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await writer.append({ type: 'event', correlationId: `c${i}`, summary: `r${i}` }));
    expect(await redis.xlen(key)).toBe(12);
    await redis.hset(chainKey(key), 'shipped-id', ids[3]!);
    await writer.append({ type: 'event', correlationId: 'x', summary: 'next' });
    expect((await redis.xrange(key, '-', '+', 'COUNT', 1))[0]![0]).toBe(ids[4]);
    await redis.hset(chainKey(key), 'shipped-id', ids[11]!);
    await writer.append({ type: 'event', correlationId: 'y', summary: 'next' });
    expect(await redis.xlen(key)).toBe(5);
    expect(await redis.hget(chainKey(key), 'anchor-id')).toBe((await redis.xrange(key, '-', '+', 'COUNT', 1))[0]![0]);
    expect((await new AuditLog(redis, key).verify()).ok).toBe(true);
  });
});

describe('the history shipper across replicas', () => {
  it('ships from one replica at a time: a second stands by while the first holds the lock', async () => {
    const bed = fileBed(1 << 20);
    const h = await setup(bed);
    const other = new HistoryShipper({
      redis,
      streamKey: h.key,
      store: bed.store,
      logger,
      batch: 7,
      intervalMs: 3_600_000,
      alerts: recordingAlerts(new AuditLog(redis, keySpace(uniquePrefix('history-alerts')).audit)).alerts,
    });
    await h.append(5);
    await h.shipper.round();
    await h.append(5);
    await other.round();
    const stored: string[] = [];
    for await (const e of bed.store.entries({ start: '-', end: '+' })) stored.push(e.id);
    expect(stored).toHaveLength(5);
    await h.shipper.stop();
    await other.round();
    stored.length = 0;
    for await (const e of bed.store.entries({ start: '-', end: '+' })) stored.push(e.id);
    expect(stored).toHaveLength(10);
    await other.stop();
  });
});

describe('reflex doctor on the history store', () => {
  it('warns while the audit trail lives only in Redis, and says how far a store holds records', async () => {
    const none = await checkHistory(parseConfig({ prefix: uniquePrefix('doctor'), history: { store: 'none' } }));
    expect(none).toMatchObject({ name: 'history', ok: true, warning: true, detail: expect.stringContaining('only in Redis') });
    const dir = mkdtempSync(join(tmpdir(), 'reflex-history-'));
    dirs.push(dir);
    const files = await checkHistory(parseConfig({ prefix: uniquePrefix('doctor'), history: { store: 'files', dir } }));
    expect(files).toMatchObject({ name: 'history', ok: true, detail: expect.stringMatching(/^files store \S+ holds no record yet/) });
    writeFileSync(join(dir, 'blocked'), '');
    const blocked = await checkHistory(parseConfig({ prefix: uniquePrefix('doctor'), history: { store: 'files', dir: join(dir, 'blocked') } }));
    expect(blocked).toMatchObject({ name: 'history', ok: false });
  });
});
