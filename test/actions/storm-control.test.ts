import { resolve } from 'node:path';
import { Queue } from 'bullmq';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ActionGate } from '../../src/remediation/action-gate.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { OwnOperations } from '../../src/events/intent.js';
import { PendingActions } from '../../src/remediation/pending-actions.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import type { InstanceStatusEvent } from '../../src/events/canonical-event.js';
import { EventProcessor } from '../../src/remediation/event-processor.js';
import { keySpace } from '../../src/redis/key-space.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { loadRules } from '../../src/rules/rule-loader.js';
import { defineRule } from '../../src/rules/rule.js';
import { Silences } from '../../src/rules/silences.js';
import { startSimulator } from '../../src/simulator/simulator.js';
import { StateTracker } from '../../src/events/state-tracker.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

let seq = 0;
const crash = (instance: string, location: string, over: Partial<InstanceStatusEvent> = {}): InstanceStatusEvent => ({
  kind: 'instance.status', id: `crash-${++seq}-${instance}`, target: 'unix:///sim', location, project: 'default', timestamp: new Date().toISOString(),
  synthetic: false, instance, to: 102, intent: 'unrequested', action: 'instance-shutdown', ...over,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('storm control', () => {
  const redis = redisClient();
  afterAll(() => redis.disconnect());

  it('inhibits per-instance remediation and raises one grouped alert when many instances on one member fail', async () => {
    const sim = await startSimulator({ instances: 0 });
    const names = Array.from({ length: 12 }, (_, i) => `c${String(i + 1).padStart(2, '0')}`);
    // c01 has not opted in: no rule acts on it, but its failure still counts towards the storm.
    for (const name of names) sim.controls.addInstance({ name, config: name === 'c01' ? {} : { 'user.reflex.autorestart': 'true' } });
    sim.controls.addInstance({ name: 'elsewhere', config: { 'user.reflex.autorestart': 'true' } });
    const ks = keySpace(uniquePrefix('storm'));
    const connection = redisClient();
    const actions = new Queue(ks.actionsQueue, { connection, prefix: ks.bullPrefix });
    const client = new InstanceClient(parseTarget(`unix://${sim.socketPath}`));
    const audit = new AuditLog(redis, ks.audit);
    const alerts: { kind: string; summary: string; instance: string }[] = [];
    const { rules } = await loadRules(resolve('rules'));
    const processor = new EventProcessor({
      redis, keys: ks, client: () => client, tracker: new StateTracker(redis, ks), ownOperations: new OwnOperations(redis, ks), pending: new PendingActions(redis, ks, actions), audit,
      engine: new RuleEngine(rules), gate: new ActionGate(redis, ks, new Silences(redis, ks.silences)), actions, logger: pino({ level: 'silent' }),
      raiseAlert: async (a) => void alerts.push(a),
    });
    try {
      const events = names.map((n) => crash(n, 'node1'));
      for (const e of events) await processor.process({ kind: 'synthetic', target: e.target, event: e, receivedAt: Date.now() });
      // Another member is not in the storm; a redelivered event of the storm raises nothing new.
      const other = crash('elsewhere', 'node2');
      await processor.process({ kind: 'synthetic', target: other.target, event: other, receivedAt: Date.now() });
      await processor.process({ kind: 'synthetic', target: events[11]!.target, event: { ...events[11]! }, receivedAt: Date.now() + 1 });

      const queued = (await actions.getJobs(['waiting', 'delayed', 'prioritized'])).map((j) => j.data.instance as string).sort();
      expect(queued).toEqual(['c02', 'c03', 'c04', 'c05', 'c06', 'c07', 'c08', 'c09', 'elsewhere']);
      expect(alerts).toHaveLength(1);
      expect(alerts[0]).toMatchObject({ kind: 'storm', instance: 'member:node1', summary: expect.stringContaining('storm: 10 instances failed on member node1 within 60 s') });
      const records = await audit.read();
      expect(records.filter((r) => r.type === 'alert')).toHaveLength(1);
      const inhibited = records.filter((r) => r.type === 'decision' && (r as { suppressed?: boolean }).suppressed);
      expect(inhibited.map((r) => r.instance).sort()).toEqual(['c10', 'c11', 'c12']);
      expect(inhibited.every((r) => /^suppressed: storm: 1[0-2] instances failed on member node1 within 60 s/.test(r.summary))).toBe(true);
    } finally {
      await actions.close();
      connection.disconnect();
      await client.close();
      await sim.stop();
    }
  });

  it('ends a storm once a whole window passes with fewer failures; the next storm has its own alert', async () => {
    const ks = keySpace(uniquePrefix('storm'));
    const metrics = new Metrics();
    const gate = new ActionGate(redis, ks, new Silences(redis, ks.silences), metrics, { storm: { threshold: 3, windowMs: 400 } });
    const rule = defineRule({ name: 'r', on: { kind: 'instance.status' }, actions: [{ action: 'start' }] });
    const storms = async () => (await metrics.storms.get()).values[0]?.value ?? 0;
    const admit = (name: string) => gate.admit(rule, crash(name, 'm1'), { target: 'unix:///sim', project: 'default', instance: name }, undefined);
    const first = [await admit('a'), await admit('b'), await admit('c'), await admit('d')];
    expect(first.map((v) => v.admitted)).toEqual([true, true, false, false]);
    expect(first.filter((v) => !v.admitted && v.alert)).toHaveLength(1);
    // The same instance failing again is one instance, not two.
    expect(await admit('d')).toMatchObject({ admitted: false, summary: expect.stringContaining('storm: 4 instances') });
    await sleep(500);
    const second = [await admit('e'), await admit('f'), await admit('g')];
    expect(second.map((v) => v.admitted)).toEqual([true, true, false]);
    expect(second.filter((v) => !v.admitted && v.alert)).toHaveLength(1);
    expect(await storms()).toBe(2);
  });

  it('counts only failures: a stop requested through the API or a lifecycle event makes no storm', async () => {
    const ks = keySpace(uniquePrefix('storm'));
    const gate = new ActionGate(redis, ks, new Silences(redis, ks.silences), undefined, { storm: { threshold: 2, windowMs: 60_000 } });
    const rule = defineRule({ name: 'r', on: { kind: 'instance.status' }, actions: [{ action: 'start' }] });
    for (const n of ['a', 'b', 'c']) expect(await gate.admit(rule, crash(n, 'm1', { intent: 'requested' }), { target: 'unix:///sim', project: 'default', instance: n }, undefined)).toMatchObject({ admitted: true });
    const off = new ActionGate(redis, ks, new Silences(redis, ks.silences), undefined, { storm: false });
    for (const n of ['d', 'e', 'f']) expect(await off.admit(rule, crash(n, 'm1'), { target: 'unix:///sim', project: 'default', instance: n }, undefined)).toMatchObject({ admitted: true });
  });
});
