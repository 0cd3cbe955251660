import { Queue } from 'bullmq';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { defineProbe } from '../../src/probes/probe.js';
import { ProbeRunner } from '../../src/probes/probe-runner.js';
import { redisFromUrl } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { Silences } from '../../src/silences/silences.js';
import { startSimulator } from '../../src/simulator/simulator.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { cleanupsAfterEach } from '../support/stopped-after-each.js';
import { VirtualClock } from '../support/virtual-clock.js';
import { until } from '../support/wait.js';

const HOUR = 3_600_000;

/**
 * A probe's startup grace (`initialDelayMs` after the instance started) is read on the runner's
 * clock: an hour's grace is crossed on virtual time while the passes run on real timers.
 */
describe('a probe waits out its startup grace on the injected clock', () => {
  const cleanups = cleanupsAfterEach();

  it('checks nothing through passes within an hour of the start, and checks the instance once the clock is past the hour', async () => {
    const sim = await startSimulator({ instances: 0 });
    cleanups.push(() => sim.stop());
    sim.controls.addInstance({ name: 'web-1', status: 'Running' });
    const target = `unix://${sim.socketPath}`;
    const client = new InstanceClient(parseTarget(target));
    cleanups.push(() => client.close());
    const redis = redisFromUrl(redisUrl());
    cleanups.push(async () => redis.disconnect());
    const keys = keySpace(uniquePrefix('grace'));
    const queue = new Queue(keys.eventsQueue, { connection: redisFromUrl(redisUrl()), prefix: keys.bullPrefix });
    cleanups.push(() => queue.close());
    const clock = new VirtualClock();
    const probe = defineProbe({ name: 'p', kind: 'exec', command: ['true'], periodMs: 100, timeoutMs: 5_000, initialDelayMs: HOUR });
    const runner = new ProbeRunner({
      targets: [{ id: target, client }],
      redis,
      keys,
      eventsQueue: queue,
      silences: new Silences(redis, keys.silences),
      logger: pino({ level: 'silent' }),
      probes: () => [probe],
      listEveryMs: 250,
      clock,
    });
    await runner.start();
    cleanups.push(() => runner.stop());

    // A quiet period counted in passes: twenty, in which a probe without the grace is checked (twice in ten, measured).
    await until('twenty passes', () => runner.counts.passes >= 20, 30_000);
    expect(runner.counts.checks).toBe(0);
    clock.advance(HOUR);
    await until('web-1 checked', () => runner.counts.checks > 0, 30_000);
  }, 90_000);
});
