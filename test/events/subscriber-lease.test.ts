import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { SubscriberLease } from '../../src/events/subscriber-lease.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { sleep, until } from '../support/wait.js';

const logger = pino({ level: 'silent' });

describe('one active subscriber per target across replicas', () => {
  const redis = redisClient();
  afterAll(() => redis.disconnect());

  it('gives the lease to exactly one of three replicas', async () => {
    const key = uniquePrefix('lease');
    const leases = [1, 2, 3].map(
      (i) => new SubscriberLease({ redis, key, fenceKey: `${key}:fence`, vacantKey: `${key}:vacant`, logger, ttlMs: 600, holder: `r${i}` }),
    );
    leases.forEach((l) => l.start());
    // A quiet period longer than the lease time (600 ms): a second holder would show in it.
    await sleep(700);
    expect(leases.filter((l) => l.isHeld)).toHaveLength(1);
    await Promise.all(leases.map((l) => l.stop()));
  });

  it('lets another replica take over within the lease time and two renewal periods when the holder dies, with a larger fencing token', async () => {
    const key = uniquePrefix('lease');
    const aConnection = redisClient();
    const a = new SubscriberLease({ redis: aConnection, key, fenceKey: `${key}:fence`, vacantKey: `${key}:vacant`, logger, ttlMs: 600, holder: 'a' });
    a.start();
    await until('a holding the lease', () => a.isHeld, 1000, 20);
    const first = a.fencingToken;
    const b = new SubscriberLease({ redis, key, fenceKey: `${key}:fence`, vacantKey: `${key}:vacant`, logger, ttlMs: 600, holder: 'b' });
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
    const a = new SubscriberLease({ redis, key, fenceKey: `${key}:fence`, vacantKey: `${key}:vacant`, logger, ttlMs: 5_000, holder: 'a' });
    a.start();
    await until('a holding the lease', () => a.isHeld, 1000, 20);
    const b = new SubscriberLease({
      redis,
      key,
      fenceKey: `${key}:fence`,
      vacantKey: `${key}:vacant`,
      logger,
      ttlMs: 5_000,
      renewEveryMs: 100,
      holder: 'b',
    });
    b.start();
    await a.stop();
    await until('b holding the lease', () => b.isHeld, 1000, 20);
    await b.stop();
  });

  it('notices when its lease was taken, and says so', async () => {
    const key = uniquePrefix('lease');
    const a = new SubscriberLease({
      redis,
      key,
      fenceKey: `${key}:fence`,
      vacantKey: `${key}:vacant`,
      logger,
      ttlMs: 600,
      renewEveryMs: 100,
      holder: 'a',
    });
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
