import type { RedisConnection } from '../../src/redis/connect.js';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { chainHash, chainKey, GENESIS } from '../../src/audit/audit-chain.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { keySpace } from '../../src/redis/key-space.js';
import { sleep } from '../support/wait.js';

const clients: RedisConnection[] = [];
function client(): RedisConnection {
  const c = redisClient();
  clients.push(c);
  return c;
}
afterAll(() => clients.forEach((c) => c.disconnect()));

async function filledLog(n: number, opts = {}, gapMs = 0): Promise<{ redis: RedisConnection; key: string; log: AuditLog; ids: string[] }> {
  const redis = client();
  const key = keySpace(uniquePrefix('audit')).audit;
  const log = new AuditLog(redis, key, opts);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push(await log.append({ type: 'event', correlationId: `c${i}`, instance: `i${i % 3}`, summary: `record ${i}` }));
    if (gapMs) await sleep(gapMs); // records apart in time, as the test asks
  }
  return { redis, key, log, ids };
}

type Entry = [id: string, fields: Record<string, string>];

/** Rewrites the stream the way someone with Redis access could: copy the entries, edited, to a new key and rename it over the log. */
async function rewriteStream(redis: RedisConnection, key: string, edit: (entries: Entry[]) => Entry[]): Promise<void> {
  const entries: Entry[] = (await redis.xrange(key, '-', '+')).map(([id, flat]) => {
    const fields: Record<string, string> = {};
    for (let i = 0; i < flat.length; i += 2) fields[flat[i]!] = flat[i + 1]!;
    return [id, fields];
  });
  const tmp = `${key}:tampered`;
  for (const [id, fields] of edit(entries)) await redis.xadd(tmp, id, ...Object.entries(fields).flat());
  await redis.rename(tmp, key);
}

/** Changes the fields of one entry in place (same id). */
function rewriteEntry(redis: RedisConnection, key: string, id: string, change: (fields: Record<string, string>) => void): Promise<void> {
  return rewriteStream(redis, key, (entries) => entries.map(([eid, f]) => (eid === id && change(f), [eid, f])));
}

describe('the audit hash chain', () => {
  it('verifies after many concurrent appends from several connections', async () => {
    const key = keySpace(uniquePrefix('audit')).audit;
    const logs = Array.from({ length: 5 }, () => new AuditLog(client(), key));
    await Promise.all(
      logs.flatMap((log, w) =>
        Array.from({ length: 80 }, (_, i) => log.append({ type: 'call', correlationId: `w${w}`, summary: `call ${i}`, attempt: i })),
      ),
    );
    const result = await logs[0]!.verify();
    expect(result).toMatchObject({ ok: true, records: 400 });
    const records = await logs[0]!.read();
    expect(records).toHaveLength(400);
    const entries = await clients[0]!.xrange(key, '-', '+');
    let prev = GENESIS;
    for (const [id, f] of entries) {
      expect(f[f.indexOf('prev') + 1]).toBe(prev);
      prev = chainHash(prev, id, f[f.indexOf('json') + 1]!);
      expect(f[f.indexOf('hash') + 1]).toBe(prev);
    }
  });

  it('appends records made at the same moment in call order, each once, in fewer script calls than records', async () => {
    const redis = client();
    const key = keySpace(uniquePrefix('audit')).audit;
    const log = new AuditLog(redis, key);
    // Observed, not replaced: the calls still reach Redis.
    const scriptCalls = vi.spyOn(redis, 'evalsha');
    const ids = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        log.append({ type: 'call', correlationId: `c${i % 50}`, summary: `call ${i}` }, { once: `call:${i % 50}` }),
      ),
    );
    // The last ten repeat once-keys of the first fifty: recorded once, answered ''.
    expect(ids.slice(50)).toEqual(Array(10).fill(''));
    expect(ids.slice(0, 50).every((id) => /^\d+-\d+$/.test(id))).toBe(true);
    expect((await log.read()).map((r) => r.summary)).toEqual(Array.from({ length: 50 }, (_, i) => `call ${i}`));
    expect(await log.verify()).toMatchObject({ ok: true, records: 50 });
    expect(scriptCalls.mock.calls.length).toBeLessThan(10);
  });

  it('names a record whose JSON was altered in Redis', async () => {
    const { redis, key, log, ids } = await filledLog(20);
    await rewriteEntry(redis, key, ids[7]!, (f) => (f.json = f.json!.replace('record 7', 'record 7 (nothing happened)')));
    const result = await log.verify();
    expect(result).toMatchObject({ ok: false, badId: ids[7], records: 7 });
    if (!result.ok) expect(result.reason).toContain('does not match its hash');
  });

  it('detects an altered record even when its hash was recomputed, naming the record after it', async () => {
    const { redis, key, log, ids } = await filledLog(20);
    await rewriteEntry(redis, key, ids[7]!, (f) => {
      f.json = f.json!.replace('record 7', 'record seven');
      f.hash = chainHash(f.prev!, ids[7]!, f.json);
    });
    const result = await log.verify();
    expect(result).toMatchObject({ ok: false, badId: ids[8] });
    if (!result.ok) expect(result.reason).toContain(`${ids[7]} was rewritten`);
  });

  it('detects a deleted record', async () => {
    const { redis, log, key, ids } = await filledLog(10);
    await redis.xdel(key, ids[4]!);
    const result = await log.verify();
    expect(result).toMatchObject({ ok: false, badId: ids[5] });
    if (!result.ok) expect(result.reason).toContain('deleted');
  });

  it('detects a record moved to another id between its neighbours, which Redis allows only by rewriting the stream', async () => {
    const { redis, log, key, ids } = await filledLog(10, {}, 3);
    await expect(redis.xadd(key, ids[4]!, 'json', '{}')).rejects.toThrow(/equal or smaller/);
    const moved = `${ids[4]!.split('-')[0]}-1`;
    await rewriteStream(redis, key, (entries) => entries.map(([id, f]) => [id === ids[4] ? moved : id, f]));
    const result = await log.verify();
    expect(result).toMatchObject({ ok: false, badId: moved });
    if (!result.ok) expect(result.reason).toContain('does not match its hash');
  });

  it('detects deletion of the newest record and of the oldest one', async () => {
    const a = await filledLog(6);
    await a.redis.xdel(a.key, a.ids[5]!);
    expect(await a.log.verify()).toMatchObject({ ok: false, badId: a.ids[5] });
    const b = await filledLog(6);
    await b.redis.xdel(b.key, b.ids[0]!);
    const result = await b.log.verify();
    expect(result).toMatchObject({ ok: false, badId: b.ids[1] });
    if (!result.ok) expect(result.reason).toContain('never trimmed');
  });

  it('detects a record added behind the log, and a newest record replaced under a new id', async () => {
    const a = await filledLog(5);
    const forged = await a.redis.xadd(a.key, '*', 'json', '{}', 'prev', GENESIS, 'hash', GENESIS);
    expect(await a.log.verify()).toMatchObject({ ok: false, badId: forged });
    const b = await filledLog(5);
    const [[, f]] = (await b.redis.xrange(b.key, b.ids[4]!, b.ids[4]!)) as [[string, string[]]];
    await b.redis.xdel(b.key, b.ids[4]!);
    const replaced = await b.redis.xadd(b.key, '*', ...f);
    expect(await b.log.verify()).toMatchObject({ ok: false, badId: replaced });
  });

  it('keeps verifying after retention trimmed the oldest records, and detects deletions beyond the trim', async () => {
    const { redis, key, log } = await filledLog(350, { maxRecords: 100 });
    const len = await redis.xlen(key);
    expect(len).toBeLessThan(350);
    expect(len).toBeGreaterThanOrEqual(100);
    const result = await log.verify();
    expect(result).toMatchObject({ ok: true, records: len });
    if (result.ok) expect(result.anchorId).toBe(result.firstId);
    const [oldest, next] = (await redis.xrange(key, '-', '+', 'COUNT', 2)).map(([id]) => id) as [string, string];
    await redis.xdel(key, oldest);
    const broken = await log.verify();
    expect(broken).toMatchObject({ ok: false, badId: next });
    if (!broken.ok) expect(broken.reason).toContain('last retention trim kept');
  });

  it('drops records older than the maximum age on the next append', async () => {
    const { redis, key, ids } = await filledLog(3);
    await sleep(60); // the records grow older than the 40 ms age limit: only time does that
    const log = new AuditLog(redis, key, { maxAgeMs: 40 });
    const id = await log.append({ type: 'event', correlationId: 'late', summary: 'after the age limit' });
    expect((await redis.xrange(key, '-', '+')).map(([i]) => i)).toEqual([id]);
    expect(await redis.hget(chainKey(key), 'anchor-id')).toBe(id);
    expect(ids).toHaveLength(3);
    expect(await log.verify()).toMatchObject({ ok: true, records: 1 });
  });
});
