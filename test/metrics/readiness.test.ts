import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readiness } from '../../src/http/readiness.js';
import { keySpace } from '../../src/redis/key-space.js';
import { startSimulator } from '../../src/simulator/simulator.js';
import { until } from '../support/wait.js';
import { ownRedis, type OwnRedis } from '../support/own-redis.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { scrape, startObservabilityBed, valueOf, type ObservabilityBed } from './observability-bed.js';

/**
 * /readyz tells the truth: a paused queue, a queue no worker consumes, an event stream lost past
 * its grace and an unreachable Redis each turn it 503 with the reason, and show in `reflex_ready`
 * (and `reflex_queue_paused`, `reflex_queue_workers`). In-process Reflex on the simulator, real Redis.
 */
type Report = { status: string; checks: Record<string, { ok: boolean; detail: string }> };

async function readyz(url: string): Promise<{ status: number; body: Report }> {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: (await res.json()) as Report };
}

const rulesDir = 'test/fixtures/rules-crash-loop';

describe('readiness of a running Reflex (simulator, real Redis)', () => {
  let bed: ObservabilityBed;
  let events: Queue;
  let connection: ReturnType<typeof redisClient> | undefined;

  beforeAll(async () => {
    bed = await startObservabilityBed({ rulesDir, instances: [{ name: 'web-1' }] });
    events = new Queue('events', { connection: (connection = redisClient()), prefix: keySpace(bed.prefix).bullPrefix });
    await until('ready', async () => (await readyz(bed.url)).status === 200, 10_000);
  });

  afterAll(async () => {
    await events?.close();
    connection?.disconnect();
    await bed?.stop();
  });

  it('checks each queue it feeds or consumes, with the workers consuming it', async () => {
    const { body } = await readyz(bed.url);
    expect(body.checks['queue:events']).toEqual({ ok: true, detail: expect.stringMatching(/^not paused, [1-9]\d* worker\(s\) consuming$/) });
    expect(body.checks['queue:actions']).toMatchObject({ ok: true });
    const samples = await scrape(bed.url);
    expect(valueOf(samples, 'reflex_ready', { check: 'queue:events' })).toBe(1);
    expect(valueOf(samples, 'reflex_queue_paused', { queue: 'events' })).toBe(0);
    expect(valueOf(samples, 'reflex_queue_workers', { queue: 'events' })).toBeGreaterThanOrEqual(1);
  });

  it('turns 503 within 10 s when the events queue is paused, naming it, and ready again once resumed', async () => {
    await events.pause();
    try {
      const started = Date.now();
      await until('/readyz 503', async () => (await readyz(bed.url)).status === 503, 10_000);
      expect(Date.now() - started).toBeLessThan(10_000);
      const { body } = await readyz(bed.url);
      expect(body.status).toBe('not ready');
      expect(body.checks['queue:events']).toEqual({ ok: false, detail: expect.stringMatching(/^paused: none of its jobs runs until it is resumed/) });
      expect(body.checks['queue:actions']!.ok).toBe(true);
      const samples = await scrape(bed.url);
      expect(valueOf(samples, 'reflex_ready', { check: 'queue:events' })).toBe(0);
      expect(valueOf(samples, 'reflex_queue_paused', { queue: 'events' })).toBe(1);
    } finally {
      await events.resume();
    }
    await until('/readyz 200 after resume', async () => (await readyz(bed.url)).status === 200, 10_000);
    expect(valueOf(await scrape(bed.url), 'reflex_queue_paused', { queue: 'events' })).toBe(0);
  });

  it('is not ready on a subscriber whose events queue no worker consumes, and ready once a worker replica starts', async () => {
    const sub = await startObservabilityBed({ rulesDir, instances: [{ name: 'web-1' }], config: { role: 'subscriber' } });
    try {
      await until('queue:events without a worker', async () => (await readyz(sub.url)).body.checks['queue:events']?.ok === false, 10_000);
      const { status, body } = await readyz(sub.url);
      expect(status).toBe(503);
      expect(body.checks['queue:events']!.detail).toMatch(/^no worker consumes it/);
      expect(body.checks['queue:actions']).toBeUndefined();
      const samples = await scrape(sub.url);
      expect(valueOf(samples, 'reflex_queue_workers', { queue: 'events' })).toBe(0);
      expect(valueOf(samples, 'reflex_ready', { check: 'queue:events' })).toBe(0);

      await sub.replica({ role: 'worker' });
      await until('/readyz 200 with a worker', async () => (await readyz(sub.url)).status === 200, 10_000);
    } finally {
      await sub.stop();
    }
  });
});

describe('readiness when the event stream is lost', () => {
  it('stays ready within the grace, then is not ready naming how long the stream is lost; ready again when it is back', async () => {
    const bed = await startObservabilityBed({ rulesDir, instances: [{ name: 'web-1' }], config: { streamLossGraceMs: 3_000 } });
    let sim = bed.sim;
    try {
      await until('ready', async () => (await readyz(bed.url)).status === 200, 10_000);
      const socket = sim.socketPath!;
      await sim.stop();
      // Verdicts are cached for a second: wait for the first one taken after the loss.
      let within: Awaited<ReturnType<typeof readyz>> | undefined;
      await until(
        'the loss seen by /readyz',
        async () => (within = await readyz(bed.url)).body.checks.subscriber!.detail !== 'lease holder, event stream connected',
        10_000,
      );
      expect(within!.status).toBe(200);
      expect(within!.body.checks.subscriber!.detail).toMatch(/^lease holder, event stream lost \d+ s ago, reconnecting \(not ready after 3 s\)$/);

      await until('/readyz 503 after the grace', async () => (await readyz(bed.url)).status === 503, 10_000);
      const after = await readyz(bed.url);
      expect(after.body.checks.subscriber).toEqual({
        ok: false,
        detail: expect.stringMatching(/^lease holder, event stream lost for \d+ s \(longer than the grace of 3 s\): the target is unreachable/),
      });
      expect(valueOf(await scrape(bed.url), 'reflex_ready', { check: 'subscriber' })).toBe(0);

      sim = await startSimulator({ instances: 0, listen: [`unix:${socket}`] });
      await until('/readyz 200 with the stream back', async () => (await readyz(bed.url)).status === 200, 20_000);
    } finally {
      await bed.reflex.stop();
      await sim.stop();
    }
  }, 40_000);
});

describe('readiness when Redis is unreachable', () => {
  let redis: OwnRedis;
  afterEach(() => redis?.remove());

  it('is not ready with the reason, and /metrics still answers with reflex_ready{check="redis"} 0', async () => {
    redis = await ownRedis();
    const bed = await startObservabilityBed({ rulesDir, instances: [{ name: 'web-1' }], config: { redisUrl: redis.url } });
    let down = false;
    try {
      await until('ready', async () => (await readyz(bed.url)).status === 200, 10_000);
      down = true;
      await redis.stop();
      await until('/readyz 503', async () => (await readyz(bed.url)).status === 503, 10_000);
      const { body } = await readyz(bed.url);
      expect(body.checks.redis).toEqual({ ok: false, detail: expect.stringMatching(/^Redis unreachable: /) });
      const samples = await scrape(bed.url);
      expect(valueOf(samples, 'reflex_ready', { check: 'redis' })).toBe(0);
      await redis.start();
      down = false;
      await until('/readyz 200 with Redis back', async () => (await readyz(bed.url)).status === 200, 20_000);
    } finally {
      if (down) await redis.start();
      await bed.stop();
      await redis.stop();
    }
  }, 60_000);
});

describe('the readiness verdicts are cached (/readyz is polled)', () => {
  it('reuses a verdict for cacheMs, then reads Redis again', async () => {
    const connection = redisClient();
    // A hash tag keeps the queue's keys in one slot on a Redis Cluster, as the product's prefixes do.
    const queue = new Queue('q', { connection, prefix: `{${uniquePrefix('ready-cache')}}` });
    let now = 1_000_000;
    try {
      const ready = readiness({ redis: connection, queues: [queue], cacheMs: 1_000, now: () => now });
      expect((await ready.checks['queue:q']!()).ok).toBe(false); // no worker
      expect((await ready.checks['queue:q']!()).detail).toMatch(/^no worker consumes it/);
      await queue.pause();
      expect((await ready.checks['queue:q']!()).detail).toMatch(/^no worker consumes it/);
      now += 1_000;
      expect((await ready.checks['queue:q']!()).detail).toMatch(/^paused: /);
      expect((await ready.reading()).queues).toEqual([{ queue: 'q', paused: true, workers: 0 }]);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
      connection.disconnect();
    }
  });
});
