import { rmSync } from 'node:fs';
import { Queue } from 'bullmq';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { EventIngestor } from '../../src/events/event-ingestor.js';
import { redisFromUrl, type RedisConnection } from '../../src/redis/connect.js';
import { startPrivateRedis, type PrivateRedis } from '../../src/redis/private-redis.js';
import { WriteProbe } from '../../src/redis/write-probe.js';
import { writeRefusalOf } from '../../src/redis/write-refusal.js';
import { until } from '../support/wait.js';

/**
 * A reachable Redis that refuses writes is told apart from one that takes them, and says why:
 * each refusal produced for real on a private redis-server (a full one, a read-only replica, one
 * whose RDB save failed), through the probe's own write and through a BullMQ write of the hot path.
 */
describe('a Redis that refuses writes', () => {
  const servers: PrivateRedis[] = [];
  const connections: RedisConnection[] = [];

  async function server(): Promise<{ url: string; redis: RedisConnection }> {
    const s = await startPrivateRedis();
    servers.push(s);
    const redis = redisFromUrl(s.url);
    redis.on('error', () => {});
    connections.push(redis);
    return { url: s.url, redis };
  }

  afterEach(async () => {
    for (const c of connections.splice(0)) c.disconnect();
    for (const s of servers.splice(0)) await s.stop();
  });

  it('is full (maxmemory reached): the probe and a queued job both read OOM, and writable again once the limit is raised', async () => {
    const { redis } = await server();
    const changes: string[] = [];
    const probe = new WriteProbe({ redis, key: 'probe', onChange: (s) => changes.push(String(s.refusal ?? s.writable)) });
    expect((await probe.check()).writable).toBe(true);
    await redis.config('SET', 'maxmemory', '1');
    const refused = await probe.check();
    expect(refused).toMatchObject({ writable: false, refusal: 'oom', error: expect.stringMatching(/^OOM command not allowed/) });

    const queue = new Queue('q', { connection: redis });
    queue.on('error', () => {});
    const err = await queue.add('job', { a: 1 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await queue.close();
    expect(writeRefusalOf(err)).toBe('oom');

    await redis.config('SET', 'maxmemory', '0');
    expect((await probe.check()).writable).toBe(true);
    expect(changes).toEqual(['true', 'oom', 'true']);
  });

  it("is found full at once when the ingestor's write is refused, not at the next interval, and the held frame is queued once writes are taken", async () => {
    const { redis } = await server();
    const probe = new WriteProbe({ redis, key: 'probe', intervalMs: 3_600_000 });
    probe.start();
    try {
      await until('the first probe', () => probe.state.writable === true);
      const queue = new Queue('events', { connection: redis });
      queue.on('error', () => {});
      const ingestor = new EventIngestor({
        queue,
        target: 'unix:///x',
        logger: pino({ level: 'silent' }),
        onWriteError: (err) => probe.suspect(err),
      });
      await redis.config('SET', 'maxmemory', '1');
      const frame = JSON.stringify({
        type: 'lifecycle',
        timestamp: new Date().toISOString(),
        metadata: { action: 'instance-shutdown', source: '/1.0/instances/web-1' },
      });
      ingestor.pushFrame(frame, Date.now());
      await until('the probe finding Redis full', () => probe.state.refusal === 'oom', 5_000);
      expect(await queue.count()).toBe(0);
      await redis.config('SET', 'maxmemory', '0');
      await until('the held frame queued', async () => (await queue.count()) === 1, 5_000);
      await ingestor.drain();
      await queue.close();
    } finally {
      probe.stop();
    }
  });

  it('is a read-only replica: READONLY, and writable once promoted', async () => {
    const primary = await server();
    const { redis } = await server();
    const [host, port] = primary.url.replace('redis://', '').split(':');
    await redis.call('REPLICAOF', host!, port!);
    const probe = new WriteProbe({ redis, key: 'probe' });
    expect(await probe.check()).toMatchObject({ writable: false, refusal: 'readonly' });
    await redis.call('REPLICAOF', 'NO', 'ONE');
    expect((await probe.check()).writable).toBe(true);
  });

  it('cannot save its RDB with stop-writes-on-bgsave-error: MISCONF, and writable once stop-writes-on-bgsave-error is off', async () => {
    const { redis } = await server();
    const [, dir] = (await redis.config('GET', 'dir')) as [string, string];
    // Its data folder gone (as a full or unmounted disk would), the background save fails.
    rmSync(dir, { recursive: true, force: true });
    await redis.config('SET', 'save', '3600 1');
    await redis.config('SET', 'stop-writes-on-bgsave-error', 'yes');
    await redis.bgsave();
    await until('the background save failed', async () => /rdb_last_bgsave_status:err/.test(await redis.info('persistence')), 10_000);
    const probe = new WriteProbe({ redis, key: 'probe' });
    expect(await probe.check()).toMatchObject({ writable: false, refusal: 'misconf', error: expect.stringMatching(/^MISCONF/) });
    await redis.config('SET', 'stop-writes-on-bgsave-error', 'no');
    expect((await probe.check()).writable).toBe(true);
  });

  it('does not answer: not writable, with no refusal named', async () => {
    const s = await startPrivateRedis();
    const redis = redisFromUrl(s.url);
    redis.on('error', () => {});
    connections.push(redis);
    await s.stop();
    const state = await new WriteProbe({ redis, key: 'probe', timeoutMs: 300 }).check();
    expect(state.writable).toBe(false);
    expect(state.refusal).toBeUndefined();
  });

  it('names no refusal for other errors, and reads one through an aborted transaction or a cause', () => {
    expect(writeRefusalOf(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBeUndefined();
    expect(writeRefusalOf(new Error('Connection is closed.'))).toBeUndefined();
    const aborted = Object.assign(new Error('EXECABORT Transaction discarded because of previous errors.'), {
      previousErrors: [new Error("OOM command not allowed when used memory > 'maxmemory'.")],
    });
    expect(writeRefusalOf(aborted)).toBe('oom');
    expect(writeRefusalOf(new Error('job failed', { cause: new Error("READONLY You can't write against a read only replica.") }))).toBe('readonly');
  });
});
