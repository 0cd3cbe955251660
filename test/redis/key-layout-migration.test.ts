import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { verifyAuditLog } from '../../src/audit/audit-verifier.js';
import { assertCurrentKeyLayout, migrateKeyLayout, newKeyName } from '../../src/redis/key-layout-migration.js';
import { keySpace } from '../../src/redis/key-space.js';
import { startPrivateRedis, type PrivateRedis } from '../../src/redis/private-redis.js';
import { reflexInProcess } from '../cli/in-process.js';

/**
 * Upgrading from the key layout before Redis Cluster hash tags: `reflex run` refuses to start on
 * old keys, and `reflex migrate-keys` moves each of them to the name key-space.ts gives it now.
 * The old keys are written here as the previous version named them, on a private redis-server.
 */
const P = 'up';
const T = 'https://10.0.0.1:8443';
const T2 = 'unix:///var/lib/lxd/unix.socket';
const ref = { target: T, project: 'default', instance: 'web-1' };
const ks = keySpace(P);

let server: PrivateRedis;
let redis: Redis;
beforeAll(async () => {
  server = await startPrivateRedis();
  redis = new Redis(server.url, { maxRetriesPerRequest: null });
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

describe('key layout migration', () => {
  it('names every old per-target and per-instance key as key-space.ts does now', () => {
    const targets = [T, T2];
    const cases: [string, string][] = [
      [`${P}:audit`, ks.audit],
      [`${P}:audit:chain`, `${ks.audit}:chain`],
      [`${P}:archive:seen:${T}:e1`, `${ks.archive}:seen:${T}:e1`],
      [`${P}:rejected`, ks.rejected],
      [`${P}:bull:events:meta`, `${ks.bullPrefix}:events:meta`],
      [`${P}:notify:bull:flush:wait`, `${ks.notify.bullPrefix}:flush:wait`],
      [`${P}:notify:groups`, ks.notify.groups],
      [`${P}:notify:alert:fp1`, ks.notify.alert('fp1')],
      [`${P}:state:${T}`, ks.state(T)],
      [`${P}:members:${T2}`, ks.members(T2)],
      [`${P}:lease:${T}:fence`, ks.leaseFence(T)],
      [`${P}:storm:${T}:node1:heal`, ks.storm(T, 'node1', 'heal')],
      [`${P}:storms:${T}:node1`, ks.storms(T, 'node1')],
      [`${P}:storm-failures:${T}:node1:heal`, ks.stormFailures(T, 'node1', 'heal')],
      [`${P}:restarts:${T}:default/web-1`, ks.restarts(ref)],
      [`${P}:restarts:${T}:default/web-1:delays`, `${ks.restarts(ref)}:delays`],
      [`${P}:quarantine:${T}:default/web-1`, ks.quarantine(ref)],
      [`${P}:cooldown:heal:${T}:default/web-1`, ks.cooldown('heal', ref)],
      [`${P}:standback:heal:${T}:default/web-1`, ks.standBack('heal', ref)],
      [`${P}:own-ops:${T}:default/web-1`, ks.ownOperations(ref)],
      [`${P}:pending:${T}:default/web-1`, ks.pendingActions(ref)],
      [`${P}:snapshot-ledger:${T}:default/web-1`, ks.schedules.ledger(ref)],
      [`${P}:schedule-seen:nightly:${T}:default/web-1`, ks.schedules.firstSeen('nightly', ref)],
      [`${P}:schedule-alerted:stale:nightly:${T}:default/web-1`, ks.schedules.alerted('stale', 'nightly', ref)],
    ];
    for (const [old, now] of cases) expect(newKeyName(P, old, targets), old).toBe(now);
    for (const same of [`${P}:silences`, `${P}:inflight:j1`, `${P}:done:abc`, `${P}:schedule-done:nightly:1`, ks.audit, 'other:audit']) expect(newKeyName(P, same, targets), same).toBeUndefined();
    expect(newKeyName(P, `${P}:quarantine:https://elsewhere:8443:default/x`, targets)).toBeUndefined();
  });

  it('refuses to start on old keys, then moves queued jobs, the audit chain, budgets and quarantines to their new names', async () => {
    const old = new Queue('events', { connection: redis, prefix: `${P}:bull` });
    await old.add('batch', { items: ['frame-1'] }, { jobId: 'j1' });
    await old.add('batch', { items: ['frame-2'] }, { jobId: 'j2' });
    await old.close();
    const oldAudit = new AuditLog(redis, `${P}:audit`);
    await oldAudit.append({ type: 'decision', correlationId: 'c1', target: T, instance: 'web-1', rule: 'heal', summary: 'first', matched: true });
    await oldAudit.append({ type: 'decision', correlationId: 'c2', target: T, instance: 'web-1', rule: 'heal', summary: 'second', matched: true });
    await redis.set(`${P}:quarantine:${T}:default/web-1`, '1700000000000', 'PX', 600_000);
    await redis.zadd(`${P}:restarts:${T}:default/web-1`, 1, 'incident-1');
    await redis.hset(`${P}:state:${T}`, 'default/web-1', '{"status":"Running"}');
    await redis.hset(`${P}:silences`, 's1', '{}');
    await redis.hset(`${P}:notify:groups`, 'g1', '{}');
    await redis.set(`${P}:state:https://gone:8443`, 'x');

    await expect(assertCurrentKeyLayout(redis, P)).rejects.toMatchObject({ code: 'KEY_LAYOUT_OUTDATED', message: expect.stringContaining('reflex migrate-keys --prefix up') });

    const dry = await migrateKeyLayout(redis, P, [T], { dryRun: true });
    expect(dry.renamed.length).toBeGreaterThan(8);
    expect(await redis.exists(`${P}:audit`)).toBe(1);

    const res = await migrateKeyLayout(redis, P, [T]);
    expect(res.renamed).toEqual(dry.renamed);
    expect(res.conflicts).toEqual([]);
    expect(res.unknown).toEqual([`${P}:state:https://gone:8443`]);
    await expect(assertCurrentKeyLayout(redis, P)).resolves.toBeUndefined();
    expect((await redis.keys(`${P}:*`)).sort()).toEqual([`${P}:silences`, `${P}:state:https://gone:8443`]);

    const moved = new Queue(ks.eventsQueue, { connection: redis, prefix: ks.bullPrefix });
    expect((await moved.getWaiting()).map((j) => [j.id, j.data]).sort()).toEqual([
      ['j1', { items: ['frame-1'] }],
      ['j2', { items: ['frame-2'] }],
    ]);
    await moved.close();
    expect(await verifyAuditLog(redis, ks.audit)).toMatchObject({ ok: true, records: 2 });
    await new AuditLog(redis, ks.audit).append({ type: 'decision', correlationId: 'c3', target: T, instance: 'web-1', rule: 'heal', summary: 'after', matched: true });
    expect(await verifyAuditLog(redis, ks.audit)).toMatchObject({ ok: true, records: 3 });
    expect(await redis.get(ks.quarantine(ref))).toBe('1700000000000');
    expect(await redis.pttl(ks.quarantine(ref))).toBeGreaterThan(500_000);
    expect(await redis.zrange(ks.restarts(ref), '0', '-1')).toEqual(['incident-1']);
    expect(await redis.hget(ks.state(T), 'default/web-1')).toBe('{"status":"Running"}');
    expect(await redis.hget(ks.notify.groups, 'g1')).toBe('{}');
  });

  it('leaves an old key whose new name is taken and reports it', async () => {
    const p = 'clash';
    const k = keySpace(p);
    await redis.set(`${p}:quarantine:${T}:default/web-1`, 'old');
    await redis.set(k.quarantine(ref), 'new');
    const res = await migrateKeyLayout(redis, p, [T]);
    expect(res.conflicts).toEqual([[`${p}:quarantine:${T}:default/web-1`, k.quarantine(ref)]]);
    expect(await redis.get(k.quarantine(ref))).toBe('new');
    expect(await redis.get(`${p}:quarantine:${T}:default/web-1`)).toBe('old');
  });
});

describe('reflex migrate-keys', () => {
  it('shows the renames with --dry-run, then renames and says how many', async () => {
    const p = 'cli';
    await redis.set(`${p}:quarantine:${T2}:default/db`, '1');
    await redis.xadd(`${p}:audit`, '*', 'json', '{}');
    const args = ['migrate-keys', '--redis', server.url, '--prefix', p, '--target', T2];
    const dry = await reflexInProcess([...args, '--dry-run']);
    expect(dry.stdout).toContain(`would rename ${p}:quarantine:${T2}:default/db -> ${keySpace(p).quarantine({ target: T2, project: 'default', instance: 'db' })}`);
    expect(dry.stdout).toMatch(/would rename 2 key\(s\); 0 conflict\(s\); 0 left for other targets/);
    expect(dry.code).toBe(0);
    const run = await reflexInProcess(args);
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toMatch(/^renamed 2 key\(s\)/m);
    expect(await redis.exists(keySpace(p).audit)).toBe(1);
  });

  it('refuses to move keys while a Reflex worker is connected to the queues', async () => {
    const p = 'busy';
    await redis.xadd(`${p}:audit`, '*', 'json', '{}');
    const conn = redis.duplicate();
    const worker = new Worker('actions', async () => undefined, { connection: conn, prefix: `${p}:bull` });
    await worker.waitUntilReady();
    try {
      const res = await reflexInProcess(['migrate-keys', '--redis', server.url, '--prefix', p, '--target', T2]);
      expect(res.code).toBe(3);
      expect(res.stderr).toMatch(/connection\(s\) of Reflex workers are open on the queues of prefix busy: stop every Reflex process first/);
      expect(await redis.exists(`${p}:audit`)).toBe(1);
    } finally {
      await worker.close();
      conn.disconnect();
    }
  });

  it('refuses a Redis Cluster URL', async () => {
    const res = await reflexInProcess(['migrate-keys', '--redis', 'redis-cluster://127.0.0.1:1', '--target', T2]);
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(/not on a Redis Cluster/);
  });
});
