import { afterAll, describe, expect, it } from 'vitest';
import { keySpace } from '../../src/redis/key-space.js';
import { CrashLoopBudget } from '../../src/remediation/crash-loop-budget.js';
import { ActionGate } from '../../src/remediation/decide/action-gate.js';
import { defineRule } from '../../src/rules/rule.js';
import { Silences } from '../../src/silences/silences.js';
import { crashEvent } from '../support/crash-event.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { VirtualClock } from '../support/virtual-clock.js';

const HOUR = 3_600_000;

/**
 * A quarantine lasts `quarantineMs` on the time the budget is asked at (the action gate's clock),
 * not on the quarantine key's Redis expiry: an hour's quarantine is crossed on virtual time.
 */
describe('a crash-loop quarantine ends when its time is up, on the injected clock', () => {
  const redis = redisClient();
  afterAll(() => redis.disconnect());
  const policy = { maxRestarts: 2, initialBackoffMs: 0, windowMs: 600_000, resetAfterMs: 600_000, quarantineMs: HOUR };

  it('refuses restarts until the last millisecond of the quarantine and budgets afresh after it, the quarantine gone', async () => {
    const b = new CrashLoopBudget(redis);
    const k = { restarts: uniquePrefix('r'), quarantine: uniquePrefix('q') };
    const t = 1_000_000;
    await b.reserve(k, 'inc-1', policy, t);
    await b.reserve(k, 'inc-2', policy, t + 1);
    expect(await b.reserve(k, 'inc-3', policy, t + 2)).toEqual({ allowed: false, restarts: 2, newlyQuarantined: true });
    expect(await b.reserve(k, 'inc-4', policy, t + 2 + HOUR - 1)).toEqual({ allowed: false, restarts: 2, newlyQuarantined: false });
    expect(await b.reserve(k, 'inc-5', policy, t + 2 + HOUR)).toEqual({ allowed: true, restartNumber: 1, delayMs: 0 });
    expect(await b.quarantine(k)).toBeUndefined();
  });

  it('the action gate holds a crash-looping instance for its hour of quarantine and restarts it the moment the hour is up', async () => {
    const clock = new VirtualClock();
    const ks = keySpace(uniquePrefix('quarantine'));
    const gate = new ActionGate(redis, ks, new Silences(redis, ks.silences), undefined, { clock, storm: false });
    const rule = defineRule({ name: 'heal', on: { kind: 'instance.status' }, actions: [{ action: 'start' }], crashLoop: policy });
    const ref = { target: 't', project: 'default', instance: 'web-1' };
    const crash = () => gate.admit(rule, crashEvent('t', 'web-1'), ref, undefined);
    expect(await crash()).toMatchObject({ admitted: true });
    expect(await crash()).toMatchObject({ admitted: true });
    expect(await crash()).toMatchObject({ admitted: false, alert: expect.stringContaining('quarantine') });

    clock.advance(HOUR - 1);
    expect(await crash()).toMatchObject({ admitted: false, summary: expect.stringMatching(/^skipped: quarantined/) });
    clock.advance(1);
    expect(await crash()).toMatchObject({ admitted: true, note: 'restart 1 of the budget' });
  });
});
