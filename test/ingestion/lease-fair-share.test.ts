import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { LeaseSpread } from '../../src/events/lease-spread.js';
import { SubscriberLease } from '../../src/events/subscriber-lease.js';
import { keySpace } from '../../src/redis/key-space.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

/**
 * The fair-share rules of the lease spread on their own (real Redis, no stream): replicas here are
 * a LeaseSpread and its leases each, as start-reflex wires them.
 */
const logger = pino({ level: 'silent' });
const ttlMs = 600;

describe('subscriber leases in fair shares', () => {
  const redis = redisClient();
  const stops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const s of stops) await s();
    redis.disconnect();
  });

  /** A replica competing for `targets` leases under `prefix`. */
  async function replica(prefix: string, targets: string[], patienceMs?: number) {
    const keys = keySpace(prefix);
    const spread = new LeaseSpread({ redis, key: keys.replicas, logger, ttlMs, patienceMs });
    await spread.start();
    const leases = targets.map((t) => {
      const lease = new SubscriberLease({
        redis,
        key: keys.lease(t),
        fenceKey: keys.leaseFence(t),
        vacantKey: keys.leaseVacant(t),
        logger,
        ttlMs,
        mayTake: (ms) => spread.mayTake(ms),
      });
      spread.register(lease, () => lease.handOver());
      lease.start();
      return lease;
    });
    const stop = async () => {
      await spread.stop();
      for (const l of leases) await l.stop();
    };
    stops.push(stop);
    return { spread, leases, held: () => leases.filter((l) => l.isHeld).length, stop };
  }

  it('one replica alone holds every lease, and counts itself', async () => {
    const prefix = uniquePrefix('share');
    const one = await replica(prefix, ['a', 'b', 'c']);
    await until('all three held', () => one.held() === 3, 3_000);
    expect(one.spread.replicaCount).toBe(1);
    expect(one.spread.fairShare).toBe(3);
  });

  it('a replica at its share takes a lease nobody else takes once the patience is over', async () => {
    const prefix = uniquePrefix('share');
    const a = await replica(prefix, ['t1', 't2'], 1_500);
    await until('a holds both', () => a.held() === 2, 3_000);
    // A second replica joins but never competes for t2: it only beats (a stand-in for one that cannot take more).
    const idle = new LeaseSpread({ redis, key: keySpace(prefix).replicas, logger, ttlMs });
    await idle.start();
    stops.push(() => idle.stop());
    await until('a hands its surplus over', () => a.held() === 1, 3_000);
    const freedAt = Date.now();
    const freed = a.leases.find((l) => !l.isHeld)!;
    // Nobody takes it: a, at its share, waits for the patience, then takes it back.
    const retakenAt = await new Promise<number>((resolve) => freed.once('acquired', () => resolve(Date.now())));
    expect(retakenAt - freedAt).toBeGreaterThanOrEqual(1_500 - 250);
  });

  it('a replica that stops leaves the roster at once and releases its leases, so another takes them all', async () => {
    const prefix = uniquePrefix('share');
    const targets = ['t1', 't2', 't3', 't4'];
    const a = await replica(prefix, targets);
    const b = await replica(prefix, targets);
    await until('two each', () => a.held() === 2 && b.held() === 2, 5_000);
    await b.stop();
    expect(await redis.zcard(keySpace(prefix).replicas), 'b is out of the roster as soon as it stopped').toBe(1);
    await until('a holds all four', () => a.held() === 4, 3_000);
    expect(a.spread.replicaCount).toBe(1);
  });

  it('replicas of a single-target deployment keep no roster: the share of one lease is one whatever the count', async () => {
    const prefix = uniquePrefix('share');
    const a = await replica(prefix, ['only']);
    const b = await replica(prefix, ['only']);
    await until('one of them holds the lease', () => a.held() + b.held() === 1, 3_000);
    // Each joined with one beat; without further beats the roster key runs out (4 × ttl after the last).
    await until('the roster is gone', async () => (await redis.exists(keySpace(prefix).replicas)) === 0, 20 * ttlMs);
    expect(a.held() + b.held(), 'the lease stays held meanwhile').toBe(1);
    const holder = a.held() ? a : b;
    const other = holder === a ? b : a;
    await holder.stop();
    await until('the other replica takes the lease over', () => other.held() === 1, 10 * ttlMs);
  });
});
