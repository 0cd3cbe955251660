import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { parseConfig, type ConfigInput } from '../../src/config/config.js';
import { queueHistory } from '../../src/config/queue-history.js';
import { memoryCheck, structureCheck } from '../../src/doctor/retention-checks.js';
import type { CanonicalEvent } from '../../src/events/canonical-event.js';
import { EventArchive } from '../../src/events/event-archive.js';
import { keepRejected } from '../../src/events/rejected-events.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { keySpace } from '../../src/redis/key-space.js';
import { dedupeWindowMs, eventRedeliverySpanMs } from '../../src/errors/retry-policy.js';
import { startRedisWatch } from '../../src/retention/redis-watch.js';
import { readStructures, retentionPlan } from '../../src/retention/structures.js';
import { until } from '../support/wait.js';
import { ownRedis, type OwnRedis } from '../support/own-redis.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { startObservabilityBed, type ObservabilityBed } from '../metrics/observability-bed.js';
import { recordingAlerts } from '../alerts/recording-alerts.js';

const silent = pino({ level: 'silent' });
const base: ConfigInput = { target: 'unix:///nonexistent.sock' };

const lifecycle = (id: string): CanonicalEvent => ({
  kind: 'lifecycle',
  id,
  target: 't',
  location: 'none',
  project: 'default',
  timestamp: new Date().toISOString(),
  synthetic: false,
  action: 'instance-updated',
  source: '/1.0/instances/web-1',
  instance: 'web-1',
});

/**
 * Retention the operator sets (docs/operations.md, Retention): each structure Reflex keeps in Redis
 * is bounded by count, age and (where entries vary in size) bytes as configured, dedupe keys last as
 * long as what they guard can come back, and a Redis close to maxmemory alerts before writes fail.
 * A private redis-server of the test's own: small node sizes make count trims visible at tiny limits,
 * and its maxmemory is changed.
 */
describe('Redis retention the operator sets', () => {
  let server: OwnRedis;
  let redis: Redis;

  beforeAll(async () => {
    server = await ownRedis();
    redis = new Redis(server.url);
    // Whole-node trims (MAXLEN ~) drop nodes of this many entries: small, so tiny limits trim.
    await redis.config('SET', 'stream-node-max-entries', '4');
  });

  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
    server?.remove();
  });

  describe('configuration', () => {
    it('accepts every documented retention key, durations included', () => {
      const c = parseConfig({
        ...base,
        auditMaxRecords: 5,
        auditMaxAgeMs: '2h' as unknown as number,
        archiveMaxLength: 10,
        archiveMaxAgeMs: 60_000,
        archiveMaxBytes: 1 << 20,
        rejectedMaxLength: 3,
        rejectedMaxAgeMs: '1d' as unknown as number,
        rejectedMaxBytes: 1 << 20,
        jobsKeepCompleted: 7,
        jobsKeepCompletedMs: '30m' as unknown as number,
        jobsKeepFailed: 8,
        jobsKeepFailedMs: 60_000,
        redisMemoryAlertRatio: 0.8,
        retentionCheckMs: 1_000,
      });
      expect(c).toMatchObject({
        auditMaxRecords: 5,
        auditMaxAgeMs: 7_200_000,
        rejectedMaxAgeMs: 86_400_000,
        jobsKeepCompletedMs: 1_800_000,
        redisMemoryAlertRatio: 0.8,
      });
      expect(queueHistory(c)).toEqual({ removeOnComplete: { count: 7, age: 1800 }, removeOnFail: { count: 8, age: 60 } });
    });

    it('has defaults that fit the documented budget', () => {
      const c = parseConfig(base);
      expect(c).toMatchObject({
        auditMaxRecords: 200_000,
        auditMaxAgeMs: 7 * 86_400_000,
        archiveMaxLength: 200_000,
        archiveMaxBytes: 128 * 1024 * 1024,
        rejectedMaxLength: 10_000,
        rejectedMaxBytes: 64 * 1024 * 1024,
        jobsKeepCompleted: 10_000,
        jobsKeepCompletedMs: 3_600_000,
        jobsKeepFailed: 10_000,
        jobsKeepFailedMs: 7 * 86_400_000,
        redisMemoryAlertRatio: 0.85,
      });
    });

    it.each([
      ['auditMaxRecords', -1],
      ['auditMaxAgeMs', 'soon'],
      ['archiveMaxBytes', 10],
      ['rejectedMaxLength', 0],
      ['rejectedMaxBytes', 1.5],
      ['jobsKeepCompleted', -3],
      ['jobsKeepFailedMs', 0],
      ['redisMemoryAlertRatio', 1.2],
      ['redisMemoryAlertRatio', 0],
    ])('refuses %s = %j, naming the field', (field, value) => {
      expect(() => parseConfig({ ...base, [field]: value } as ConfigInput)).toThrow(new RegExp(`^invalid configuration:\\n  ${field}: `));
    });
  });

  describe('each stream is trimmed as configured', () => {
    const fill = async (key: string, n: number, bytes = 10) => {
      const m = redis.multi();
      for (let i = 0; i < n; i++) m.xadd(key, '*', 'event', 'x'.repeat(bytes));
      await m.exec();
    };

    it('the archive by count, then by age, then by bytes', async () => {
      const keys = keySpace(uniquePrefix('ret-archive'));
      const plan = (o: ConfigInput) => retentionPlan(parseConfig({ ...base, ...o }), keys);
      await fill(keys.archive, 50);
      const byCount = await readStructures(redis, plan({ archiveMaxLength: 12 }), { enforce: true });
      expect(await redis.xlen(keys.archive)).toBe(12);
      expect(byCount.trimmed.get('archive')).toBe(38);

      const oldest = Date.now();
      const byAge = await readStructures(redis, plan({ archiveMaxAgeMs: 60_000 }), { enforce: true, now: oldest + 60_000 + 5_000 });
      expect(await redis.xlen(keys.archive), 'every entry older than a minute at now+65 s').toBe(0);
      expect(byAge.trimmed.get('archive')).toBe(12);

      await fill(keys.archive, 400, 2_000);
      const before = (await redis.call('MEMORY', 'USAGE', keys.archive, 'SAMPLES', 0)) as number;
      expect(before).toBeGreaterThan(400 * 2_000);
      const { readings } = await readStructures(redis, plan({ archiveMaxBytes: 256 * 1024 }), { enforce: true });
      const after = (await redis.call('MEMORY', 'USAGE', keys.archive, 'SAMPLES', 0)) as number;
      expect(after, 'exact size after the trim').toBeLessThanOrEqual(256 * 1024);
      expect(await redis.xlen(keys.archive)).toBeGreaterThan(50);
      expect(readings.find((r) => r.structure === 'archive')).toMatchObject({ maxBytes: 256 * 1024, maxEntries: 200_000 });
    });

    it('the rejected stream by count and age on append, and by bytes on the retention round', async () => {
      const keys = keySpace(uniquePrefix('ret-rejected'));
      const audit = new AuditLog(redis, keys.audit);
      const reject = (i: number, limits: Parameters<typeof keepRejected>[4]) =>
        keepRejected(
          redis,
          keys.rejected,
          audit,
          { target: 't', reason: 'bad', raw: `${i}:${'r'.repeat(3_000)}`, hash: `h${i}`, receivedAt: Date.now() },
          limits,
        );
      for (let i = 0; i < 40; i++) await reject(i, { maxLength: 8 });
      const n = await redis.xlen(keys.rejected);
      expect(n, 'trimmed a whole node at a time').toBeLessThanOrEqual(8 + 4);
      expect(n).toBeGreaterThanOrEqual(8);

      // Every kept entry, the newest too (on a loaded machine the appends above span more than 200 ms).
      await until(
        'the kept entries are older than 200 ms',
        async () => {
          const id = (await redis.xrevrange(keys.rejected, '+', '-', 'COUNT', 1))[0]![0];
          return Date.now() - Number(id.split('-')[0]) > 250;
        },
        5_000,
      );
      await reject(100, { maxLength: 1_000, maxAgeMs: 200 });
      expect(await redis.xlen(keys.rejected), 'only the new one and its node are younger').toBeLessThanOrEqual(4);

      for (let i = 200; i < 300; i++) await reject(i, { maxLength: 1_000 });
      await readStructures(redis, retentionPlan(parseConfig({ ...base, rejectedMaxBytes: 128 * 1024 }), keys), { enforce: true });
      expect((await redis.call('MEMORY', 'USAGE', keys.rejected, 'SAMPLES', 0)) as number).toBeLessThanOrEqual(128 * 1024);
    });

    it('the audit stream by count (whole nodes) and by age on append, the chain still verifying', async () => {
      const keys = keySpace(uniquePrefix('ret-audit'));
      const counted = new AuditLog(redis, keys.audit, { maxRecords: 10 });
      for (let i = 0; i < 60; i++) await counted.append({ type: 'event', correlationId: `c${i}`, summary: `e${i}` });
      const n = await redis.xlen(keys.audit);
      expect(n).toBeGreaterThanOrEqual(10);
      expect(n).toBeLessThanOrEqual(10 + 4);
      expect((await counted.verify()).ok).toBe(true);

      const aged = new AuditLog(redis, keys.audit, { maxRecords: 0, maxAgeMs: 300 });
      const last = await aged.append({ type: 'event', correlationId: 'marker', summary: 'marker' });
      await until('the marker is older than the age bound', () => Date.now() - Number(last.split('-')[0]) > 400, 5_000);
      await aged.append({ type: 'event', correlationId: 'after', summary: 'after' });
      expect((await aged.read()).map((r) => r.correlationId)).toEqual(['after']);
      expect((await aged.verify()).ok).toBe(true);
    });

    it('the queues keep finished jobs as jobsKeep* say', async () => {
      const prefix = keySpace(uniquePrefix('ret-jobs')).bullPrefix;
      const history = queueHistory(parseConfig({ ...base, jobsKeepCompleted: 3, jobsKeepFailed: 2 }));
      const q = new Queue('events', { connection: redis, prefix, defaultJobOptions: history });
      const workerConnection = new Redis(server.url, { maxRetriesPerRequest: null });
      const w = new Worker(
        'events',
        async (job) => {
          if (job.data.fail) throw new Error('no');
        },
        { connection: workerConnection, prefix },
      );
      try {
        for (let i = 0; i < 10; i++) await q.add('e', { fail: i % 2 === 0 });
        await until(
          'all ten settled',
          async () => {
            const c = await q.getJobCounts('waiting', 'active');
            return (c.waiting ?? 0) + (c.active ?? 0) === 0;
          },
          10_000,
        );
        // BullMQ trims in the same script that finishes a job: once none is left to run, the counts are final.
        expect(await q.getJobCounts('completed', 'failed')).toEqual({ completed: 3, failed: 2 });
      } finally {
        await w.close();
        await q.close();
        workerConnection.disconnect();
      }
    });
  });

  describe('dedupe windows match what they guard against', () => {
    it('are as long as a finished job is kept, never shorter than an event job can come back by itself', () => {
      expect(dedupeWindowMs(3_600_000)).toBe(3_600_000);
      expect(dedupeWindowMs(1_000)).toBe(eventRedeliverySpanMs());
      expect(eventRedeliverySpanMs()).toBeGreaterThan(9 * 60_000);
      expect(eventRedeliverySpanMs()).toBeLessThan(11 * 60_000);
    });

    it('an event redelivered within the window is archived and audited once; past it, nothing remembers it', async () => {
      const keys = keySpace(uniquePrefix('ret-dedupe'));
      const windowMs = 400;
      const archive = new EventArchive({ redis, key: keys.archive, dedupeWindowMs: windowMs });
      const audit = new AuditLog(redis, keys.audit, { onceTtlMs: windowMs });
      const e = lifecycle('ev-1');
      expect(await archive.append(e, 'processed')).toBe(true);
      expect(await audit.append({ type: 'event', correlationId: e.id, summary: 'seen' }, { once: `event:${e.id}` })).not.toBe('');
      const seenKey = `${keys.archive}:seen:t:ev-1`;
      const ttl = await redis.pttl(seenKey);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(windowMs);
      // Redelivered within the window: neither archived nor audited again.
      expect(await archive.append(e, 'processed')).toBe(false);
      expect(await audit.append({ type: 'event', correlationId: e.id, summary: 'seen' }, { once: `event:${e.id}` })).toBe('');
      expect(await redis.xlen(keys.archive)).toBe(1);
      await until(
        'the window passed',
        async () => (await redis.exists(seenKey)) === 0 && (await redis.exists(`${keys.audit}:once:event:ev-1`)) === 0,
        5_000,
      );
    });

    it('a once-key lasts the configured window, not a day', async () => {
      const keys = keySpace(uniquePrefix('ret-once'));
      const audit = new AuditLog(redis, keys.audit, { onceTtlMs: dedupeWindowMs(3_600_000) });
      await audit.append({ type: 'event', correlationId: 'x', summary: 'x' }, { once: 'event:x' });
      const ttl = await redis.pttl(`${keys.audit}:once:event:x`);
      expect(ttl).toBeGreaterThan(3_500_000);
      expect(ttl).toBeLessThanOrEqual(3_600_000);
    });
  });

  describe('Redis memory', () => {
    it('alerts redis.memory-high once across replicas when used_memory nears maxmemory, critical closer, resolved when it drops', async () => {
      const keys = keySpace(uniquePrefix('ret-memory'));
      const { alerts: raising, raised: alerts } = recordingAlerts(new AuditLog(redis, keys.audit));
      const metrics = new Metrics({ processMetrics: false });
      const plan = retentionPlan(parseConfig(base), keys);
      const watch = (m?: Metrics) =>
        startRedisWatch({
          redis,
          plan,
          levelKey: keys.redisMemoryLevel,
          alertRatio: 0.85,
          intervalMs: 3_600_000,
          metrics: m,
          logger: silent,
          alerts: raising,
        });
      const [a, b] = [watch(metrics), watch()];
      const setMax = async (share: number) => {
        const used = Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))![1]);
        await redis.config('SET', 'maxmemory', String(Math.ceil(used / share)));
      };
      try {
        await a.check();
        await b.check();
        expect(alerts, 'no maxmemory: nothing to be near').toEqual([]);

        await setMax(0.9);
        await a.check();
        await b.check();
        expect(alerts).toEqual([
          expect.objectContaining({
            kind: 'redis.memory-high',
            severity: 'warning',
            status: 'firing',
            summary: expect.stringMatching(/^Redis uses 9\d\.\d % of maxmemory/),
          }),
        ]);
        const text = (await metrics.scrape()).body;
        expect(text).toMatch(/^reflex_redis_memory_max_bytes [1-9]\d*$/m);
        expect(text).toMatch(/^reflex_redis_memory_used_bytes [1-9]\d*$/m);
        expect(text).toMatch(/^reflex_redis_structure_budget_bytes\{structure="archive"\} 134217728$/m);
        expect(text).toMatch(/^reflex_redis_structure_entries\{structure="queue:events"\} 0$/m);

        await setMax(0.97);
        await b.check();
        await a.check();
        expect(alerts.map((x) => [x.severity, x.status])).toEqual([
          ['warning', 'firing'],
          ['critical', 'firing'],
        ]);

        await redis.config('SET', 'maxmemory', String(1024 * 1024 * 1024));
        await a.check();
        await b.check();
        expect(alerts.map((x) => [x.severity, x.status])).toEqual([
          ['warning', 'firing'],
          ['critical', 'firing'],
          ['critical', 'resolved'],
        ]);
        expect(alerts[2]!.summary).toMatch(/^Redis memory back under 85 % of maxmemory/);
      } finally {
        await redis.config('SET', 'maxmemory', '0');
        await a.stop();
        await b.stop();
      }
    });
  });

  describe('reflex doctor lines', () => {
    it('show each structure against its bounds, and warn over them', () => {
      expect(
        structureCheck({ structure: 'archive', entries: 1234, bytes: 2 * 1024 * 1024, maxEntries: 200_000, maxBytes: 256 * 1024 * 1024 }),
      ).toEqual({ name: 'retention', ok: true, detail: 'archive: 1,234 entries of 200,000, 2.0 MiB of 256.0 MiB' });
      expect(
        structureCheck({ structure: 'rejected', entries: 10, bytes: 70 * 1024 * 1024, maxEntries: 10_000, maxBytes: 64 * 1024 * 1024 }),
      ).toMatchObject({ ok: true, warning: true, detail: expect.stringContaining('over its bound') });
      expect(structureCheck({ structure: 'ttl-keys', entries: 5, bytes: undefined })).toEqual({
        name: 'retention',
        ok: true,
        detail: 'ttl-keys: 5 entries, size not reported',
      });
    });

    it('warn with no maxmemory, warn near it, fail close to it', () => {
      expect(memoryCheck({ usedBytes: 10 * 1024 * 1024, maxBytes: 0 }, 0.85)).toMatchObject({
        name: 'redis-memory',
        ok: true,
        warning: true,
        detail: expect.stringContaining('maxmemory 0 (no limit)'),
        fix: expect.stringContaining('CONFIG SET maxmemory'),
      });
      expect(memoryCheck({ usedBytes: 100, maxBytes: 1000 }, 0.85)).toEqual({
        name: 'redis-memory',
        ok: true,
        detail: 'used 100 B of maxmemory 1000 B (10.0 %; alert from 85 %)',
      });
      expect(memoryCheck({ usedBytes: 900, maxBytes: 1000 }, 0.85)).toMatchObject({ ok: true, warning: true });
      expect(memoryCheck({ usedBytes: 990, maxBytes: 1000 }, 0.85)).toMatchObject({ ok: false });
    });
  });

  describe("reflex run applies them (in-process Reflex on the simulator, the test run's Redis)", () => {
    let bed: ObservabilityBed;
    const shared = redisClient();

    beforeAll(async () => {
      bed = await startObservabilityBed({
        rulesDir: 'test/fixtures/rules-crash-loop',
        instances: [{ name: 'web-1' }],
        config: { jobsKeepCompletedMs: '20m' as unknown as number, jobsKeepCompleted: 500, archiveMaxLength: 2, retentionCheckMs: 200 },
      });
    });
    afterAll(async () => {
      await bed?.stop();
      shared.disconnect();
    });

    it("keys dedupe for the queue history's window, keeps jobs as configured, trims the archive and reports each structure", async () => {
      const keys = keySpace(bed.prefix);
      bed.sim.controls.crash('web-1');
      const audit = new AuditLog(shared, keys.audit);
      await until('the crash healed', async () => (await audit.read()).some((r) => r.type === 'outcome'), 20_000);
      // Named from an audited event (no KEYS: on a Redis Cluster it reads one node).
      const audited = (await audit.read()).find((r) => r.type === 'event')!;
      const [id, target] = [audited.correlationId, audited.target];
      for (const key of [`${keys.archive}:seen:${target}:${id}`, `${keys.audit}:once:event:${id}`]) {
        const ttl = await shared.pttl(key);
        expect(ttl, key).toBeGreaterThan(19 * 60_000);
        expect(ttl, key).toBeLessThanOrEqual(20 * 60_000);
      }
      const events = new Queue(keys.eventsQueue, { connection: shared, prefix: keys.bullPrefix });
      try {
        const [job] = await events.getJobs(['completed'], 0, 0);
        expect(job!.opts).toMatchObject({ removeOnComplete: { count: 500, age: 1200 }, removeOnFail: { count: 10_000, age: 7 * 86_400 } });
      } finally {
        await events.close();
      }
      await until('the archive trimmed to 2 by the retention round', async () => (await shared.xlen(keys.archive)) <= 2, 10_000);
      await until(
        'each structure on /metrics',
        async () => {
          const text = await (await fetch(`${bed.url}/metrics`)).text();
          return (
            ['audit', 'archive', 'rejected', 'queue:events', 'queue:actions'].every((st) =>
              text.includes(`reflex_redis_structure_entries{structure="${st}"}`),
            ) &&
            /^reflex_redis_structure_budget_entries\{structure="archive"\} 2$/m.test(text) &&
            /^reflex_redis_memory_used_bytes [1-9]/m.test(text)
          );
        },
        10_000,
      );
    });
  });
});
