import { afterAll, describe, expect, it } from 'vitest';
import { ActionGate } from '../../src/remediation/decide/action-gate.js';
import { CrashLoopBudget, quarantineHolds } from '../../src/remediation/crash-loop-budget.js';
import type { InstanceStatusEvent } from '../../src/events/canonical-event.js';
import { keySpace } from '../../src/redis/key-space.js';
import { defineRule } from '../../src/rules/rule.js';
import { Silences } from '../../src/silences/silences.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

const ref = (instance: string) => ({ target: 't', project: 'default', instance });

const crash = (id: string): InstanceStatusEvent => ({
  kind: 'instance.status',
  id,
  target: 't',
  location: 'node1',
  project: 'default',
  timestamp: new Date().toISOString(),
  synthetic: false,
  instance: 'c1',
  to: 102,
  intent: 'unrequested',
});

describe('the crash-loop budget', () => {
  const redis = redisClient();
  afterAll(() => redis.disconnect());
  const keys = () => ({ restarts: uniquePrefix('r'), quarantine: uniquePrefix('q') });
  const policy = { maxRestarts: 4, initialBackoffMs: 10_000, maxBackoffMs: 25_000, windowMs: 600_000, resetAfterMs: 600_000 };

  it('restarts at once the first time, then backs off doubling up to the cap', async () => {
    const b = new CrashLoopBudget(redis);
    const k = keys();
    const delays = [];
    for (let i = 0; i < 4; i++) {
      const v = await b.reserve(k, `inc-${i}`, policy, 1_000_000 + i * 1000);
      expect(v.allowed).toBe(true);
      if (v.allowed) delays.push(v.delayMs);
    }
    expect(delays).toEqual([0, 10_000, 20_000, 25_000]);
  });

  it('quarantines after the budget with exactly one alert, then stays quiet', async () => {
    const b = new CrashLoopBudget(redis);
    const k = keys();
    for (let i = 0; i < 4; i++) await b.reserve(k, `inc-${i}`, policy, 1_000_000 + i);
    expect(await b.reserve(k, 'inc-4', policy, 1_000_010)).toEqual({ allowed: false, restarts: 4, newlyQuarantined: true });
    expect(await b.reserve(k, 'inc-5', policy, 1_000_020)).toEqual({ allowed: false, restarts: 4, newlyQuarantined: false });
    expect(await b.release(k)).toBe(true);
    expect(await b.reserve(k, 'inc-6', policy, 1_000_030)).toMatchObject({ allowed: true, delayMs: 0 });
  });

  it('counts a duplicated incident once', async () => {
    const b = new CrashLoopBudget(redis);
    const k = keys();
    await b.reserve(k, 'same', policy, 1_000_000);
    expect(await b.reserve(k, 'same', policy, 1_000_001)).toMatchObject({ allowed: true, delayMs: 0 });
    expect(await b.reserve(k, 'next', policy, 1_000_002)).toMatchObject({ allowed: true, restartNumber: 2, delayMs: 10_000 });
  });

  it('forgets the history after a stable run', async () => {
    const b = new CrashLoopBudget(redis);
    const k = keys();
    await b.reserve(k, 'a', policy, 1_000_000);
    await b.reserve(k, 'b', policy, 1_000_100);
    expect(await b.reserve(k, 'c', policy, 1_000_100 + 600_001)).toMatchObject({ allowed: true, restartNumber: 1, delayMs: 0 });
  });

  it("belongs to one instance: another instance under the name starts afresh, out of its predecessor's quarantine", async () => {
    const b = new CrashLoopBudget(redis);
    const k = keys();
    for (let i = 0; i < 4; i++) await b.reserve(k, `old-${i}`, policy, 1_000_000 + i, 'uuid-old');
    expect(await b.reserve(k, 'old-4', policy, 1_000_010, 'uuid-old')).toMatchObject({ allowed: false, newlyQuarantined: true });
    expect(await b.quarantine(k)).toEqual({ since: 1_000_010, holder: 'uuid-old' });
    // The same instance stays quarantined; one whose identity is unknown is taken for it.
    expect(await b.reserve(k, 'old-5', policy, 1_000_020, 'uuid-old')).toMatchObject({ allowed: false, newlyQuarantined: false });
    expect(await b.reserve(k, 'unknown', policy, 1_000_030)).toMatchObject({ allowed: false });

    expect(await b.reserve(k, 'new-0', policy, 1_000_040, 'uuid-new')).toEqual({ allowed: true, restartNumber: 1, delayMs: 0 });
    expect(await b.quarantine(k)).toBeUndefined();
    expect(await b.reserve(k, 'new-1', policy, 1_000_050, 'uuid-new')).toEqual({ allowed: true, restartNumber: 2, delayMs: 10_000 });
  });

  it('adopts a history kept before identities were: the same instance keeps its count', async () => {
    const b = new CrashLoopBudget(redis);
    const k = keys();
    await b.reserve(k, 'legacy', policy, 1_000_000);
    expect(await b.reserve(k, 'next', policy, 1_000_010, 'uuid-a')).toMatchObject({ allowed: true, restartNumber: 2 });
    expect(await b.reserve(k, 'other', policy, 1_000_020, 'uuid-b')).toMatchObject({ allowed: true, restartNumber: 1 });
  });
});

describe('a rename', () => {
  const redis = redisClient();
  afterAll(() => redis.disconnect());
  const keys = () => ({ restarts: uniquePrefix('r'), quarantine: uniquePrefix('q') });
  const policy = { maxRestarts: 1, initialBackoffMs: 10_000 };

  it("carries the instance's history and quarantine to its new name, and never onto another instance's", async () => {
    const b = new CrashLoopBudget(redis);
    const [from, to, taken] = [keys(), keys(), keys()];
    await b.reserve(from, 'a', policy, 1_000_000, 'u1');
    await b.reserve(from, 'b', policy, 1_000_010, 'u1');
    expect(await b.move(from, to)).toBe('quarantined');
    expect(await b.quarantine(from)).toBeUndefined();
    expect(await b.quarantine(to)).toEqual({ since: 1_000_010, holder: 'u1' });
    expect(await b.reserve(to, 'c', policy, 1_000_020, 'u1')).toMatchObject({ allowed: false, restarts: 1 });

    await b.reserve(taken, 'x', policy, 1_000_000, 'u2');
    expect(await b.move(to, taken)).toBeUndefined();
    expect(await b.quarantine(taken)).toBeUndefined();
    expect(await b.move(keys(), keys()), 'nothing to carry').toBeUndefined();
  });
});

describe('whether a quarantine holds an instance', () => {
  it('holds the instance it was imposed on, or any when either identity is unknown; never another', () => {
    expect(quarantineHolds({ since: 1, holder: 'u1' }, 'u1')).toBe(true);
    expect(quarantineHolds({ since: 1, holder: 'u1' }, 'u2')).toBe(false);
    expect(quarantineHolds({ since: 1, holder: null }, 'u2')).toBe(true);
    expect(quarantineHolds({ since: 1, holder: 'u1' }, '')).toBe(true);
    expect(quarantineHolds(undefined, 'u1')).toBe(false);
  });
});

describe('gating a matched rule', () => {
  const redis = redisClient();
  afterAll(() => redis.disconnect());

  it('suppresses actions on a silenced instance and says which silence', async () => {
    const ks = keySpace(uniquePrefix());
    const silences = new Silences(redis, ks.silences);
    const gate = new ActionGate(redis, ks, silences);
    const rule = defineRule({ name: 'r', on: { kind: 'instance.status' }, actions: [{ action: 'start' }] });
    const s = await silences.add({ scope: { instance: 'c1' }, reason: 'kernel upgrade', durationMs: 60_000 });
    expect(await gate.admit(rule, crash('e1'), ref('c1'), undefined)).toMatchObject({
      admitted: false,
      summary: expect.stringContaining(`suppressed by silence ${s.id}`),
    });
    expect(await gate.admit(rule, crash('e2'), ref('c2'), undefined)).toMatchObject({ admitted: true });
  });

  it('matches silences by cluster member and by filter on the instance, and forgets expired ones', async () => {
    const ks = keySpace(uniquePrefix());
    const silences = new Silences(redis, ks.silences);
    await silences.add({ scope: { location: 'node1' }, reason: 'member maintenance', durationMs: 60_000 });
    await silences.add({ scope: { filter: 'config.user.tier eq db' }, reason: 'db freeze', durationMs: 60_000 });
    await silences.add({ scope: {}, reason: 'already over', durationMs: -1 });
    expect(await silences.matching({ target: 't', project: 'default', location: 'node1', instance: 'x' })).toMatchObject({
      reason: 'member maintenance',
    });
    const db = { name: 'x', status: 'Running', status_code: 103, config: { 'user.tier': 'db' } };
    expect(await silences.matching({ target: 't', project: 'default', location: 'node2', instance: 'x', object: db })).toMatchObject({
      reason: 'db freeze',
    });
    expect(
      await silences.matching({ target: 't', project: 'default', location: 'node2', instance: 'x', object: { ...db, config: {} } }),
    ).toBeUndefined();
    expect((await silences.list()).map((s) => s.reason)).not.toContain('already over');
  });

  it('rejects a silence with a malformed filter when it is added', async () => {
    const silences = new Silences(redis, keySpace(uniquePrefix()).silences);
    await expect(silences.add({ scope: { filter: 'name eq' }, reason: 'x', durationMs: 1000 })).rejects.toThrow();
  });

  it('holds a rule back during its cooldown, but lets the same incident through again', async () => {
    const ks = keySpace(uniquePrefix());
    const gate = new ActionGate(redis, ks, new Silences(redis, ks.silences));
    const rule = defineRule({ name: 'r', on: { kind: 'instance.status' }, actions: [{ action: 'snapshot' }], cooldownMs: 60_000 });
    expect(await gate.admit(rule, crash('e1'), ref('c1'), undefined)).toMatchObject({ admitted: true });
    expect(await gate.admit(rule, crash('e1'), ref('c1'), undefined)).toMatchObject({ admitted: true });
    expect(await gate.admit(rule, crash('e2'), ref('c1'), undefined)).toMatchObject({
      admitted: false,
      summary: expect.stringContaining('cooldown'),
    });
  });

  it('stands back for boot.autorestart with one take-over check that covers the stops during it', async () => {
    const ks = keySpace(uniquePrefix());
    const gate = new ActionGate(redis, ks, new Silences(redis, ks.silences), undefined, { autorestartStandBackMs: 75_000 });
    const rule = defineRule({ name: 'r', on: { kind: 'instance.status' }, actions: [{ action: 'start' }], crashLoop: { initialBackoffMs: 0 } });
    const retrying = { name: 'c1', status: 'Stopped', status_code: 102, config: {}, expanded_config: { 'boot.autorestart': 'true' } };
    expect(await gate.admit(rule, crash('e1'), ref('c1'), retrying)).toMatchObject({
      admitted: true,
      delayMs: 75_000,
      note: expect.stringMatching(/^boot\.autorestart is on: standing back 75000 ms/),
    });
    expect(await gate.admit(rule, crash('e1'), ref('c1'), retrying)).toMatchObject({ admitted: true, delayMs: 75_000 });
    expect(await gate.admit(rule, crash('e2'), ref('c1'), retrying)).toMatchObject({
      admitted: false,
      summary: expect.stringContaining('take-over check queued for incident e1 covers this stop'),
    });
    // A stop asked for through the API, an Error, or an instance without the key: no standing back.
    expect(await gate.admit(rule, { ...crash('e3'), intent: 'requested' }, ref('c1'), retrying)).toMatchObject({ admitted: true, delayMs: 0 });
    expect(await gate.admit(rule, { ...crash('e4'), to: 112 }, ref('c1'), retrying)).toMatchObject({ admitted: true, delayMs: 0 });
    expect(await gate.admit(rule, crash('e5'), ref('c2'), { ...retrying, expanded_config: {} })).toMatchObject({ admitted: true, delayMs: 0 });
  });

  it('raises one alert when the crash-loop budget runs out', async () => {
    const ks = keySpace(uniquePrefix());
    const gate = new ActionGate(redis, ks, new Silences(redis, ks.silences));
    const rule = defineRule({
      name: 'r',
      on: { kind: 'instance.status' },
      actions: [{ action: 'start' }],
      crashLoop: { maxRestarts: 2, initialBackoffMs: 0 },
    });
    const verdicts = [];
    for (let i = 0; i < 5; i++) verdicts.push(await gate.admit(rule, crash(`e${i}`), ref('c1'), undefined));
    expect(verdicts.map((v) => v.admitted)).toEqual([true, true, false, false, false]);
    expect(verdicts.filter((v) => !v.admitted && v.alert)).toHaveLength(1);
  });
});
