import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ActionExecutor } from '../../src/remediation/action-executor.js';
import { ActionGate } from '../../src/remediation/decide/action-gate.js';
import { runAction } from '../../src/actions/define-action.js';
import { builtinActions } from '../../src/actions/registry.js';
import { testExecutor } from '../support/executor.js';
import { startActionBed, type ActionBed } from '../actions/action-bed.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { InstanceClient } from '../../src/client/client.js';
import type { Instance } from '../../src/client/instance.js';
import { parseTarget } from '../../src/client/target.js';
import type { CanonicalEvent } from '../../src/events/canonical-event.js';
import { decodeFrame } from '../../src/events/frame.js';
import { normalizeFrame } from '../../src/events/normalize.js';
import { keySpace } from '../../src/redis/key-space.js';
import { ActingTransport } from '../../src/client/acting-transport.js';
import { callAction } from '../../src/remediation/act/acting-client.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { approvalOf } from '../../src/rules/rule.js';
import { loadRulesFolder } from '../../src/rules/rules-folder.js';
import { Silences } from '../../src/silences/silences.js';
import type { SeedInstance } from '../../src/simulator/controls.js';
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

/** Queues `job` on research-a as its rule queues it for the recorded `event`, whose id is the incident's. */
const queueFor = (bed: ActionBed, event: CanonicalEvent, job: Pick<Parameters<ActionBed['queue']>[0], 'rule' | 'action' | 'params' | 'onFailure'>) =>
  bed.queue({ ...job, instance: 'research-a', origin: 'rule', event, correlationId: event.id });

const inst = (config: Record<string, string>): Instance => ({ name: 'research-a', status: 'Stopped', status_code: 102, config });

describe('the example rule catalogue, replayed against recorded events', async () => {
  const { rules, errors, actions } = await loadRulesFolder(resolve('rules/examples'));
  const redis = redisClient();
  afterAll(() => redis.disconnect());
  const byName = (n: string) => new RuleEngine(rules.filter((r) => r.name === n));
  /** An action bed with the catalogue's rules and actions and one instance, `seed`. */
  const catalogueBedWith = async (seed: SeedInstance) => {
    const bed = await startActionBed({ rules, actions, instances: [] });
    bed.sim.controls.addInstance(seed);
    return bed;
  };

  it('loads every example', () => {
    expect(errors).toEqual([]);
    expect(rules.map((r) => r.name).sort()).toEqual(
      [
        'example-announce-crash',
        'example-hold-on-repeated-error',
        'example-exec-then-restart',
        'example-http-runbook',
        'example-notify-on-failed-operation',
        'example-quarantine-after-crash-loop',
        'example-restart-on-crash',
        'example-restart-with-approval',
        'example-snapshot-after-crash',
        'example-snapshot-on-config-update',
        'example-stamp-crash',
        'example-alert-high-memory',
        'example-heal-unhealthy-service',
        'example-notify-unhealthy',
      ].sort(),
    );
  });

  it('01 restarts a web-tier instance after the recorded kill -9 and guest poweroff, never after the recorded lxc stop', async () => {
    const engine = byName('example-restart-on-crash');
    const stops = recorded('research-a', (e) => e.kind === 'instance.status' && e.to === 102);
    const decisions = await Promise.all(stops.map(async (e) => (await engine.decide(e, inst({ 'user.tier': 'web' })))[0]));
    const matched = stops.filter((_, i) => decisions[i]?.matched).map((e) => (e.kind === 'instance.status' ? e.action : ''));
    expect(matched).toEqual(['instance-shutdown', 'instance-shutdown', 'instance-shutdown']); // kill -9, poweroff, reboot's shutdown
    expect(decisions.filter((d) => d && !d.matched).every((d) => d!.summary.includes('intent is requested'))).toBe(true);
    const other = await engine.decide(
      stops.find((e) => e.kind === 'instance.status' && e.intent === 'unrequested')!,
      inst({ 'user.tier': 'db' }),
    );
    expect(other[0]?.summary).toContain('out of scope');
  });

  it('12 holds the start of a crashed db-tier instance for an operator of 15 minutes, never after the recorded lxc stop', async () => {
    const engine = byName('example-restart-with-approval');
    const stops = recorded('research-a', (e) => e.kind === 'instance.status' && e.to === 102);
    const decisions = await Promise.all(stops.map(async (e) => (await engine.decide(e, inst({ 'user.tier': 'db' })))[0]));
    expect(decisions.filter((d) => d?.matched)).toHaveLength(3); // kill -9, poweroff, reboot's shutdown
    const matched = decisions.find((d) => d?.matched)!;
    expect(matched.matched && approvalOf(matched.definition)).toEqual({ role: 'operator', timeoutMs: 15 * 60_000 });
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
      if (d?.matched)
        admitted.push((await gate.admit(d.definition, e, { target: 't', project: 'default', instance: 'research-b' }, undefined)).admitted);
    }
    expect(admitted.filter(Boolean)).toHaveLength(1);

    const sim = await startSimulator({ instances: 0, timings: { taskMs: 10 } });
    try {
      sim.controls.addInstance({ name: 'research-b', config: { 'user.reflex.snapshot-on-update': 'true' } });
      const client = new InstanceClient(parseTarget(`unix://${sim.socketPath}`));
      const rule = rules.find((r) => r.name === 'example-snapshot-on-config-update')!;
      const { executor, close } = testExecutor(redis, ks, client, [rule]);
      const outcome = await executor.execute(
        {
          rule: rule.name,
          action: 'snapshot',
          params: rule.actions[0]!.params ?? {},
          target: 't',
          project: 'default',
          instance: 'research-b',
          correlationId: 'c',
          origin: 'rule',
          dryRun: false,
        },
        'job-1',
        1,
        1,
      );
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
    const error = (id: string): CanonicalEvent => ({
      kind: 'instance.status',
      id,
      target: 't',
      location: 'none',
      project: 'default',
      timestamp: new Date().toISOString(),
      synthetic: true,
      instance: 'research-a',
      from: 103,
      to: 112,
      intent: 'unknown',
    });
    const verdicts = [];
    for (const id of ['e1', 'e2', 'e3']) {
      const [d] = await engine.decide(error(id), inst({ 'user.reflex.on-error': 'restart-once' }));
      expect(d?.matched).toBe(true);
      if (d?.matched)
        verdicts.push(await gate.admit(d.definition, error(id), { target: 't', project: 'default', instance: 'research-a' }, undefined));
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
    const ctx = {
      client: undefined as never,
      instance: 'research-a',
      params: { name: 'instance.crashed' },
      dryRun: false,
      clientNoting: () => undefined as never,
      audit: async () => undefined,
      job: { rule: 'example-announce-crash', correlationId: crash.id, target: 't', project: 'default', location: 'none', chain: [] },
      publish: async (e: CanonicalEvent) => void published.push(e),
    };
    expect(await runAction(builtinActions.get('emit'), ctx)).toMatchObject({ result: 'done' });
    const [snapshot] = await byName('example-snapshot-after-crash').decide(published[0]!, inst({}));
    expect(snapshot).toMatchObject({ matched: true, actions: [{ action: 'snapshot' }] });
    expect(await byName('example-announce-crash').decide(crash, inst({}))).toMatchObject([{ matched: false }]);
  });

  it('07 on the recorded guest reboot runs the service restart in the guest; it fails, and the onFailure branch restarts the instance once', async () => {
    const engine = byName('example-exec-then-restart');
    const restarts = recorded('research-a', (e) => e.kind === 'instance.status' && e.action === 'instance-restarted');
    const decisions = await Promise.all(restarts.map(async (e) => (await engine.decide(e, inst({ 'user.reflex.service-check': 'true' })))[0]));
    // The guest's own reboot, not the recorded `lxc restart -f` (requested).
    expect(restarts.filter((_, i) => decisions[i]?.matched).map((e) => e.kind === 'instance.status' && e.intent)).toEqual(['unrequested']);
    const reboot = restarts.find((_, i) => decisions[i]?.matched)!;
    const spec = engine.rule('example-exec-then-restart')!.actions[0]!;
    const bed = await catalogueBedWith({ name: 'research-a', status: 'Running', config: { 'user.reflex.service-check': 'true' } });
    try {
      const id = await queueFor(bed, reboot, {
        rule: 'example-exec-then-restart',
        action: 'exec',
        params: spec.params ?? {},
        onFailure: spec.onFailure?.map((b) => ({ action: b.action, params: b.params ?? {} })),
      });
      const records = await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'outcome' && String(r.summary).startsWith('restart')));
      // busybox (and the simulator) have no systemctl: the shell's 127, its complaint on stderr.
      expect(records.find((r) => r.type === 'call' && r.exitCode !== undefined)).toMatchObject({
        exitCode: 127,
        stderr: 'sh: systemctl: not found\n',
        timedOut: false,
      });
      expect(records.find((r) => r.type === 'outcome' && r.code === 'EXEC_FAILED')).toBeDefined();
      expect(records.find((r) => r.type === 'outcome' && String(r.summary).startsWith('restart'))).toMatchObject({ result: 'done' });
      expect(records.filter((r) => r.type === 'give-up' || r.type === 'alert')).toEqual([]);
    } finally {
      await bed.stop();
    }
  });

  it('08 starts the crashed instance and posts the runbook call, its URL and token read from the environment', async () => {
    const crash = recorded('research-a', (e) => e.kind === 'instance.status' && e.intent === 'unrequested')[0]!;
    const [d] = await byName('example-http-runbook').decide(crash, inst({ 'user.reflex.runbook': 'true', 'user.tier': 'web' }));
    expect(d).toMatchObject({ matched: true, actions: [{ action: 'start' }, { action: 'http' }] });
    const got: { headers: Record<string, unknown>; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        res.end('{"accepted":true}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    process.env.RUNBOOK_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/runbooks`;
    process.env.RUNBOOK_TOKEN = 'Bearer example-token-0123';
    const bed = await catalogueBedWith({ name: 'research-a', status: 'Running', config: { 'user.reflex.runbook': 'true', 'user.tier': 'web' } });
    try {
      const http = d!.matched ? d!.actions[1]! : undefined;
      const id = await queueFor(bed, crash, {
        rule: 'example-http-runbook',
        action: 'http',
        params: http!.params ?? {},
      });
      const records = await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'outcome'));
      expect(records.find((r) => r.type === 'outcome')).toMatchObject({ result: 'done' });
      expect(got).toHaveLength(1);
      expect(got[0]!.headers.authorization).toBe('Bearer example-token-0123');
      expect(JSON.parse(got[0]!.body)).toEqual({
        runbook: 'instance-crashed',
        instance: 'research-a',
        project: 'default',
        status: 'Running',
        tier: 'web',
        crashedAt: crash.timestamp,
        incident: crash.id,
      });
      expect(JSON.stringify(records)).not.toContain('example-token-0123');
    } finally {
      delete process.env.RUNBOOK_URL;
      delete process.env.RUNBOOK_TOKEN;
      await bed.stop();
      server.close();
    }
  });

  it('09 runs the user-defined action on the recorded kill -9: the crash time is stamped into the config, under the lock, audited', async () => {
    const crash = recorded('research-a', (e) => e.kind === 'instance.status' && e.intent === 'unrequested')[0]!;
    expect(actions.userDefined().map((a) => a.name)).toContain('example-stamp-crash');
    const [d] = await byName('example-stamp-crash').decide(crash, inst({ 'user.reflex.stamp-crashes': 'true' }));
    expect(d).toMatchObject({ matched: true, actions: [{ action: 'example-stamp-crash', params: { key: 'user.reflex.last-crash' } }] });
    const bed = await catalogueBedWith({ name: 'research-a', status: 'Stopped', config: { 'user.reflex.stamp-crashes': 'true' } });
    try {
      const id = await queueFor(bed, crash, {
        rule: 'example-stamp-crash',
        action: 'example-stamp-crash',
        params: { key: 'user.reflex.last-crash' },
      });
      const records = await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'outcome'));
      expect(records.filter((r) => r.type !== 'action').map((r) => [r.type, r.method ?? r.result])).toEqual([
        ['call', 'PATCH'],
        ['outcome', 'done'],
      ]);
      expect((await bed.client.getInstance('research-a')).value.config['user.reflex.last-crash']).toBe(crash.timestamp);
    } finally {
      await bed.stop();
    }
  });

  it('10 answers a HighMemory alert for an opted-in instance: snapshot, then restart, then a word to the receivers, each once', async () => {
    const engine = byName('example-alert-high-memory');
    const alert = (status: 'firing' | 'resolved', alertname = 'HighMemory'): CanonicalEvent => ({
      kind: 'alert',
      id: `a-${status}-${alertname}`,
      target: 't',
      location: 'none',
      project: 'default',
      timestamp: new Date().toISOString(),
      synthetic: false,
      source: 'alertmanager',
      alertname,
      status,
      labels: { alertname, instance: 'web-1' },
      annotations: { summary: 'web-1 uses 97% of its memory' },
      startsAt: new Date().toISOString(),
      fingerprint: 'f1',
      instance: 'web-1',
    });
    const optedIn = { ...inst({ 'user.reflex.on-high-memory': 'restart' }), name: 'web-1' };
    expect(await engine.decide(alert('firing'), optedIn)).toMatchObject([{ matched: true, actions: [{ action: 'example-snapshot-restart-tell' }] }]);
    expect(await engine.decide(alert('resolved'), optedIn)).toEqual([]);
    expect(await engine.decide(alert('firing', 'HighLoad'), optedIn)).toEqual([]);
    expect((await engine.decide(alert('firing'), inst({})))[0]?.summary).toContain('out of scope');

    const sim = await startSimulator({ instances: 0, timings: { taskMs: 10, startMs: 20, stopMs: 20 } });
    const client = new InstanceClient(parseTarget(`unix://${sim.socketPath}`));
    try {
      sim.controls.addInstance({ name: 'web-1', status: 'Running', config: { 'user.reflex.on-high-memory': 'restart' } });
      const steps: string[] = [];
      const told: string[] = [];
      const event = alert('firing');
      // The acting client's transport sees every mutating call the action sends.
      const acting = client.through(
        new ActingTransport(client.transport, { send: (req, send) => (steps.push(callAction(req, { action: 'other' })), send()) }),
      );
      const ctx = {
        client: acting,
        instance: 'web-1',
        params: {},
        dryRun: false,
        audit: async () => undefined,
        job: { rule: 'example-alert-high-memory', correlationId: event.id, target: 't', project: 'default', location: 'none', chain: [], event },
        notifier: {
          notify: async (a: { summary: string }) => (
            steps.push('notify'),
            told.push(a.summary),
            { kind: 'k', severity: 'warning', fingerprint: 'f' }
          ),
        },
      };
      const action = actions.get('example-snapshot-restart-tell');
      expect(await runAction(action, ctx as never)).toMatchObject({ result: 'done', summary: expect.stringContaining('restarted, told') });
      expect(steps).toEqual(['snapshot', 'restart', 'notify']);
      expect(told[0]).toMatch(/^web-1 restarted after web-1 uses 97% of its memory; memory evidence kept in snapshot high-memory-/);
      expect((await client.listSnapshots('web-1')).map((s) => s.name)).toEqual([`high-memory-${event.id.slice(0, 12)}`]);
      // A retry of the job (the notification failed, say): neither the snapshot nor the restart again.
      steps.length = 0;
      expect(await runAction(action, ctx as never)).toMatchObject({
        result: 'done',
        summary: expect.stringContaining('(taken before), restarted before'),
      });
      expect(steps).toEqual(['notify']);
    } finally {
      await client.close();
      await sim.stop();
    }
  });
});
