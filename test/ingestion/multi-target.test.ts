import { afterEach, describe, expect, it } from 'vitest';
import type { ReflexHandle } from '../../src/app/start-reflex.js';
import { EventArchive } from '../../src/events/event-archive.js';
import type { RunningSimulator } from '../../src/simulator/simulator.js';
import { scrape, valueOf } from '../metrics/observability-bed.js';
import { freePort } from '../support/free-port.js';
import { redisUrl } from '../support/redis.js';
import { settled } from '../support/settled.js';
import { startStack, type StackParts } from '../support/stack.js';
import { until } from '../support/wait.js';
import { ingestionTimings, optIn, publishedStatus, resyncCount, transition } from './support/ingestion-bed.js';

/**
 * One deployment, two servers (two simulators, each with an opted-in instance of the same name):
 * each server has its own subscriber, lease, state and resync, and a crash is remediated on the
 * server where it happened. Replicas share the targets' leases, so each event is read, archived
 * and acted on once, however the leases fall between them.
 */
/** How many times each simulator was asked to start web. */
const startsPerServer = (sims: RunningSimulator[]) => sims.map((s) => s.controls.calls('web', 'start'));

describe('a deployment with several targets', () => {
  let stack: StackParts | undefined;

  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  async function twoServers() {
    const s = (stack = await startStack({
      redisUrl: redisUrl(),
      label: 'multi',
      targets: ['east', 'west'],
      simulator: { timings: ingestionTimings },
      instances: [{ name: 'web', config: optIn }],
      reflexTimings: 'product',
      config: { resyncGraceMs: 300, leaseTtlMs: 1_000 },
      reflex: false,
    }));
    const [east, west] = s.targets as [string, string];
    /** Published instance.status events of `web` on one target, as "from→to intent". */
    const trail = async (target: string) => (await publishedStatus(s, { instance: 'web', target })).map(transition);
    const crashAndHeal = async (i: 0 | 1) => {
      const sim = s.sims[i]!;
      const startsBefore = sim.controls.calls('web', 'start');
      sim.controls.crash('web');
      await until(
        `web restarted on ${s.targets[i]}`,
        () => sim.controls.calls('web', 'start') > startsBefore && sim.controls.statusCode('web') === 103,
        15_000,
      );
      await settled(redisUrl(), s.prefix); // a duplicate or a stray action would be in a queue
    };
    const connected = (r: ReflexHandle) =>
      until('lease holders connected', () => r.readers.every((x) => !x.lease.isHeld || x.subscriber.connected), 10_000);
    return { stack: s, sims: s.sims, redis: s.redis, east, west, start: s.replica, trail, crashAndHeal, connected };
  }

  it('one deployment watches two servers: a crash on each is remediated on its own server', async () => {
    const bed = await twoServers();
    const reflex = await bed.start({ httpPort: await freePort() });
    expect(reflex.targets).toEqual([bed.east, bed.west]);
    await until('both event streams connected', () => reflex.readers.every((r) => r.subscriber.connected), 10_000);
    await reflex.resync(); // baseline: web Running on both
    expect(bed.sims.map((s) => s.controls.eventListeners)).toEqual([1, 1]);

    await bed.crashAndHeal(0);
    expect(startsPerServer(bed.sims), 'started on east only').toEqual([1, 0]);
    expect(await bed.trail(bed.east)).toEqual(['103→102 unrequested', '102→103 self']);
    expect(await bed.trail(bed.west)).toEqual([]);

    await bed.crashAndHeal(1);
    expect(startsPerServer(bed.sims), 'then on west only').toEqual([1, 1]);
    expect(await bed.trail(bed.west)).toEqual(['103→102 unrequested', '102→103 self']);
    expect(await bed.trail(bed.east)).toHaveLength(2);

    for (const url of [bed.east, bed.west]) {
      expect(await bed.redis.hlen(bed.stack.keys.state(url)), `state of ${url}`).toBe(1);
      expect(await bed.redis.get(bed.stack.keys.lease(url)), `lease of ${url}`).not.toBeNull();
    }
    const ready = (await (await fetch(`${reflex.http!.url}/readyz`)).json()) as {
      ready: boolean;
      checks: Record<string, { ok: boolean; detail: string }>;
    };
    expect(ready.checks).toMatchObject({
      'subscriber:east': { ok: true, detail: 'lease holder, event stream connected' },
      'subscriber:west': { ok: true, detail: 'lease holder, event stream connected' },
    });
    const samples = await scrape(reflex.http!.url);
    for (const url of [bed.east, bed.west]) {
      expect(valueOf(samples, 'reflex_lease_holder', { target: url })).toBe(1);
      expect(valueOf(samples, 'reflex_stream_connected', { target: url })).toBe(1);
    }
  }, 60_000);

  it('each target has its own lease: two replicas split the two leases, one each, and nothing twice', async () => {
    const bed = await twoServers();
    const first = await bed.start();
    await until('the first replica reads both', () => first.readers.every((r) => r.lease.isHeld && r.subscriber.connected), 10_000);
    const second = await bed.start();
    await bed.connected(second);
    await first.resync();

    // The leases spread: the first hands one over (cleanly) and the second takes it at once.
    const held = (r: ReflexHandle) => r.readers.filter((x) => x.lease.isHeld).length;
    await until('one lease each', () => held(first) === 1 && held(second) === 1, 5_000);
    await bed.connected(second);
    await until('its takeover resync', async () => (await resyncCount(second)) > 0);
    await settled(redisUrl(), bed.stack.prefix); // it found nothing changed
    expect(
      second.readers.map((r) => r.lease.isHeld),
      'each lease held once',
    ).toEqual(first.readers.map((r) => !r.lease.isHeld));
    expect(
      bed.sims.map((s) => s.controls.eventListeners),
      'each replica keeps a stream open to each server (followers keep a window)',
    ).toEqual([2, 2]);

    await bed.crashAndHeal(0);
    await bed.crashAndHeal(1);
    expect(startsPerServer(bed.sims), 'one start on each server').toEqual([1, 1]);
    for (const url of [bed.east, bed.west]) expect(await bed.trail(url), `archived once on ${url}`).toEqual(['103→102 unrequested', '102→103 self']);
    const archived = await new EventArchive({ redis: bed.redis, key: bed.stack.keys.archive }).read();
    const ids = archived.map((a) => a.event.id);
    expect(new Set(ids).size, 'no event archived twice').toBe(ids.length);
  }, 60_000);
});
