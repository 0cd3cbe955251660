import { Queue } from 'bullmq';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { InstanceClient } from '../../src/client/client.js';
import type { InstanceStatusEvent } from '../../src/events/canonical-event.js';
import { OwnOperations } from '../../src/events/own-operations.js';
import { StateTracker } from '../../src/events/state-tracker.js';
import { keySpace, type KeySpace } from '../../src/redis/key-space.js';
import { ActionGate } from '../../src/remediation/decide/action-gate.js';
import { CrashLoopBudget } from '../../src/remediation/crash-loop-budget.js';
import type { ActionJob } from '../../src/actions/action-job.js';
import { EventProcessor } from '../../src/remediation/decide/event-processor.js';
import { PendingActions } from '../../src/remediation/pending-actions.js';
import { checkHealRequest } from '../../src/remediation/heal-request.js';
import { queueHeal } from '../../src/remediation/operator-actions.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { defineRule, type CrashLoopPolicy } from '../../src/rules/rule.js';
import { Silences } from '../../src/silences/silences.js';
import { configFlag } from '../../src/rules/config-flag.js';
import type { RunningSimulator } from '../../src/simulator/simulator.js';
import { testExecutor } from '../support/executor.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { crashEvent } from '../support/crash-event.js';
import { fileSimulator } from '../support/file-simulator.js';
import { until } from '../support/wait.js';
import { crashThroughStopHook } from '../support/sim-crash.js';

/**
 * Issue 25, on the simulator: a remediation acts on the instance that had the incident, never on
 * whatever bears its name by then; the crash-loop budget and the quarantine belong to an instance,
 * so a new one under a reused name starts afresh. The same scenarios run on real LXD and Incus in
 * real-instance-identity.test.ts.
 */

const restartOnCrash = (crashLoop: CrashLoopPolicy = { maxRestarts: 5, initialBackoffMs: 60_000 }) =>
  defineRule({
    name: 'restart-on-crash',
    on: { kind: 'instance.status', to: [102], intent: ['unrequested'] },
    when: ({ instance }) => configFlag(instance, 'user.reflex.autorestart'),
    whenNot: 'instance has not opted in',
    actions: [{ action: 'start' }],
    crashLoop,
  });
const optIn = { 'user.reflex.autorestart': 'true' };

describe('the instance that had the incident, not its name: remediation on the simulator', () => {
  let sim: RunningSimulator;
  let client: InstanceClient;
  let target: string;
  const { redis, cleanups } = fileSimulator({ startMs: 20, stopMs: 20, stopHookMs: 20, taskMs: 10 }, (s) => ({ sim, client, target } = s));

  let seq = 0;
  const crash = (instance: string) => crashEvent(target, instance, { from: 103 });

  /** Event processor and executor of one test, on its own key space. */
  function pipeline(
    crashLoop?: CrashLoopPolicy,
    cooldownMs?: number,
  ): {
    keys: KeySpace;
    audit: AuditLog;
    actions: Queue;
    crashed: (name: string) => Promise<ActionJob | undefined>;
    renamedEvent: (from: string, to: string) => Promise<void>;
    /** Processes a crash event made earlier (the daemon's frame, judged late). */
    judge: (event: InstanceStatusEvent) => Promise<unknown>;
    act: (job: ActionJob) => Promise<unknown>;
  } {
    const keys = keySpace(uniquePrefix('ident'));
    const connection = redisClient();
    const actions = new Queue(keys.actionsQueue, { connection, prefix: keys.bullPrefix });
    const rule = { ...restartOnCrash(crashLoop), ...(cooldownMs ? { cooldownMs } : {}) };
    const { executor, close } = testExecutor(redis, keys, client, [rule]);
    cleanups.push(async () => {
      await close();
      await actions.close();
      connection.disconnect();
    });
    const audit = new AuditLog(redis, keys.audit);
    const processor = new EventProcessor({
      redis,
      keys,
      client: () => client,
      tracker: new StateTracker(redis, keys),
      ownOperations: new OwnOperations(redis, keys),
      audit,
      engine: new RuleEngine([rule]),
      gate: new ActionGate(redis, keys, new Silences(redis, keys.silences), undefined, { storm: false }),
      actions,
      pending: new PendingActions(redis, keys, actions, { audit }),
      logger: pino({ level: 'silent' }),
    });
    let acted = 0;
    return {
      keys,
      audit,
      actions,
      /** Processes the daemon's `instance-renamed` lifecycle event (the new name in source, the old in context). */
      async renamedEvent(from, to) {
        const event = {
          kind: 'lifecycle' as const,
          id: `renamed-${++seq}`,
          target,
          location: 'none',
          project: 'default',
          timestamp: new Date().toISOString(),
          synthetic: false,
          action: 'instance-renamed',
          source: `/1.0/instances/${to}`,
          instance: to,
          context: { old_name: from },
        };
        expect(await processor.process({ kind: 'synthetic', target, event, receivedAt: Date.now() })).toEqual(['processed']);
      },
      /** Processes a crash of the instance; answers the job it queued, if any. */
      async crashed(name) {
        // A crash is of a running instance: started (the daemon's last start moves past the stop
        // known before), then killed. A second stop frame with no start between is no crash.
        if (sim.controls.statusCode(name) !== 103) await (await client.changeState(name, { action: 'start' })).wait();
        await crashThroughStopHook(sim.controls, name);
        const event = crash(name);
        expect(await processor.process({ kind: 'synthetic', target, event, receivedAt: Date.now() })).toEqual(['processed']);
        const jobs = (await actions.getJobs(['waiting', 'delayed'])).filter((j) => (j.data as ActionJob).correlationId === event.id);
        return jobs[0]?.data as ActionJob | undefined;
      },
      judge: (event) => processor.process({ kind: 'synthetic', target, event, receivedAt: Date.now() }),
      act: (job) => executor.execute(job, `job-${++acted}`, 1, 1),
    };
  }

  const uuidOf = async (name: string) => (await client.getInstance(name)).value.config['volatile.uuid'];
  async function remove(name: string) {
    await (await client.deleteInstance(name)).wait({ timeoutMs: 5_000 });
  }
  async function rename(from: string, to: string) {
    await client.transport.request('POST', `/1.0/instances/${from}`, { body: { name: to } });
    await until(`${to} listed`, async () => (await client.listInstances({ recursion: 0 })).some((n) => n.endsWith(`/${to}`)), 5_000, 10);
  }

  it('skips a delayed restart as superseded when the instance was deleted and a new one created under its name, and leaves the new one stopped', async () => {
    sim.controls.addInstance({ name: 'recreated', status: 'Stopped', config: optIn });
    const { crashed, act, audit } = pipeline();
    const first = (await crashed('recreated'))!;
    expect(first.identity?.uuid, 'the job carries the identity of the instance that crashed').toBe(await uuidOf('recreated'));
    await act(first);
    await crashThroughStopHook(sim.controls, 'recreated');
    const delayed = (await crashed('recreated'))!;

    await remove('recreated');
    sim.controls.addInstance({ name: 'recreated', status: 'Stopped', config: optIn });
    const starts = sim.controls.calls('recreated', 'start');
    expect(await act(delayed)).toMatchObject({
      result: 'skipped',
      summary: expect.stringMatching(/^superseded: recreated is another instance now \(re-created \/ renamed\)/),
    });
    expect(sim.controls.calls('recreated', 'start'), 'no start of the new instance').toBe(starts);
    expect(sim.controls.statusCode('recreated')).toBe(102);
    const outcome = (await audit.read({ instance: 'recreated' })).filter((r) => r.type === 'outcome').at(-1);
    expect(outcome).toMatchObject({
      result: 'skipped',
      recheck: 'superseded',
      uuid: delayed.identity?.uuid,
      summary: expect.stringContaining('another instance'),
    });
  });

  it('skips a delayed restart as superseded when the instance was renamed and a new one created under its old name', async () => {
    sim.controls.addInstance({ name: 'renamed', status: 'Stopped', config: optIn });
    const { crashed, act } = pipeline({ maxRestarts: 5, initialBackoffMs: 60_000 });
    const job = (await crashed('renamed'))!;
    const starts = sim.controls.calls('renamed', 'start');
    const uuid = await uuidOf('renamed');
    await rename('renamed', 'renamed-old');
    expect(await uuidOf('renamed-old'), 'a rename keeps the uuid').toBe(uuid);
    sim.controls.addInstance({ name: 'renamed', status: 'Stopped', config: optIn });
    expect(await uuidOf('renamed'), 'a new instance under the name has a new uuid').not.toBe(uuid);

    expect(await act(job)).toMatchObject({ result: 'skipped', summary: expect.stringContaining('renamed is another instance now') });
    expect(sim.controls.calls('renamed', 'start')).toBe(starts);
    expect(sim.controls.calls('renamed-old', 'start')).toBe(0);
  });

  it("gives a new instance under a reused name a clean budget: its first crash gets restart 1 with no back-off, though its predecessor's history was at restart 2", async () => {
    sim.controls.addInstance({ name: 'reused', status: 'Stopped', config: optIn });
    const { crashed, audit } = pipeline();
    expect((await crashed('reused'))?.identity).toBeDefined();
    await crashed('reused');
    const before = (await audit.read({ instance: 'reused', type: 'decision' })).map((r) => r.summary);
    expect(before.at(-1), 'premise: the predecessor is in its back-off').toMatch(/restart 2 of the budget, after a back-off of 60000 ms/);

    await remove('reused');
    sim.controls.addInstance({ name: 'reused', status: 'Stopped', config: optIn });
    const job = (await crashed('reused'))!;
    const decision = (await audit.read({ instance: 'reused', type: 'decision' })).at(-1)!;
    expect(decision.summary).toMatch(/restart 1 of the budget$/);
    expect(decision).toMatchObject({ uuid: job.identity?.uuid });
  });

  it("does not hold a new instance under a reused name in its predecessor's quarantine", async () => {
    sim.controls.addInstance({ name: 'inherits', status: 'Stopped', config: optIn });
    const { crashed, act, audit, keys } = pipeline({ maxRestarts: 1, initialBackoffMs: 60_000 });
    await crashed('inherits');
    const tail = async () => (await audit.read({ instance: 'inherits', type: 'decision' })).at(-1)!.summary;
    expect(await crashed('inherits'), 'premise: the second crash is refused').toBeUndefined();
    expect(await tail()).toMatch(/quarantined: crash loop/);
    expect(await redis.exists(keys.quarantine({ target, project: 'default', instance: 'inherits' })), 'premise: the name is quarantined').toBe(1);

    await remove('inherits');
    sim.controls.addInstance({ name: 'inherits', status: 'Stopped', config: optIn });
    const job = (await crashed('inherits'))!;
    expect(await tail()).toMatch(/restart 1 of the budget$/);
    expect(await act(job)).toMatchObject({ result: 'done' });
    expect(sim.controls.statusCode('inherits')).toBe(103);
  });

  it('skips a restart at the moment of acting only for the instance a quarantine was imposed on, not for another under its name', async () => {
    sim.controls.addInstance({ name: 'held', status: 'Stopped', config: optIn });
    const { crashed, act, keys } = pipeline();
    const job = (await crashed('held'))!;
    const ref = { target, project: 'default', instance: 'held' };
    const budget = new CrashLoopBudget(redis);
    const budgetKeys = { restarts: keys.restarts(ref), quarantine: keys.quarantine(ref) };
    // Quarantined, as a crash loop leaves it, for another instance that bore the name.
    await budget.reserve(budgetKeys, 'predecessor', { maxRestarts: 0 }, Date.now(), 'an-earlier-instance');
    expect(await act(job)).toMatchObject({ result: 'done' });

    await crashThroughStopHook(sim.controls, 'held');
    await budget.release(budgetKeys);
    await budget.reserve(budgetKeys, 'itself', { maxRestarts: 0 }, Date.now(), job.identity!.uuid!);
    expect(await act({ ...job, correlationId: 'again', incidentAt: Date.now() })).toMatchObject({
      result: 'skipped',
      summary: expect.stringContaining('is quarantined'),
    });
  });

  it("takes a rename as the operator's decision: the delayed restart under the old name is removed, audited as superseded, and the budget goes with the instance to its new name", async () => {
    sim.controls.addInstance({ name: 'moving', status: 'Stopped', config: optIn });
    const { crashed, renamedEvent, audit, actions } = pipeline();
    await crashed('moving');
    const delayed = (await crashed('moving'))!;
    expect(
      (await actions.getJobs(['delayed'])).map((j) => j.id),
      'premise: the second restart waits',
    ).toHaveLength(1);
    await rename('moving', 'moved');
    await renamedEvent('moving', 'moved');

    expect(await actions.getJobs(['delayed']), 'the delayed restart is removed').toEqual([]);
    expect((await audit.read({ instance: 'moving', type: 'outcome' })).at(-1)).toMatchObject({
      correlationId: delayed.correlationId,
      result: 'skipped',
      recheck: 'superseded',
      summary: expect.stringContaining('moving was renamed to moved'),
    });
    await crashed('moved');
    expect((await audit.read({ instance: 'moved', type: 'decision' })).at(-1)!.summary, 'the renamed instance keeps its history').toMatch(
      /restart 3 of the budget, after a back-off of 120000 ms/,
    );
  });

  it("does not hold a new instance under a reused name in its predecessor's cooldown", async () => {
    sim.controls.addInstance({ name: 'cooled', status: 'Stopped', config: optIn });
    const { crashed, audit } = pipeline(undefined, 600_000);
    expect(await crashed('cooled')).toBeDefined();
    expect(await crashed('cooled'), 'premise: the same instance is in the cooldown').toBeUndefined();
    await remove('cooled');
    sim.controls.addInstance({ name: 'cooled', status: 'Stopped', config: optIn });
    expect(await crashed('cooled'), (await audit.read({ instance: 'cooled', type: 'decision' })).map((r) => r.summary).join('\n')).toBeDefined();
  });

  it("starts, on an operator's heal, the instance the operator asked about and not one made under its name since", async () => {
    sim.controls.addInstance({ name: 'healed-anew', status: 'Stopped', config: optIn });
    const { audit, actions, act } = pipeline();
    // As `reflex heal` and the console queue it: the request is checked (the instance read), then queued.
    const asked = async () => {
      const checked = await checkHealRequest([{ id: target, name: 'sim', client }], { target, project: 'default', instance: 'healed-anew' });
      if ('problem' in checked) throw new Error(checked.error);
      const { jobId } = await queueHeal({ queue: actions, audit }, checked.ref, { origin: 'cli', actor: 'alice' }, checked.identity);
      return (await actions.getJob(jobId))!.data as ActionJob;
    };
    const first = await asked();
    const meant = await uuidOf('healed-anew');
    await remove('healed-anew');
    sim.controls.addInstance({ name: 'healed-anew', status: 'Stopped' });
    expect(await act(first)).toMatchObject({
      result: 'skipped',
      summary: expect.stringContaining('the instance the operator asked to heal had volatile.uuid'),
    });
    expect(sim.controls.calls('healed-anew', 'start'), 'the new instance under the name is not started').toBe(0);
    const trail = await audit.read({ instance: 'healed-anew' });
    expect(trail.find((r) => r.type === 'decision' && r.rule === 'heal')?.uuid, 'the heal is audited with the instance it was asked for').toBe(meant);
    // Asked again, now about the new instance: it starts.
    expect(await act(await asked())).toMatchObject({ result: 'done' });
    expect(sim.controls.statusCode('healed-anew')).toBe(103);
  });

  const alertsOf = async (audit: AuditLog, name: string) =>
    (await audit.read({ instance: name })).filter((r) => r.type === 'alert' && r.resolved !== true);

  it('alerts, under its new name, an instance renamed while its restart waited out a back-off, and starts nothing', async () => {
    sim.controls.addInstance({ name: 'wander', status: 'Stopped', config: optIn });
    const { crashed, renamedEvent, actions, audit, act } = pipeline({ maxRestarts: 5, initialBackoffMs: 60_000 });
    const first = (await crashed('wander'))!;
    await act(first);
    const job = (await crashed('wander'))!;
    expect(job, 'a delayed restart').toBeDefined();
    await rename('wander', 'wander-new');
    await renamedEvent('wander', 'wander-new');

    expect(
      (await actions.getJobs(['waiting', 'delayed'])).filter((j) => (j.data as ActionJob).correlationId === job.correlationId),
      'restart cancelled',
    ).toEqual([]);
    const alerts = await alertsOf(audit, 'wander-new');
    expect(alerts, 'one alert under the new name').toHaveLength(1);
    expect(alerts[0]).toMatchObject({ kind: 'instance.crashed', severity: 'critical' });
    expect(alerts[0]!.summary).toMatch(/^wander-new \(renamed from wander\) stopped without a request and was renamed before Reflex healed it/);
    expect(sim.controls.calls('wander-new', 'start')).toBe(0);
  });

  it('alerts, under its new name, an instance renamed during the stop hook of its crash, before the crash event was judged (the old name reads 404)', async () => {
    sim.controls.addInstance({ name: 'hooked', status: 'Running', config: optIn });
    const { renamedEvent, judge, actions, audit } = pipeline();
    await crashThroughStopHook(sim.controls, 'hooked');
    const stop = crash('hooked'); // the daemon's frame, dated before the rename
    await rename('hooked', 'hooked-new');
    // The rename's event is judged first: the old name's last word is still Running, nothing to say yet.
    await renamedEvent('hooked', 'hooked-new');
    expect(await alertsOf(audit, 'hooked-new')).toEqual([]);
    expect(await judge(stop)).toEqual(['contradicted']);

    const alerts = await alertsOf(audit, 'hooked-new');
    expect(alerts, 'one alert under the new name').toHaveLength(1);
    expect(alerts[0]!.summary).toMatch(/^hooked-new \(renamed from hooked\) stopped without a request/);
    expect(await actions.getJobs(['waiting', 'delayed'])).toEqual([]);
    expect(sim.controls.calls('hooked-new', 'start')).toBe(0);
  });

  it('alerts nothing for a stop of a renamed instance dated after its rename (forged or stale: the instance was renamed stopped)', async () => {
    sim.controls.addInstance({ name: 'calm', status: 'Stopped', config: optIn });
    const { renamedEvent, judge, audit } = pipeline();
    await rename('calm', 'calm-new');
    await renamedEvent('calm', 'calm-new');
    expect(await judge(crash('calm'))).toEqual(['contradicted']);
    expect((await alertsOf(audit, 'calm-new')).filter((a) => a.kind !== 'event.contradicted')).toEqual([]);
  });

  it("lets the operator's stop sent after their heal was asked win: the heal starts nothing, and a heal asked after the stop starts it", async () => {
    sim.controls.addInstance({ name: 'heal-then-stop', status: 'Running', config: optIn });
    const { judge, act } = pipeline();
    const healAsked = (at: number, id: string) =>
      ({
        rule: 'heal',
        action: 'start',
        params: {},
        target,
        project: 'default',
        instance: 'heal-then-stop',
        correlationId: `heal:${id}`,
        incidentAt: at,
        origin: 'operator',
        dryRun: false,
      }) as ActionJob;
    const first = healAsked(Date.now() - 50, 'first');
    await (await client.changeState('heal-then-stop', { action: 'stop' })).wait({ timeoutMs: 5_000 });
    const stop = crashEvent(target, 'heal-then-stop', { intent: 'requested', action: 'instance-stopped', from: 103 });
    expect(await judge(stop)).toEqual(['processed']);

    expect(await act(first)).toMatchObject({ result: 'skipped', summary: expect.stringContaining('after the heal was asked') });
    expect(sim.controls.calls('heal-then-stop', 'start'), 'the heal asked before the stop starts nothing').toBe(0);
    expect(await act(healAsked(Date.now(), 'second'))).toMatchObject({ result: 'done' });
    expect(sim.controls.statusCode('heal-then-stop')).toBe(103);
  });
});
