import { afterAll, describe, expect, it } from 'vitest';
import { StateTracker } from '../../src/events/state-tracker.js';
import { keySpace } from '../../src/redis/key-space.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

const ref = (instance: string, project = 'default') => ({ target: 'tgt', project, instance });

describe('tracked instance status in Redis', () => {
  const redis = redisClient();
  afterAll(() => redis.disconnect());

  it('applies newer news and reports what it replaced', async () => {
    const t = new StateTracker(redis, keySpace(uniquePrefix()));
    expect(await t.update(ref('c1'), 103, 1000)).toEqual({ applied: true, resumed: false, previous: undefined });
    expect(await t.update(ref('c1'), 102, 2000)).toMatchObject({ applied: true, previous: { status: 103, at: 1000 } });
    expect(await t.get(ref('c1'))).toMatchObject({ status: 102 });
  });

  it('never lets an event that arrives late roll the state back', async () => {
    const t = new StateTracker(redis, keySpace(uniquePrefix()));
    await t.update(ref('c1'), 103, 2000); // started, delivered first
    const late = await t.update(ref('c1'), 102, 1000); // the earlier shutdown, delivered second
    expect(late.applied).toBe(false);
    expect(await t.get(ref('c1'))).toMatchObject({ status: 103, at: 2000 });
  });

  it('keeps instances of different projects apart', async () => {
    const t = new StateTracker(redis, keySpace(uniquePrefix()));
    await t.update(ref('web'), 103, 1);
    await t.update(ref('web', 'staging'), 102, 1);
    const all = await t.all('tgt');
    expect(all.get('default/web')?.status).toBe(103);
    expect(all.get('staging/web')?.status).toBe(102);
  });

  it('recognises a redelivered event and gives back what it replaced the first time, so its processing resumes', async () => {
    const t = new StateTracker(redis, keySpace(uniquePrefix()));
    await t.update(ref('c1'), 103, 1000, { source: 'event', eventId: 'start' });
    await t.update(ref('c1'), 102, 2000, { source: 'event', eventId: 'crash' });
    // The worker died after this update; the event comes again.
    expect(await t.update(ref('c1'), 102, 2000, { source: 'event', eventId: 'crash' })).toMatchObject({
      applied: true,
      resumed: true,
      previous: { status: 103, at: 1000, eventId: 'start' },
    });
  });

  it("carries an operator's last requested transition along later changes", async () => {
    const t = new StateTracker(redis, keySpace(uniquePrefix()));
    await t.update(ref('c1'), 102, 1000, { eventId: 'crash' });
    await t.update(ref('c1'), 103, 2000, { eventId: 'lxc-start', requested: true });
    await t.update(ref('c1'), 102, 3000, { eventId: 'crash-2' });
    expect(await t.get(ref('c1'))).toMatchObject({ status: 102, requestedAt: 2000, requestedTo: 103 });
  });

  it('does not let a stored time further ahead of the clock than the tolerance hide newer news', async () => {
    const t = new StateTracker(redis, keySpace(uniquePrefix()), 60_000);
    const now = Date.now();
    await t.update(ref('c1'), 103, now + 24 * 3600_000, { source: 'event', eventId: 'forged' }); // stored before clamping existed
    const crash = await t.update(ref('c1'), 102, now, { source: 'event', eventId: 'crash' });
    expect(crash).toMatchObject({ applied: true, previous: { status: 103 } });
    expect(await t.get(ref('c1'))).toMatchObject({ status: 102, at: now });
  });

  it('still keeps a time within the tolerance ahead of the clock (a daemon a little ahead) against older news', async () => {
    const t = new StateTracker(redis, keySpace(uniquePrefix()), 60_000);
    const now = Date.now();
    await t.update(ref('c1'), 103, now + 30_000);
    expect((await t.update(ref('c1'), 102, now)).applied).toBe(false);
  });
});
