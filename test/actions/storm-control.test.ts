import { resolve } from 'node:path';
import { Queue } from 'bullmq';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ActionGate } from '../../src/remediation/decide/action-gate.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { OwnOperations } from '../../src/events/own-operations.js';
import { PendingActions } from '../../src/remediation/pending-actions.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import type { InstanceStatusEvent } from '../../src/events/canonical-event.js';
import { EventProcessor } from '../../src/remediation/decide/event-processor.js';
import { keySpace } from '../../src/redis/key-space.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { loadRulesFolder } from '../../src/rules/rules-folder.js';
import { defineRule, type Rule } from '../../src/rules/rule.js';
import { Silences } from '../../src/silences/silences.js';
import { startSimulator } from '../../src/simulator/simulator.js';
import { StateTracker } from '../../src/events/state-tracker.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { recordingAlerts } from '../alerts/recording-alerts.js';
import { crashEvent } from '../support/crash-event.js';
import { until } from '../support/wait.js';

const crash = (instance: string, location: string, over: Partial<InstanceStatusEvent> = {}) =>
  crashEvent('unix:///sim', instance, { location, ...over });
const scope = (instance: string, rule: string, location = 'm1') => ({ target: 'unix:///sim', location, project: 'default', instance, rule });
const ref = (instance: string) => ({ target: 'unix:///sim', project: 'default', instance });
const restart = (name: string): Rule => defineRule({ name, on: { kind: 'instance.status' }, actions: [{ action: 'start' }] });

describe('storm control', () => {
  const redis = redisClient();
  afterAll(() => redis.disconnect());

  it('remediates every one of 12 instances crashing at once on one member, in whatever order their events arrive', async () => {
    const sim = await startSimulator({ instances: 0 });
    const names = Array.from({ length: 12 }, (_, i) => `c${String(i + 1).padStart(2, '0')}`);
    // Crashed for real: a stop counts as a crash only when the daemon reads the instance down.
    for (const name of names) sim.controls.addInstance({ name, status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
    const client = new InstanceClient(parseTarget(`unix://${sim.socketPath}`));
    const { rules } = await loadRulesFolder(resolve('rules'));
    const connection = redisClient();
    const outcome = async (order: string[]) => {
      const ks = keySpace(uniquePrefix('storm'));
      const actions = new Queue(ks.actionsQueue, { connection, prefix: ks.bullPrefix });
      const audit = new AuditLog(redis, ks.audit);
      const recording = recordingAlerts(audit);
      const processor = new EventProcessor({
        redis,
        keys: ks,
        client: () => client,
        tracker: new StateTracker(redis, ks),
        ownOperations: new OwnOperations(redis, ks),
        pending: new PendingActions(redis, ks, actions, { audit }),
        audit,
        engine: new RuleEngine(rules),
        gate: new ActionGate(redis, ks, new Silences(redis, ks.silences)),
        actions,
        logger: pino({ level: 'silent' }),
        alerts: recording.alerts,
      });
      for (const n of order) {
        const e = crash(n, 'node1');
        await processor.process({ kind: 'synthetic', target: e.target, event: e, receivedAt: Date.now() });
      }
      const queued = (await actions.getJobs(['waiting', 'delayed', 'prioritized'])).map((j) => j.data.instance as string).sort();
      const held = (await audit.read()).filter((r) => r.type === 'decision' && (r as { suppressed?: boolean }).suppressed).map((r) => r.instance);
      await actions.obliterate({ force: true });
      await actions.close();
      return { queued, held, alerts: recording.raised.map((a) => a.kind) };
    };
    try {
      const forward = await outcome(names);
      const backward = await outcome([...names].reverse());
      const shuffled = await outcome([...names].sort((a, b) => ((a.charCodeAt(2) * 7) % 5) - ((b.charCodeAt(2) * 7) % 5)));
      expect(forward).toEqual({ queued: names, held: [], alerts: [] });
      expect(backward).toEqual(forward);
      expect(shuffled).toEqual(forward);
    } finally {
      connection.disconnect();
      await client.close();
      await sim.stop();
    }
  });

  it('trips on failing remediations with the same outcome whatever the arrival order: every action not yet run is held, one alert', async () => {
    const outcome = async (wave2: string[]) => {
      const ks = keySpace(uniquePrefix('storm'));
      const metrics = new Metrics();
      const gate = new ActionGate(redis, ks, new Silences(redis, ks.silences), metrics, { storm: { threshold: 3, windowMs: 60_000 } });
      const rule = restart('r');
      const storms = gate.storms!;
      const all = ['a', 'b', 'c', 'd', 'e', 'f'];
      // Wave 1: six instances crash together; all are remediated and come back.
      const wave1 = await Promise.all(all.map((n) => gate.admit(rule, crash(n, 'm1'), ref(n), undefined)));
      for (const n of all) await storms.remediated(scope(n, 'r'));
      // Wave 2: four of them fail again (their remediation did not hold). At the moment of acting,
      // each admitted action asks whether its rule is now in a storm on the member.
      const verdicts = [];
      for (const n of wave2) verdicts.push(await gate.admit(rule, crash(n, 'm1'), ref(n), undefined));
      const acted = [];
      for (const [i, n] of wave2.entries()) if (verdicts[i]!.admitted && !(await storms.holds(scope(n, 'r')))) acted.push(n);
      return {
        wave1: wave1.every((v) => v.admitted),
        acted,
        alerts: verdicts.filter((v) => !v.admitted && v.alert).length,
        storms: (await metrics.storms.get()).values[0]?.value ?? 0,
      };
    };
    const orders = [
      ['a', 'b', 'c', 'd'],
      ['d', 'c', 'b', 'a'],
      ['b', 'd', 'a', 'c'],
    ];
    const results = [];
    for (const o of orders) results.push(await outcome(o));
    expect(results[0]).toEqual({ wave1: true, acted: [], alerts: 1, storms: 1 });
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
  });

  it('is per rule and per member: a rule whose remediations fail is held there, another rule on the same member and the same rule elsewhere are not', async () => {
    const ks = keySpace(uniquePrefix('storm'));
    const gate = new ActionGate(redis, ks, new Silences(redis, ks.silences), undefined, { storm: { threshold: 2, windowMs: 60_000 } });
    const storms = gate.storms!;
    // Two of rule "failing"'s actions gave up on member m1.
    expect(await storms.failed(scope('a', 'failing'), 'give-up:1')).toMatchObject({ storm: false, failures: 1 });
    expect(await storms.failed(scope('b', 'failing'), 'give-up:2')).toMatchObject({ storm: true, failures: 2, alert: true });
    const held = await gate.admit(restart('failing'), crash('c', 'm1'), ref('c'), undefined);
    expect(held).toMatchObject({
      admitted: false,
      summary: expect.stringContaining('storm: remediation by rule failing failed for 2 instances on member m1 within 60 s'),
    });
    expect(held).not.toHaveProperty('alert');
    expect(await gate.admit(restart('other'), crash('c', 'm1'), ref('c'), undefined)).toMatchObject({ admitted: true });
    expect(await gate.admit(restart('failing'), crash('x', 'm2'), ref('x'), undefined)).toMatchObject({ admitted: true });
    expect(await storms.holds(scope('c', 'failing'))).toBe(true);
    expect(await storms.holds(scope('c', 'other'))).toBe(false);
    expect(await storms.holds(scope('x', 'failing', 'm2'))).toBe(false);
    // Crash alerts of the member are grouped into the storm's; the other member's are not.
    expect(await gate.inStorm(crash('c', 'm1'))).toBe(true);
    expect(await gate.inStorm(crash('x', 'm2'))).toBe(false);
  });

  it('ends a storm once a whole window passes with fewer failing remediations; the next storm has its own alert', async () => {
    const ks = keySpace(uniquePrefix('storm'));
    const metrics = new Metrics();
    const gate = new ActionGate(redis, ks, new Silences(redis, ks.silences), metrics, { storm: { threshold: 2, windowMs: 400 } });
    const rule = restart('r');
    const storms = gate.storms!;
    const recrash = async (name: string) => {
      await storms.remediated(scope(name, 'r'));
      return gate.admit(rule, crash(name, 'm1'), ref(name), undefined);
    };
    const first = [await recrash('a'), await recrash('b'), await recrash('c')];
    expect(first.map((v) => v.admitted)).toEqual([true, false, false]);
    expect(first.filter((v) => !v.admitted && v.alert)).toHaveLength(1);
    // A crash of an instance the rule did not remediate is no failing remediation, but is held in the storm.
    expect(await gate.admit(rule, crash('fresh', 'm1'), ref('fresh'), undefined)).toMatchObject({ admitted: false });
    await until('a whole window with fewer failing remediations', async () => !(await storms.holds(scope('a', 'r'))), 5_000);
    const second = [await recrash('d'), await recrash('e')];
    expect(second.map((v) => v.admitted)).toEqual([true, false]);
    expect(second.filter((v) => !v.admitted && v.alert)).toHaveLength(1);
    expect((await metrics.storms.get()).values[0]?.value).toBe(2);
  });

  it('counts only failures: a stop requested through the API makes no failing remediation; storm control can be turned off', async () => {
    const ks = keySpace(uniquePrefix('storm'));
    const gate = new ActionGate(redis, ks, new Silences(redis, ks.silences), undefined, { storm: { threshold: 1, windowMs: 60_000 } });
    const rule = restart('r');
    for (const n of ['a', 'b', 'c']) {
      await gate.storms!.remediated(scope(n, 'r'));
      expect(await gate.admit(rule, crash(n, 'm1', { intent: 'requested' }), ref(n), undefined)).toMatchObject({ admitted: true });
    }
    const off = new ActionGate(redis, ks, new Silences(redis, ks.silences), undefined, { storm: false });
    expect(off.storms).toBeUndefined();
    for (const n of ['a', 'b', 'c']) expect(await off.admit(rule, crash(n, 'm1'), ref(n), undefined)).toMatchObject({ admitted: true });
  });
});
