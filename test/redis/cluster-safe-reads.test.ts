import { afterAll, describe, expect, it } from 'vitest';
import { getMany } from '../../src/redis/get-many.js';
import { keySpace } from '../../src/redis/key-space.js';
import { scanKeys } from '../../src/redis/scan-keys.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

const redis = redisClient();
afterAll(() => redis.disconnect());

describe('reads that span many keys (cluster-safe)', () => {
  it('scanKeys finds every key matching a pattern, across many SCAN pages, and nothing else', async () => {
    const prefix = uniquePrefix('scan');
    const ks = keySpace(prefix);
    const refs = Array.from({ length: 1200 }, (_, i) => ({ target: 'unix:///var/lib/lxd/unix.socket', project: 'default', instance: `c${i}` }));
    for (const r of refs) await redis.set(ks.quarantine(r), '1', 'PX', 60_000);
    await redis.set(ks.restarts(refs[0]!), '1', 'PX', 60_000);
    const found: string[] = [];
    for await (const k of scanKeys(redis, ks.quarantinePattern, 100)) found.push(k);
    expect(new Set(found)).toEqual(new Set(refs.map((r) => ks.quarantine(r))));
  });

  it('getMany answers the values of keys of different slots in order, null where absent', async () => {
    const prefix = uniquePrefix('get');
    const ks = keySpace(prefix);
    await redis.set(ks.eventDone('a'), '1', 'PX', 60_000);
    await redis.set(ks.eventDone('c'), '3', 'PX', 60_000);
    expect(await getMany(redis, [ks.eventDone('a'), ks.eventDone('b'), ks.eventDone('c')])).toEqual(['1', null, '3']);
    expect(await getMany(redis, [])).toEqual([]);
  });
});
