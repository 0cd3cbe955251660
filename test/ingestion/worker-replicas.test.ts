import { pino } from 'pino';
import { afterAll, expect, it } from 'vitest';
import { startReflex, type ReflexHandle } from '../../src/app/start-reflex.js';
import { parseConfig, type ConfigInput } from '../../src/config/config.js';
import { EventArchive } from '../../src/events/event-archive.js';
import type { Metrics } from '../../src/metrics/metrics.js';
import { redisFromUrl } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { startSimulator } from '../../src/simulator/simulator.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { optIn } from './support/ingestion-bed.js';
import { sleep, until } from '../support/wait.js';

/**
 * Workers scale by adding replicas: one subscriber and three `role: worker` replicas, nothing
 * naming the others. A burst of crashes is spread over the three (each processes events and runs
 * actions), every crash is healed once, and each instance's events are published in order.
 */
const logger = pino({ level: process.env.REFLEX_TEST_LOG ?? 'silent' });
const count = 90;
const sim = await startSimulator({ instances: 0, timings: { stopHookMs: 50, startMs: 30, stopMs: 30 } });
const prefix = uniquePrefix('workers');
const redis = redisFromUrl(redisUrl());
const archive = new EventArchive({ redis, key: keySpace(prefix).archive });
const base: ConfigInput = {
  target: `unix://${sim.socketPath}`,
  redisUrl: redisUrl(),
  rulesDir: 'rules',
  prefix,
  resyncIntervalMs: 0,
  resyncGraceMs: 300,
  leaseTtlMs: 1_000,
  httpPort: 0,
  logLevel: 'silent',
  stormThreshold: 0,
};
const replicas: ReflexHandle[] = [];

afterAll(async () => {
  for (const r of replicas) await r.stop();
  await sim.stop();
  redis.disconnect();
});

const name = (i: number) => `w${String(i).padStart(3, '0')}`;

async function total(counter: Metrics['events'] | Metrics['actions']): Promise<number> {
  return (await counter.get()).values.reduce((sum, v) => sum + v.value, 0);
}

it("three worker replicas share the events and the actions, heal each crash once, and keep each instance's events in order", async () => {
  for (let i = 0; i < count; i++) sim.controls.addInstance({ name: name(i), config: optIn });
  const subscriber = await startReflex(parseConfig({ ...base, role: 'subscriber' }), logger);
  replicas.push(subscriber);
  const workers = await Promise.all([0, 1, 2].map(() => startReflex(parseConfig({ ...base, role: 'worker' }), logger)));
  replicas.push(...workers);
  await until('the event stream', () => subscriber.subscriber?.connected === true, 10_000);
  await until('the baseline of every instance', async () => (await redis.hlen(keySpace(prefix).state(subscriber.target))) >= count, 15_000);
  const before = await Promise.all(workers.map((w) => total(w.metrics.events)));

  for (let i = 0; i < count; i++) {
    sim.controls.crash(name(i));
    await sleep(10); // crashes spread over time, so the three workers share them
  }
  await until(
    'every instance restarted',
    () => Array.from({ length: count }, (_, i) => name(i)).every((n) => sim.controls.statusCode(n) === 103 && sim.controls.calls(n, 'start') > 0),
    30_000,
  );
  await sleep(1_000); // a quiet period: room for a duplicate to show up

  const events = (await Promise.all(workers.map((w) => total(w.metrics.events)))).map((n, i) => n - before[i]!);
  const actions = await Promise.all(workers.map((w) => total(w.metrics.actions)));
  expect(
    events.every((n) => n > 0),
    `events processed by each worker replica: ${events.join(', ')}`,
  ).toBe(true);
  expect(
    actions.every((n) => n > 0),
    `actions run by each worker replica: ${actions.join(', ')}`,
  ).toBe(true);

  const archived = await archive.read({ kind: 'instance.status' });
  for (let i = 0; i < count; i++) {
    expect(sim.controls.calls(name(i), 'start'), `${name(i)} started once`).toBe(1);
    const trail = archived
      .filter((a) => (a.outcome === 'processed' || a.outcome === 'corrected') && 'instance' in a.event && a.event.instance === name(i))
      .map(({ event: e }) => (e.kind === 'instance.status' ? `${e.from ?? '?'}→${e.to} ${e.intent}` : ''));
    expect(trail, `${name(i)}'s events in order`).toEqual(['103→102 unrequested', '102→103 self']);
  }
}, 90_000);
