import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { defineProbe } from '../../src/probes/probe.js';
import { ProbeRunner } from '../../src/probes/probe-runner.js';
import { redisFromUrl } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { Silences } from '../../src/silences/silences.js';
import { startSimulator } from '../../src/simulator/simulator.js';
import { pino } from 'pino';
import { redisUrl } from '../support/redis.js';
import { cleanupsAfterEach } from '../support/stopped-after-each.js';
import { until } from '../support/wait.js';

describe('probe state of instances that are gone', () => {
  const cleanups = cleanupsAfterEach();
  const cleanup = (c: () => Promise<unknown>) => cleanups.push(c);

  it('is forgotten once its last check is older than forgetAfterMs, while the state of listed instances stays', async () => {
    const sim = await startSimulator({ instances: 0 });
    cleanup(() => sim.stop());
    for (const name of ['kept', 'gone']) sim.controls.addInstance({ name, status: 'Running' });
    const target = `unix://${sim.socketPath}`;
    const client = new InstanceClient(parseTarget(target));
    cleanup(() => client.close());
    const redis = redisFromUrl(redisUrl());
    cleanup(async () => redis.disconnect());
    const keys = keySpace(`prune-${Date.now()}`);
    const queue = new Queue(keys.eventsQueue, { connection: redisFromUrl(redisUrl()), prefix: keys.bullPrefix });
    cleanup(() => queue.close());
    const runner = new ProbeRunner({
      targets: [{ id: target, client }],
      redis,
      keys,
      eventsQueue: queue,
      silences: new Silences(redis, keys.silences),
      logger: pino({ level: 'silent' }),
      probes: () => [defineProbe({ name: 'p', kind: 'exec', command: ['true'], periodMs: 100, timeoutMs: 5_000 })],
      forgetAfterMs: 600,
    });
    await runner.start();
    cleanup(() => runner.stop());
    const stateOf = async () =>
      Object.values(await redis.hgetall(keys.probes.state)).map((raw) => (JSON.parse(raw) as { instance: string }).instance);
    await until('both instances probed', async () => ((await stateOf()).length === 2 ? true : undefined), 30_000);
    await (await client.changeState('gone', { action: 'stop', force: true })).wait({ timeoutMs: 20_000 });
    await (await client.deleteInstance('gone')).wait({ timeoutMs: 20_000 });
    await until('the deleted instance’s state forgotten', async () => ((await stateOf()).length === 1 ? true : undefined), 30_000);
    expect(await stateOf()).toEqual(['kept']);
  }, 90_000);
});
