import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { EventArchive } from '../../src/events/event-archive.js';
import { keySpace } from '../../src/redis/key-space.js';
import { startSimulator } from '../../src/simulator/simulator.js';
import { redisUrl, reflexArgs, uniquePrefix } from '../support/redis.js';
import { startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';
import { optIn, publishedStatus, transition } from './support/ingestion-bed.js';
import { settled } from '../support/settled.js';
import { until } from '../support/wait.js';
import { redisFromUrl } from '../../src/redis/connect.js';

/**
 * Three `reflex run` processes against one target: one reads the stream, each event is archived
 * and acted on once; SIGKILL the reader and another takes over within the lease time, resyncs,
 * and a crash during the takeover is still caught.
 */
const leaseTtlMs = 2_000;
const sim = await startSimulator({ instances: 0, timings: { stopHookMs: 100, startMs: 30 } });
const prefix = uniquePrefix('replicas');
const keys = keySpace(prefix);
const redis = redisFromUrl(redisUrl());
const archive = new EventArchive({ redis, key: keys.archive });
const dir = mkdtempSync(join(tmpdir(), 'reflex-replicas-'));
const configFile = join(dir, 'reflex.json');
writeFileSync(configFile, JSON.stringify({ leaseTtlMs, resyncGraceMs: 300, resyncIntervalMs: 0 }));
const replicas: ReflexProcess[] = [];

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await sim.stop();
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

async function trail(name: string): Promise<string[]> {
  return (await publishedStatus({ redis, keys }, { instance: name })).map(transition);
}

async function holderPid(): Promise<number | undefined> {
  const value = await redis.get(keys.lease(`unix://${sim.socketPath}`));
  return value ? Number(value.split(':')[0]) : undefined;
}

async function crashAndHeal(name: string, crash = true): Promise<string[]> {
  if (crash) sim.controls.crash(name);
  await until(`${name} restarted`, () => sim.controls.statusCode(name) === 103 && sim.controls.calls(name, 'start') > 0, 20_000);
  await settled(redisUrl(), prefix); // a duplicate would be in a queue
  return trail(name);
}

it('archives and acts on each event once with three replicas, and survives SIGKILL of the reader', async () => {
  for (const name of ['c1', 'c2', 'c3']) sim.controls.addInstance({ name, config: optIn });
  for (let i = 0; i < 3; i++) {
    replicas.push(
      startReflexProcess(['run', ...reflexArgs(prefix, `unix://${sim.socketPath}`), '--rules', 'rules', '--config', configFile, '--http-port', '0'], {
        REFLEX_LOG_LEVEL: 'info',
      }),
    );
  }
  await Promise.all(replicas.map((r) => r.waitForLog('reflex running')));
  await until('a lease holder', async () => (await holderPid()) !== undefined, 10_000);
  await until(
    "the holder's start-up resync has set the baseline",
    async () => (await redis.hlen(keys.state(`unix://${sim.socketPath}`))) >= 3,
    10_000,
  );
  // Every replica keeps the stream open; only the lease holder writes it, the others keep a window of it.
  expect(sim.controls.eventListeners).toBe(3);

  expect(await crashAndHeal('c1')).toEqual(['103→102 unrequested', '102→103 self']);
  expect(sim.controls.calls('c1', 'start')).toBe(1);
  const lifecycleIds = (await archive.read({ kind: 'lifecycle' })).map((a) => a.event.id);
  expect(new Set(lifecycleIds).size).toBe(lifecycleIds.length);

  const victimPid = (await holderPid())!;
  const victim = replicas.find((r) => r.child.pid === victimPid)!;
  expect(victim, 'the lease holder is one of the replicas').toBeDefined();
  await victim.kill();
  const killedAt = Date.now();
  sim.controls.crash('c2'); // during the takeover: no replica writes its event, but the followers keep it in their window
  await until(
    'takeover',
    async () => {
      const pid = await holderPid();
      return pid !== undefined && pid !== victimPid;
    },
    10_000,
  );
  const takeoverMs = Date.now() - killedAt;
  // The designed bound, not a speed target: the lease outlives its last renewal by at most one TTL;
  // a follower that looks every TTL/3 first marks it vacant, then takes it once it has stayed vacant
  // for TTL/3 (the previous holder's chance to take it back), so up to about 2 TTL; plus slack for
  // a loaded machine. (TTL + 1 s was tighter than the design, and failed at 3003 and 3092 ms.)
  expect(takeoverMs).toBeLessThan(2 * leaseTtlMs + 1_000);
  await until("the victim's stream closed", () => sim.controls.eventListeners === 2, 5_000);

  // The new holder replays its window: the crash keeps its real intent (not an unknown stop found by a resync).
  expect(await crashAndHeal('c2', false)).toEqual(['103→102 unrequested', '102→103 self']);
  expect(sim.controls.calls('c2', 'start')).toBe(1);

  expect(await crashAndHeal('c3')).toEqual(['103→102 unrequested', '102→103 self']);
  expect(sim.controls.calls('c3', 'start')).toBe(1);
  expect(await trail('c1'), 'nothing replayed twice after the takeover').toHaveLength(2);
}, 90_000);
