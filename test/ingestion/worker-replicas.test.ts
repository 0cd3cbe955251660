import { afterAll, expect, it } from 'vitest';
import type { Metrics } from '../../src/metrics/metrics.js';
import { redisUrl } from '../support/redis.js';
import { settled } from '../support/settled.js';
import { startStack } from '../support/stack.js';
import { until } from '../support/wait.js';
import { optIn, publishedStatus, transition } from './support/ingestion-bed.js';

/**
 * Workers scale by adding replicas: one subscriber and three `role: worker` replicas, nothing
 * naming the others. A burst of crashes is spread over the three (each processes events and runs
 * actions), every crash is healed once, and each instance's events are published in order.
 */
const count = 90;
const stack = await startStack({
  redisUrl: redisUrl(),
  label: 'workers',
  simulator: { timings: { stopHookMs: 50, startMs: 30, stopMs: 30 } },
  reflexTimings: 'product',
  config: { resyncGraceMs: 300, leaseTtlMs: 1_000, stormThreshold: 0 },
  reflex: false,
});
const { sim, redis } = stack;

afterAll(() => stack.stop());

const name = (i: number) => `w${String(i).padStart(3, '0')}`;

async function total(counter: Metrics['events'] | Metrics['actions']): Promise<number> {
  return (await counter.get()).values.reduce((sum, v) => sum + v.value, 0);
}

it("three worker replicas share the events and the actions, heal each crash once, and keep each instance's events in order", async () => {
  for (let i = 0; i < count; i++) sim.controls.addInstance({ name: name(i), config: optIn });
  const subscriber = await stack.replica({ role: 'subscriber' });
  const workers = await Promise.all([0, 1, 2].map(() => stack.replica({ role: 'worker' })));
  await until('the event stream', () => subscriber.subscriber?.connected === true, 10_000);
  await until('the baseline of every instance', async () => (await redis.hlen(stack.keys.state(subscriber.target))) >= count, 15_000);
  const before = await Promise.all(workers.map((w) => total(w.metrics.events)));

  // Crashes spread over time, so the three workers share them: each follows the processing of the one before.
  const processed = async () => (await Promise.all(workers.map((w) => total(w.metrics.events)))).reduce((a, b) => a + b, 0);
  for (let i = 0; i < count; i++) {
    const seen = await processed();
    sim.controls.crash(name(i));
    await until(`an event of ${name(i)}'s crash processed`, async () => (await processed()) > seen);
  }
  await until(
    'every instance restarted',
    () => Array.from({ length: count }, (_, i) => name(i)).every((n) => sim.controls.statusCode(n) === 103 && sim.controls.calls(n, 'start') > 0),
    30_000,
  );
  await settled(redisUrl(), stack.prefix); // a duplicate would be in a queue

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

  const published = await publishedStatus(stack);
  for (let i = 0; i < count; i++) {
    expect(sim.controls.calls(name(i), 'start'), `${name(i)} started once`).toBe(1);
    const trail = published.filter((e) => e.instance === name(i)).map(transition);
    expect(trail, `${name(i)}'s events in order`).toEqual(['103→102 unrequested', '102→103 self']);
  }
}, 90_000);
