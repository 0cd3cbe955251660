import { rmSync } from 'node:fs';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { parseConfig } from '../../src/config/config.js';
import { redisFromUrl, type RedisConnection } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { startPrivateRedis, type PrivateRedis } from '../../src/redis/private-redis.js';
import { WriteProbe } from '../../src/redis/write-probe.js';
import { startRedisWatch, type RedisWatch } from '../../src/retention/redis-watch.js';
import { retentionPlan } from '../../src/retention/structures.js';
import { recordingAlerts } from '../alerts/recording-alerts.js';
import { until } from '../support/wait.js';

/**
 * The Redis watch alerts a Redis that refuses writes for another reason than memory: a read-only
 * replica (READONLY) and a failed RDB save (MISCONF), each produced for real on a private
 * redis-server. The alert is critical, says automation has stopped, goes by the fallback path once,
 * and its resolution goes the same way when writes are taken again, both audited then.
 */
describe('a Redis that refuses writes, seen by the Redis watch', () => {
  const servers: PrivateRedis[] = [];
  const connections: RedisConnection[] = [];
  let watch: RedisWatch | undefined;

  afterEach(async () => {
    await watch?.stop();
    watch = undefined;
    for (const c of connections.splice(0)) c.disconnect();
    for (const s of servers.splice(0)) await s.stop();
  });

  async function server(): Promise<{ url: string; redis: RedisConnection }> {
    const s = await startPrivateRedis();
    servers.push(s);
    const redis = redisFromUrl(s.url);
    redis.on('error', () => {});
    connections.push(redis);
    return { url: s.url, redis };
  }

  async function watched(redis: RedisConnection) {
    const keys = keySpace('refused');
    const { alerts, raised } = recordingAlerts(new AuditLog(redis, keys.audit));
    const writes = new WriteProbe({ redis, key: keys.writeProbe });
    watch = startRedisWatch({
      redis,
      plan: retentionPlan(parseConfig({ target: 'unix:///nonexistent.sock' }), keys),
      levelKey: keys.redisMemoryLevel,
      alertRatio: 0.85,
      intervalMs: 3_600_000,
      logger: pino({ level: 'silent' }),
      alerts,
      writes,
    });
    // A round now, once the probe has its verdict (in a process, each change of the probe's verdict runs one).
    const round = async () => {
      await writes.check();
      await watch!.check().catch(() => undefined);
    };
    await round();
    return { keys, raised, round };
  }

  const cases = [
    {
      refusal: 'READONLY',
      refuse: async (redis: RedisConnection) => {
        const primary = await server();
        const [host, port] = primary.url.replace('redis://', '').split(':');
        await redis.call('REPLICAOF', host!, port!);
      },
      accept: async (redis: RedisConnection) => void (await redis.call('REPLICAOF', 'NO', 'ONE')),
    },
    {
      refusal: 'MISCONF',
      refuse: async (redis: RedisConnection) => {
        const [, dir] = (await redis.config('GET', 'dir')) as [string, string];
        rmSync(dir, { recursive: true, force: true });
        await redis.config('SET', 'save', '3600 1');
        await redis.bgsave();
        await until('the background save failed', async () => /rdb_last_bgsave_status:err/.test(await redis.info('persistence')), 10_000);
      },
      accept: async (redis: RedisConnection) => void (await redis.config('SET', 'stop-writes-on-bgsave-error', 'no')),
    },
  ];

  it.each(cases)('alerts $refusal critical by the fallback path once, and resolves it the same way when writes are taken again', async (c) => {
    const { redis } = await server();
    const { keys, raised, round } = await watched(redis);
    expect(raised).toEqual([]);

    await c.refuse(redis);
    await round();
    await round();
    expect(raised).toEqual([
      expect.objectContaining({
        direct: true,
        status: 'firing',
        kind: 'redis.writes-refused',
        severity: 'critical',
        summary: expect.stringMatching(new RegExp(`^Redis refuses writes \\(${c.refusal}: .*\\): automation has stopped`)),
      }),
    ]);

    await c.accept(redis);
    await round();
    await round();
    expect(raised.map((a) => [a.kind, a.status, a.direct])).toEqual([
      ['redis.writes-refused', 'firing', true],
      ['redis.writes-refused', 'resolved', true],
    ]);
    expect(raised[1]!.summary).toMatch(/^Redis takes writes again: automation resumed/);
    const trail = await new AuditLog(redis, keys.audit).read({ instance: 'redis' });
    expect(trail.map((r) => [r.kind, r.severity, (r as Record<string, unknown>).sentDirectly])).toEqual([
      ['redis.writes-refused', 'critical', ['hook']],
      ['redis.writes-refused', 'info', ['hook']],
    ]);
  });
});
