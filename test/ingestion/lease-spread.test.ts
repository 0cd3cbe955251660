import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { keySpace } from '../../src/redis/key-space.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';
import { optIn, publishedStatus, transition } from './support/ingestion-bed.js';
import { settled } from '../support/settled.js';
import { until } from '../support/wait.js';
import { redisFromUrl } from '../../src/redis/connect.js';

/**
 * Six servers, three `reflex run` processes: the subscriber leases spread two per replica, with no
 * setting naming the replicas. A replica that starts alone holds all six and hands the surplus over
 * as the others join; a SIGKILLed replica's two leases go one to each survivor (three each). Crashes
 * made while leases move (a clean hand-over, a takeover) are each archived with their real intent
 * and healed once: no frame is lost between holders.
 */
const leaseTtlMs = 1_000;
const names = ['t1', 't2', 't3', 't4', 't5', 't6'];
const instances = ['a', 'b', 'c', 'd', 'e'];
const sims: RunningSimulator[] = await Promise.all(names.map(() => startSimulator({ instances: 0, timings: { stopHookMs: 100, startMs: 30 } })));
const targets = sims.map((s) => `unix://${s.socketPath}`);
const prefix = uniquePrefix('spread');
const keys = keySpace(prefix);
const redis = redisFromUrl(redisUrl());
const dir = mkdtempSync(join(tmpdir(), 'reflex-spread-'));
const configFile = join(dir, 'reflex.json');
writeFileSync(
  configFile,
  JSON.stringify({ leaseTtlMs, resyncGraceMs: 300, resyncIntervalMs: 0, targets: names.map((name, i) => ({ name, target: targets[i] })) }),
);
const replicas: ReflexProcess[] = [];

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await Promise.all(sims.map((s) => s.stop()));
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

function start(): ReflexProcess {
  const r = startReflexProcess(['run', '--redis', redisUrl(), '--prefix', prefix, '--rules', 'rules', '--config', configFile, '--http-port', '0'], {
    REFLEX_LOG_LEVEL: 'info',
  });
  replicas.push(r);
  return r;
}

/** How many leases each live replica holds, by pid (a replica holding none shows 0). */
async function leasesByPid(live: ReflexProcess[]): Promise<number[]> {
  const values = await Promise.all(targets.map((t) => redis.get(keys.lease(t))));
  return live.map((r) => values.filter((v) => v !== null && Number(v.split(':')[0]) === r.child.pid).length);
}

/** Published instance.status events of one instance of one target, as "from→to intent[ synthetic]". */
async function trail(target: string, name: string): Promise<string[]> {
  return (await publishedStatus({ redis, keys }, { target, instance: name })).map(transition);
}

/** Crashes `name` on every server: at once, or `spread` over time, each after the shutdown event of the one before. */
async function crashEverywhere(name: string, spread: boolean): Promise<void> {
  for (const sim of sims) {
    const published = sim.controls.eventsPublished;
    sim.controls.crash(name);
    if (spread) await until(`${name}'s shutdown event`, () => sim.controls.eventsPublished > published, 5_000);
  }
}

/** Each server's `name` was restarted once, and its crash archived once with its real intent. */
async function expectHealedOnce(name: string): Promise<void> {
  await until(
    `${name} restarted everywhere`,
    () => sims.every((s) => s.controls.statusCode(name) === 103 && s.controls.calls(name, 'start') > 0),
    20_000,
  );
  await settled(redisUrl(), prefix); // a duplicate would be in a queue
  for (const [i, sim] of sims.entries()) {
    expect(await trail(targets[i]!, name), `${name} on ${names[i]}`).toEqual(['103→102 unrequested', '102→103 self']);
    expect(sim.controls.calls(name, 'start'), `${name} on ${names[i]} started once`).toBe(1);
  }
}

it("spreads six targets' leases two per replica over three replicas, three per replica over two after a SIGKILL, and loses no event as they move", async () => {
  for (const sim of sims) for (const name of instances) sim.controls.addInstance({ name, config: optIn });
  const first = start();
  await first.waitForLog('reflex running');
  await until('one replica alone holding every lease', async () => (await leasesByPid([first]))[0] === 6, 10_000);
  await until('the start-up resyncs set the baselines', async () => {
    const tracked = await Promise.all(targets.map((t) => redis.hlen(keys.state(t))));
    return tracked.every((n) => n === instances.length);
  });

  const joining = [start(), start()];
  await Promise.all(joining.map((r) => r.waitForLog('reflex running')));
  // Crashes while the first replica hands four leases over to the two that joined.
  await crashEverywhere('a', true);
  await until('two leases per replica', async () => (await leasesByPid(replicas)).every((n) => n === 2), 10_000);
  await until('every replica reading every stream', () => sims.every((s) => s.controls.eventListeners === 3), 5_000);
  await expectHealedOnce('a');

  await crashEverywhere('b', false);
  await expectHealedOnce('b');

  const victim = replicas[1]!;
  await victim.kill();
  const survivors = replicas.filter((r) => r !== victim);
  // Crashes during the takeover: nobody writes the victim's two streams, the survivors' windows keep them.
  await crashEverywhere('c', true);
  await until('three leases per survivor', async () => (await leasesByPid(survivors)).every((n) => n === 3), 10 * leaseTtlMs);
  await expectHealedOnce('c');

  await crashEverywhere('d', false);
  await expectHealedOnce('d');
  expect(await leasesByPid(survivors), 'the split holds').toEqual([3, 3]);
  expect(await trail(targets[0]!, 'a'), 'nothing replayed twice across the moves').toHaveLength(2);
}, 120_000);
