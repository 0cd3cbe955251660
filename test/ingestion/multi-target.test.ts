import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig, type ConfigInput } from '../../src/config/config.js';
import { EventArchive } from '../../src/events/event-archive.js';
import { keySpace } from '../../src/redis/key-space.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { startReflex, type ReflexHandle } from '../../src/app/start-reflex.js';
import { freePort, scrape, valueOf } from '../metrics/observability-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { optIn } from './support/ingestion-bed.js';
import { sleep, until } from '../support/wait.js';
import { redisFromUrl, type RedisConnection } from '../../src/redis/connect.js';

/**
 * One deployment, two servers (two simulators, each with an opted-in instance of the same name):
 * each server has its own subscriber, lease, state and resync, and a crash is remediated on the
 * server where it happened. Replicas share the targets' leases, so each event is read, archived
 * and acted on once, however the leases fall between them.
 */
describe('a deployment with several targets', () => {
  const logger = pino({ level: process.env.REFLEX_TEST_LOG ?? 'silent' });
  let sims: RunningSimulator[] = [];
  let replicas: ReflexHandle[] = [];
  let redis: RedisConnection | undefined;

  afterEach(async () => {
    for (const r of replicas) await r.stop();
    for (const s of sims) await s.stop();
    redis?.disconnect();
    sims = [];
    replicas = [];
  });

  async function twoServers() {
    sims = await Promise.all([0, 1].map(() => startSimulator({ instances: 0, timings: { stopHookMs: 100, startMs: 30, stopMs: 60 } })));
    for (const sim of sims) sim.controls.addInstance({ name: 'web', config: optIn });
    const [east, west] = sims.map((s) => `unix://${s.socketPath}`) as [string, string];
    const prefix = uniquePrefix('multi');
    redis = redisFromUrl(redisUrl());
    const archive = new EventArchive({ redis, key: keySpace(prefix).archive });
    const base: ConfigInput = {
      targets: [
        { name: 'east', target: east },
        { name: 'west', target: west },
      ],
      redisUrl: redisUrl(),
      rulesDir: 'rules',
      prefix,
      resyncIntervalMs: 0,
      resyncGraceMs: 300,
      leaseTtlMs: 1_000,
      httpPort: 0,
      logLevel: 'silent',
    };
    const start = async (extra: Partial<ConfigInput> = {}) => {
      const r = await startReflex(parseConfig({ ...base, ...extra }), logger);
      replicas.push(r);
      return r;
    };
    /** Published instance.status events of `web` on one target, as "from→to intent". */
    const trail = async (target: string) =>
      (await archive.read({ kind: 'instance.status' }))
        .filter(
          (a) =>
            (a.outcome === 'processed' || a.outcome === 'corrected') &&
            a.event.target === target &&
            'instance' in a.event &&
            a.event.instance === 'web',
        )
        .map(({ event: e }) => (e.kind === 'instance.status' ? `${e.from ?? '?'}→${e.to} ${e.intent}${e.synthetic ? ' synthetic' : ''}` : ''));
    const crashAndHeal = async (i: 0 | 1, url: string) => {
      const sim = sims[i]!;
      const startsBefore = sim.controls.calls('web', 'start');
      sim.controls.crash('web');
      await until(
        `web restarted on ${url}`,
        () => sim.controls.calls('web', 'start') > startsBefore && sim.controls.statusCode('web') === 103,
        15_000,
      );
      await sleep(1_000); // a quiet period: room for a duplicate or a stray action to show up
    };
    const connected = (r: ReflexHandle) =>
      until('lease holders connected', () => r.readers.every((x) => !x.lease.isHeld || x.subscriber.connected), 10_000);
    return { east, west, prefix, start, trail, crashAndHeal, connected };
  }

  it('one deployment watches two servers: a crash on each is remediated on its own server', async () => {
    const bed = await twoServers();
    const reflex = await bed.start({ httpPort: await freePort() });
    expect(reflex.targets).toEqual([bed.east, bed.west]);
    await until('both event streams connected', () => reflex.readers.every((r) => r.subscriber.connected), 10_000);
    await reflex.resync(); // baseline: web Running on both
    expect(sims.map((s) => s.controls.eventListeners)).toEqual([1, 1]);

    await bed.crashAndHeal(0, bed.east);
    expect(
      sims.map((s) => s.controls.calls('web', 'start')),
      'started on east only',
    ).toEqual([1, 0]);
    expect(await bed.trail(bed.east)).toEqual(['103→102 unrequested', '102→103 self']);
    expect(await bed.trail(bed.west)).toEqual([]);

    await bed.crashAndHeal(1, bed.west);
    expect(
      sims.map((s) => s.controls.calls('web', 'start')),
      'then on west only',
    ).toEqual([1, 1]);
    expect(await bed.trail(bed.west)).toEqual(['103→102 unrequested', '102→103 self']);
    expect(await bed.trail(bed.east)).toHaveLength(2);

    const keys = keySpace(bed.prefix);
    for (const url of [bed.east, bed.west]) {
      expect(await redis!.hlen(keys.state(url)), `state of ${url}`).toBe(1);
      expect(await redis!.get(keys.lease(url)), `lease of ${url}`).not.toBeNull();
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
    await sleep(500); // its takeover resync: nothing changed
    expect(
      second.readers.map((r) => r.lease.isHeld),
      'each lease held once',
    ).toEqual(first.readers.map((r) => !r.lease.isHeld));
    expect(
      sims.map((s) => s.controls.eventListeners),
      'each replica keeps a stream open to each server (followers keep a window)',
    ).toEqual([2, 2]);

    await bed.crashAndHeal(0, bed.east);
    await bed.crashAndHeal(1, bed.west);
    expect(
      sims.map((s) => s.controls.calls('web', 'start')),
      'one start on each server',
    ).toEqual([1, 1]);
    for (const url of [bed.east, bed.west]) expect(await bed.trail(url), `archived once on ${url}`).toEqual(['103→102 unrequested', '102→103 self']);
    const archived = await new EventArchive({ redis: redis!, key: keySpace(bed.prefix).archive }).read();
    const ids = archived.map((a) => a.event.id);
    expect(new Set(ids).size, 'no event archived twice').toBe(ids.length);
  }, 60_000);
});
