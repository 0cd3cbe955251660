import { afterAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../src/alerts/alert.js';
import { keySpace } from '../../src/redis/key-space.js';
import { ActionGate } from '../../src/remediation/decide/action-gate.js';
import { defineRule } from '../../src/rules/rule.js';
import { Silences } from '../../src/silences/silences.js';
import { crashEvent } from '../support/crash-event.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { VirtualClock } from '../support/virtual-clock.js';

const HOUR = 3_600_000;
const web1 = { target: 't', project: 'default', location: 'none', instance: 'web-1' };

/**
 * A silence lasts its duration on the clock Silences is given: a maintenance window of an hour is
 * crossed on virtual time, to the millisecond, instead of waited out (or faked with a negative duration).
 */
describe('a silence ends when its window does, on the injected clock', () => {
  const redis = redisClient();
  afterAll(() => redis.disconnect());

  it('mutes actions and notifications until the last millisecond of its hour, then nothing; the ended silence is pruned', async () => {
    const clock = new VirtualClock();
    const key = keySpace(uniquePrefix('silence')).silences;
    const silences = new Silences(redis, key, undefined, clock);
    const silence = await silences.add({ scope: { instance: 'web-1' }, reason: 'kernel upgrade', durationMs: HOUR });
    expect(silence).toMatchObject({ createdAt: new Date(clock.now()).toISOString(), until: new Date(clock.now() + HOUR).toISOString() });
    const alert = { fingerprint: 'fp-web-1', target: 't', project: 'default', instance: 'web-1' } as Alert;

    clock.advance(HOUR - 1);
    expect(await silences.matching(web1)).toMatchObject({ id: silence.id });
    expect(await silences.mutingNotifications([alert])).toEqual(new Map([['fp-web-1', `silence ${silence.id} (kernel upgrade)`]]));

    clock.advance(1);
    expect(await silences.matching(web1)).toBeUndefined();
    expect(await silences.mutingNotifications([alert])).toEqual(new Map());
    expect(await redis.hlen(key)).toBe(0);
  });

  it('holds back a rule action for the silence it is given and admits the same crash the moment the silence is over', async () => {
    const clock = new VirtualClock();
    const ks = keySpace(uniquePrefix('silence'));
    const gate = new ActionGate(redis, ks, new Silences(redis, ks.silences, undefined, clock), undefined, { clock, storm: false });
    const rule = defineRule({ name: 'heal', on: { kind: 'instance.status' }, actions: [{ action: 'start' }] });
    const silence = await new Silences(redis, ks.silences, undefined, clock).add({
      scope: { instance: 'web-1' },
      reason: 'maintenance',
      durationMs: HOUR,
    });
    const ref = { target: 't', project: 'default', instance: 'web-1' };

    clock.advance(HOUR - 1);
    expect(await gate.admit(rule, crashEvent('t', 'web-1'), ref, undefined)).toEqual({
      admitted: false,
      summary: `suppressed by silence ${silence.id} until ${silence.until}: maintenance`,
    });
    clock.advance(1);
    expect(await gate.admit(rule, crashEvent('t', 'web-1'), ref, undefined)).toMatchObject({ admitted: true });
  });
});
