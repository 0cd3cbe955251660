import { afterAll, describe, expect, it } from 'vitest';
import { StateTracker } from '../../src/events/state-tracker.js';
import { keySpace } from '../../src/redis/key-space.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

describe('tracked instance status in Redis', () => {
  const redis = redisClient();
  afterAll(() => redis.disconnect());

  it('applies newer news and reports what it replaced', async () => {
    const t = new StateTracker(redis, keySpace(uniquePrefix()));
    expect(await t.update('tgt', 'default', 'c1', 103, 1000)).toEqual({ applied: true, previous: undefined });
    expect(await t.update('tgt', 'default', 'c1', 102, 2000)).toMatchObject({ applied: true, previous: { status: 103, at: 1000 } });
    expect(await t.get('tgt', 'default', 'c1')).toMatchObject({ status: 102 });
  });

  it('never lets an event that arrives late roll the state back', async () => {
    const t = new StateTracker(redis, keySpace(uniquePrefix()));
    await t.update('tgt', 'default', 'c1', 103, 2000); // started, delivered first
    const late = await t.update('tgt', 'default', 'c1', 102, 1000); // the earlier shutdown, delivered second
    expect(late.applied).toBe(false);
    expect(await t.get('tgt', 'default', 'c1')).toMatchObject({ status: 103, at: 2000 });
  });

  it('keeps instances of different projects apart', async () => {
    const t = new StateTracker(redis, keySpace(uniquePrefix()));
    await t.update('tgt', 'default', 'web', 103, 1);
    await t.update('tgt', 'staging', 'web', 102, 1);
    const all = await t.all('tgt');
    expect(all.get('default/web')?.status).toBe(103);
    expect(all.get('staging/web')?.status).toBe(102);
  });
});
