import { resolve } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ActionExecutor } from '../../src/remediation/action-executor.js';
import { ActionGate } from '../../src/remediation/action-gate.js';
import { runAction } from '../../src/actions/define-action.js';
import { builtinActions } from '../../src/actions/registry.js';
import { testExecutor } from '../support/executor.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { InstanceClient } from '../../src/client/client.js';
import type { Instance } from '../../src/client/instance.js';
import { parseTarget } from '../../src/client/target.js';
import type { CanonicalEvent } from '../../src/events/canonical-event.js';
import { decodeFrame } from '../../src/events/frame.js';
import { normalizeFrame } from '../../src/events/normalize.js';
import { keySpace } from '../../src/redis/key-space.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { loadRules } from '../../src/rules/rule-loader.js';
import { Silences } from '../../src/rules/silences.js';
import { startSimulator } from '../../src/simulator/simulator.js';
import { capturedFrames } from '../support/fixture-events.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

/** The recorded LXD 5.0.2 events of one instance, typed, in capture order. */
function recorded(instance: string, pick: (e: CanonicalEvent) => boolean): CanonicalEvent[] {
  return capturedFrames()
    .map((raw) => decodeFrame(raw))
    .flatMap((d) => (d.ok ? [normalizeFrame(d.frame, 't')] : []))
    .filter((e): e is CanonicalEvent => !!e && 'instance' in e && e.instance === instance && pick(e));
}

const inst = (config: Record<string, string>): Instance => ({ name: 'research-a', status: 'Stopped', status_code: 102, config });

describe('the example rule catalogue, replayed against recorded events', async () => {
  const { rules, errors } = await loadRules(resolve('rules/examples'));
  const redis = redisClient();
  afterAll(() => redis.disconnect());
  const byName = (n: string) => new RuleEngine(rules.filter((r) => r.name === n));

  it('loads every example', () => {
    expect(errors).toEqual([]);
    expect(rules.map((r) => r.name).sort()).toEqual(['example-announce-crash', 'example-hold-on-repeated-error', 'example-notify-on-failed-operation', 'example-quarantine-after-crash-loop', 'example-restart-on-crash', 'example-snapshot-after-crash', 'example-snapshot-on-config-update']);
  });

  it('01 restarts a web-tier instance after the recorded kill -9 and guest poweroff, never after the recorded lxc stop', async () => {
    const engine = byName('example-restart-on-crash');
    const stops = recorded('research-a', (e) => e.kind === 'instance.status' && e.to === 102);
    const decisions = await Promise.all(stops.map(async (e) => (await engine.decide(e, inst({ 'user.tier': 'web' })))[0]));
    const matched = stops.filter((_, i) => decisions[i]?.matched).map((e) => (e.kind === 'instance.status' ? e.action : ''));
    expect(matched).toEqual(['instance-shutdown', 'instance-shutdown', 'instance-shutdown']); // kill -9, poweroff, reboot's shutdown
    expect(decisions.filter((d) => d && !d.matched).every((d) => d!.summary.includes('intent is requested'))).toBe(true);
    const other = await engine.decide(stops.find((e) => e.kind === 'instance.status' && e.intent === 'unrequested')!, inst({ 'user.tier': 'db' }));
    expect(other[0]?.summary).toContain('out of scope');
  });

  it('02 snapshots once per cooldown on the recorded config updates, and the snapshot is taken', async () => {
    const engine = byName('example-snapshot-on-config-update');
    const updates = recorded('research-b', (e) => e.kind === 'lifecycle' && e.action === 'instance-updated');
    expect(updates.length).toBeGreaterThanOrEqual(3);
    const ks = keySpace(uniquePrefix());
    const gate = new ActionGate(redis, ks, new Silences(redis, ks.silences));
    const admitted = [];
    for (const e of updates) {
      const [d] = await engine.decide(e, inst({ 'user.reflex.snapshot-on-update': 'true' }));
      if (d?.matched) admitted.push((await gate.admit(d.definition, e, { target: 't', project: 'default', instance: 'research-b' }, undefined)).admitted);
    }
    expect(admitted.filter(Boolean)).toHaveLength(1);

    const sim = await startSimulator({ instances: 0, timings: { taskMs: 10 } });
    try {
      sim.controls.addInstance({ name: 'research-b', config: { 'user.reflex.snapshot-on-update': 'true' } });
      const client = new InstanceClient(parseTarget(`unix://${sim.socketPath}`));
      const rule = rules.find((r) => r.name === 'example-snapshot-on-config-update')!;
      const { executor, close } = testExecutor(redis, ks, client, [rule]);
      const outcome = await executor.execute({ rule: rule.name, action: 'snapshot', params: rule.actions[0]!.params ?? {}, target: 't', project: 'default', instance: 'research-b', correlationId: 'c', origin: 'rule', dryRun: false }, 'job-1', 1, 1);
      await close();
      expect(outcome).toMatchObject({ result: 'done' });
      const snaps = await client.listSnapshots('research-b');
      expect(snaps).toHaveLength(1);
      expect(snaps[0]!.name).toMatch(/^before-next-change-\d{8}-\d{6}$/);
      expect(new Date(String(snaps[0]!.expires_at)).getTime()).toBeGreaterThan(Date.now() + 6 * 86_400_000);
      await client.close();
    } finally {
      await sim.stop();
    }
  });

  it('03 restarts the first Error and holds a repeated one with a single alert', async () => {
    const engine = byName('example-hold-on-repeated-error');
    const ks = keySpace(uniquePrefix());
    const gate = new ActionGate(redis, ks, new Silences(redis, ks.silences));
    const error = (id: string): CanonicalEvent => ({ kind: 'instance.status', id, target: 't', location: 'none', project: 'default', timestamp: new Date().toISOString(), synthetic: true, instance: 'research-a', from: 103, to: 112, intent: 'unknown' });
    const verdicts = [];
    for (const id of ['e1', 'e2', 'e3']) {
      const [d] = await engine.decide(error(id), inst({ 'user.reflex.on-error': 'restart-once' }));
      expect(d?.matched).toBe(true);
      if (d?.matched) verdicts.push(await gate.admit(d.definition, error(id), { target: 't', project: 'default', instance: 'research-a' }, undefined));
    }
    expect(verdicts.map((v) => v.admitted)).toEqual([true, false, false]);
    expect(verdicts.filter((v) => !v.admitted && v.alert)).toHaveLength(1);
  });

  it('04 notifies about the recorded failed operations (bad init, stop timeout), not about the successful ones', async () => {
    const engine = byName('example-notify-on-failed-operation');
    const ops = capturedFrames()
      .map((raw) => decodeFrame(raw))
      .flatMap((d) => (d.ok ? [normalizeFrame(d.frame, 't')] : []))
      .filter((e): e is CanonicalEvent => !!e && e.kind === 'operation.status');
    const matched = [];
    for (const e of ops) if ((await engine.decide(e, undefined))[0]?.matched) matched.push(e);
    expect(matched.length).toBeGreaterThanOrEqual(2);
    expect(matched.every((e) => e.kind === 'operation.status' && e.to === 400 && e.err !== '')).toBe(true);
    expect(ops.filter((e) => e.kind === 'operation.status' && e.to === 200).length).toBeGreaterThan(matched.length);
  });

  it('05 quarantines after the recorded crash loop of c1 (five unrequested shutdowns) with one alert', async () => {
    const engine = byName('example-quarantine-after-crash-loop');
    const crashes = recorded('c1', (e) => e.kind === 'instance.status' && e.to === 102 && e.intent === 'unrequested');
    expect(crashes.length).toBeGreaterThanOrEqual(5);
    const ks = keySpace(uniquePrefix());
    const gate = new ActionGate(redis, ks, new Silences(redis, ks.silences));
    const verdicts = [];
    for (const e of crashes.slice(0, 5)) {
      const [d] = await engine.decide(e, inst({ 'user.reflex.crash-loop-guard': 'true' }));
      if (d?.matched) verdicts.push(await gate.admit(d.definition, e, { target: 't', project: 'default', instance: 'c1' }, undefined));
    }
    expect(verdicts.map((v) => v.admitted)).toEqual([true, true, true, false, false]);
    expect(verdicts.map((v) => (v.admitted ? v.delayMs : -1))).toEqual([0, 10_000, 20_000, -1, -1]);
    expect(verdicts.filter((v) => !v.admitted && v.alert)).toHaveLength(1);
  });

  it('06 announces the recorded kill -9 with a follow-up event, and the other rule snapshots on it', async () => {
    const crash = recorded('research-a', (e) => e.kind === 'instance.status' && e.intent === 'unrequested')[0]!;
    const [announce] = await byName('example-announce-crash').decide(crash, inst({ 'user.reflex.keep-crash-evidence': 'true' }));
    expect(announce).toMatchObject({ matched: true, actions: [{ action: 'emit', params: { name: 'instance.crashed' } }] });
    const published: CanonicalEvent[] = [];
    const ctx = { client: undefined as never, instance: 'research-a', params: { name: 'instance.crashed' }, dryRun: false, call: async () => undefined, audit: async () => undefined,
      job: { rule: 'example-announce-crash', correlationId: crash.id, target: 't', project: 'default', location: 'none', chain: [] }, publish: async (e: CanonicalEvent) => void published.push(e) };
    expect(await runAction(builtinActions.get('emit'), ctx)).toMatchObject({ result: 'done' });
    const [snapshot] = await byName('example-snapshot-after-crash').decide(published[0]!, inst({}));
    expect(snapshot).toMatchObject({ matched: true, actions: [{ action: 'snapshot' }] });
    expect(await byName('example-announce-crash').decide(crash, inst({}))).toMatchObject([{ matched: false }]);
  });
});
