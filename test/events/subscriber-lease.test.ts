import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { SubscriberLease } from '../../src/events/subscriber-lease.js';
import type { RedisConnection } from '../../src/redis/connect.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

const logger = pino({ level: 'silent' });

/** A lease on `key` (its fence and vacancy keys beside it) through `redis`, with `opts` (ttl, renewal, holder). */
const lease = (
  redis: RedisConnection,
  key: string,
  opts: Pick<ConstructorParameters<typeof SubscriberLease>[0], 'ttlMs' | 'renewEveryMs' | 'holder'>,
) => new SubscriberLease({ redis, key, fenceKey: `${key}:fence`, vacantKey: `${key}:vacant`, logger, ...opts });

describe('one active subscriber per target across replicas', () => {
  const redis = redisClient();
  afterAll(() => redis.disconnect());

  it('gives the lease to exactly one of three replicas', async () => {
    const key = uniquePrefix('lease');
    const leases = [1, 2, 3].map((i) => lease(redis, key, { ttlMs: 600, holder: `r${i}` }));
    leases.forEach((l) => l.start());
    const holder = await until('a holder', () => leases.find((l) => l.isHeld));
    const heldAt = Date.now();
    // Past the lease time (600 ms) from the first hold, with the lease renewed since: a lease that was
    // not renewed would have lapsed by then and another replica taken it, which the fencing counter would show.
    await until('the lease renewed past its first term', async () => Date.now() > heldAt + 600 && (await redis.pttl(key)) > 300, 5_000, 20);
    expect(leases.filter((l) => l.isHeld)).toEqual([holder]);
    expect(Number(await redis.get(`${key}:fence`)), 'taken once: one fencing token handed out').toBe(1);
    await Promise.all(leases.map((l) => l.stop()));
  });

  it('lets another replica take over within the lease time and two renewal periods when the holder dies, with a larger fencing token', async () => {
    const key = uniquePrefix('lease');
    const aConnection = redisClient();
    const a = lease(aConnection, key, { ttlMs: 600, holder: 'a' });
    a.start();
    await until('a holding the lease', () => a.isHeld, 1000, 20);
    const first = a.fencingToken;
    const b = lease(redis, key, { ttlMs: 600, holder: 'b' });
    b.start();
    // "Dies" as after SIGKILL: its connection goes away without releasing the lease.
    aConnection.disconnect();
    const diedAt = Date.now();
    await until('b holding the lease', () => b.isHeld, 3000, 20);
    // The lease lapses (600 ms), then a follower sees it vacant twice, a renewal period apart (200 ms each).
    expect(Date.now() - diedAt).toBeLessThan(1_200);
    expect(b.fencingToken).toBeGreaterThan(first);
    expect(await redis.get(key)).toMatch(/^b:/);
    expect(await b.isCurrent()).toBe(true);
    await a.stop();
    await b.stop();
  });

  it('hands over at once on a clean stop', async () => {
    const key = uniquePrefix('lease');
    const a = lease(redis, key, { ttlMs: 5_000, holder: 'a' });
    a.start();
    await until('a holding the lease', () => a.isHeld, 1000, 20);
    const b = lease(redis, key, { ttlMs: 5_000, renewEveryMs: 100, holder: 'b' });
    b.start();
    await a.stop();
    await until('b holding the lease', () => b.isHeld, 1000, 20);
    await b.stop();
  });

  it('notices when its lease was taken, and says so', async () => {
    const key = uniquePrefix('lease');
    const a = lease(redis, key, { ttlMs: 600, renewEveryMs: 100, holder: 'a' });
    let lost = false;
    a.on('lost', () => (lost = true));
    a.start();
    await until('a holding the lease', () => a.isHeld, 1000, 20);
    await redis.set(key, 'someone-else');
    await until('the lease lost', () => lost, 1000, 20);
    expect(a.isHeld).toBe(false);
    await a.stop();
  });
});
