import { afterAll, expect, it } from 'vitest';
import { ownRedis, type OwnRedis } from '../support/own-redis.js';
import { optIn, startIngestionBed, type IngestionBed } from './support/ingestion-bed.js';
import { sleep, until } from '../support/wait.js';

let redis: OwnRedis | undefined;
let bed: IngestionBed | undefined;
afterAll(async () => {
  await bed?.stop().catch(() => undefined);
  await redis?.stop().catch(() => undefined);
  redis?.remove();
});

it('holds events while Redis is down and resyncs after: a crash during the outage is caught once', async () => {
  redis = await ownRedis();
  bed = await startIngestionBed({ url: redis.url });
  const b = bed;
  b.sim.controls.addInstance({ name: 'c1', config: optIn });
  await until('connected', () => b.reflex.subscriber?.connected === true, 10_000);
  await b.reflex.resync();
  await until('the baseline written', async () => (await b.redis.hlen(b.keys.state(b.target))) === 1, 10_000);

  await redis.stop();
  b.sim.controls.crash('c1'); // its event reaches Reflex while Redis is down
  // A quiet period past the lease TTL (1 s) with Redis away: the point of the test, and no state to wait on
  // (the lease's renewal hangs on the unreachable Redis); nothing may be started in it.
  await sleep(4_000);
  expect(b.sim.controls.statusCode('c1')).toBe(102);
  await redis.start();

  await until('c1 restarted', () => b.sim.controls.statusCode('c1') === 103, 20_000);
  const trail = await b.waitTrail('c1', 2, 10_000);
  expect(trail).toHaveLength(2);
  expect(trail[0]).toMatch(/^103→102 (unrequested|unknown)/);
  expect(trail[1]).toBe('102→103 self');
  expect(b.sim.controls.calls('c1', 'start')).toBe(1);
  expect(b.reflex.subscriber?.connected).toBe(true);
}, 60_000);
