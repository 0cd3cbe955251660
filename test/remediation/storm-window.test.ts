import { afterAll, describe, expect, it } from 'vitest';
import { keySpace } from '../../src/redis/key-space.js';
import { StormControl } from '../../src/remediation/storm-control.js';
import { crashEvent } from '../support/crash-event.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { VirtualClock } from '../support/virtual-clock.js';

const HOUR = 3_600_000;
const scope = (instance: string) => ({ target: 't', location: 'm1', project: 'default', instance, rule: 'heal' });

/**
 * A storm's window is read on the clock storm control is given: a window of an hour is crossed on
 * virtual time, to the millisecond, instead of a short window waited out on the wall clock.
 */
describe('a storm ends one window after it last had enough failing remediations, on the injected clock', () => {
  const redis = redisClient();
  afterAll(() => redis.disconnect());

  it("holds the rule's actions until its window runs out, longer when the threshold is met again; the next storm has its own start and alert", async () => {
    const clock = new VirtualClock();
    const storms = new StormControl(redis, keySpace(uniquePrefix('storm')), { threshold: 2, windowMs: HOUR }, clock);
    const crashOnM1 = crashEvent('t', 'x', { location: 'm1' });
    const start = clock.now();
    expect(await storms.failed(scope('a'), 'give-up:a')).toMatchObject({ storm: false, failures: 1 });
    expect(await storms.failed(scope('b'), 'give-up:b')).toMatchObject({ storm: true, failures: 2, alert: true, since: start });

    // Half a window on, a third failing remediation: the storm lasts a window from now.
    clock.advance(HOUR / 2);
    expect(await storms.failed(scope('c'), 'give-up:c')).toMatchObject({ storm: true, failures: 3, alert: false, since: start });
    clock.advance(HOUR - 1);
    expect(await storms.holds(scope('d'))).toBe(true);
    expect(await storms.inStorm(crashOnM1)).toBe(true);
    clock.advance(1);
    expect(await storms.holds(scope('d'))).toBe(false);
    expect(await storms.inStorm(crashOnM1)).toBe(false);

    // Every failure of that storm is out of the window: a new one starts from nothing.
    expect(await storms.failed(scope('d'), 'give-up:d')).toMatchObject({ storm: false, failures: 1 });
    expect(await storms.failed(scope('e'), 'give-up:e')).toMatchObject({ storm: true, failures: 2, alert: true, since: clock.now() });
  });

  it('counts an instance failing again as a failing remediation only within the window after the rule brought it back', async () => {
    const clock = new VirtualClock();
    const storms = new StormControl(redis, keySpace(uniquePrefix('storm')), { threshold: 1, windowMs: HOUR }, clock);
    await storms.remediated(scope('a'));
    clock.advance(HOUR);
    expect(await storms.check(scope('a'), 'crash:a')).toMatchObject({ storm: false, failures: 0 });
    await storms.remediated(scope('b'));
    clock.advance(HOUR - 1);
    expect(await storms.check(scope('b'), 'crash:b')).toMatchObject({ storm: true, failures: 1, alert: true });
  });
});
