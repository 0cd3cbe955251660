import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type Config } from '../../src/config/config.js';
import { checkQueues, checkReadiness } from '../../src/doctor/health-checks.js';
import { keySpace } from '../../src/redis/key-space.js';
import { until } from '../support/wait.js';
import { startObservabilityBed, type ObservabilityBed } from '../metrics/observability-bed.js';
import { freePort } from '../support/free-port.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';

/**
 * `reflex doctor` shows what /readyz shows: a paused queue fails, a queue no worker consumes warns,
 * and the running Reflex's own failing checks (a lost stream, stopped workers) come from its /readyz.
 */
describe('reflex doctor on the health of a deployment (real Redis, in-process Reflex)', () => {
  let bed: ObservabilityBed;
  let config: Config;
  const connection = redisClient();
  let events: Queue;

  beforeAll(async () => {
    bed = await startObservabilityBed({ rulesDir: 'test/fixtures/rules-crash-loop', instances: [{ name: 'web-1' }] });
    config = parseConfig({ redisUrl: redisUrl(), prefix: bed.prefix, httpPort: Number(new URL(bed.url).port), target: 'unix:///nonexistent.sock' });
    events = new Queue('events', { connection, prefix: keySpace(bed.prefix).bullPrefix });
  });

  afterAll(async () => {
    await events?.close();
    connection.disconnect();
    await bed?.stop();
  });

  it('passes each queue with the workers consuming it, and the running Reflex as ready', async () => {
    await until('ready', async () => (await checkReadiness(config)).every((c) => c.ok && !c.warning), 10_000);
    const queues = await checkQueues(config);
    expect(queues.find((c) => c.name === 'queue:events')).toEqual({
      name: 'queue:events',
      ok: true,
      detail: expect.stringMatching(/^not paused, [1-9]\d* worker\(s\) consuming$/),
    });
    expect(queues.map((c) => c.name)).toEqual(['queue:events', 'queue:actions', 'queue:schedules', 'queue:flush', 'queue:deliveries']);
    expect((await checkReadiness(config))[0]).toMatchObject({
      name: 'readyz',
      ok: true,
      detail: expect.stringContaining(': ready (redis, redis-writes, subscriber, workers, queue:events'),
    });
  });

  it('fails a paused events queue with how to resume it, and names the failing check of the running Reflex', async () => {
    await events.pause();
    try {
      const queues = await checkQueues(config);
      expect(queues.find((c) => c.name === 'queue:events')).toMatchObject({
        ok: false,
        detail: expect.stringMatching(/^paused: none of its jobs runs/),
        fix: expect.stringContaining('resume it in the queues page'),
      });
      await until('the running Reflex not ready', async () => (await checkReadiness(config)).some((c) => c.name === 'readyz:queue:events'), 10_000);
      const lines = await checkReadiness(config);
      expect(lines).toEqual([
        { name: 'readyz:queue:events', ok: false, detail: expect.stringMatching(/^paused: /), fix: expect.stringContaining('/readyz is not ready') },
      ]);
    } finally {
      await events.resume();
    }
  });

  it('warns when no worker consumes a queue, and when no Reflex answers on the configured port', async () => {
    const empty = parseConfig({
      redisUrl: redisUrl(),
      prefix: uniquePrefix('doctor-empty'),
      httpPort: await freePort(),
      target: 'unix:///nonexistent.sock',
    });
    const queues = await checkQueues(empty);
    expect(queues.find((c) => c.name === 'queue:events')).toMatchObject({
      ok: true,
      warning: true,
      detail: 'not paused, but no worker consumes it: its jobs wait',
      fix: 'start reflex run with the worker role (or all)',
    });
    expect(queues.find((c) => c.name === 'queue:flush')).toEqual({ name: 'queue:flush', ok: true, detail: 'not paused' });
    const [readyz] = await checkReadiness(empty);
    expect(readyz).toMatchObject({
      name: 'readyz',
      ok: true,
      warning: true,
      detail: expect.stringMatching(/^no Reflex answers at http:\/\/127\.0\.0\.1:\d+\/readyz/),
    });
  });
});
