import { Queue } from 'bullmq';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { InstanceClient } from '../../src/client/client.js';
import type { CanonicalEvent, InstanceStatusEvent } from '../../src/events/canonical-event.js';
import type { EventItem } from '../../src/events/event-job.js';
import { OwnOperations } from '../../src/events/own-operations.js';
import { StateTracker } from '../../src/events/state-tracker.js';
import { keySpace, type KeySpace } from '../../src/redis/key-space.js';
import { ActionGate } from '../../src/remediation/decide/action-gate.js';
import type { ActionJob } from '../../src/actions/action-job.js';
import { EventProcessor } from '../../src/remediation/decide/event-processor.js';
import { PendingActions } from '../../src/remediation/pending-actions.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { defineRule, type Rule } from '../../src/rules/rule.js';
import { Silences } from '../../src/silences/silences.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { parseTarget } from '../../src/client/target.js';
import { testExecutor } from '../support/executor.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { crashEvent } from '../support/crash-event.js';
import { fileSimulator } from '../support/file-simulator.js';
import { clockPast, until } from '../support/wait.js';
import { crashThroughStopHook } from '../support/sim-crash.js';
import { actionFailedKind, Alerts, openAlertsIn } from '../../src/alerts/alerts.js';
import { recordJobEnd } from '../../src/remediation/act/inflight.js';
import { killedRunThenOperatorStop, restartOnCrash } from '../support/killed-run.js';

describe('decide twice, act once: the remediation core on the simulator', () => {
  let sim: RunningSimulator;
  let client: InstanceClient;
  let target: string;
  const { redis, cleanups } = fileSimulator({ startMs: 20, stopMs: 20, stopHookMs: 20, taskMs: 10 }, (s) => ({ sim, client, target } = s));

  let seq = 0;
  const crash = (instance: string, project = 'default', at = new Date()) => crashEvent(target, instance, { project, timestamp: at.toISOString() });
  const item = (event: InstanceStatusEvent): EventItem => ({ kind: 'synthetic', target, event, receivedAt: Date.now() });

  function pipeline(
    rules: Rule[],
    opts: { conditionTimeoutMs?: number } = {},
  ): { keys: KeySpace; processor: EventProcessor; actions: Queue; audit: AuditLog; tracker: StateTracker } {
    const keys = keySpace(uniquePrefix('dtao'));
    const connection = redisClient();
    const actions = new Queue(keys.actionsQueue, { connection, prefix: keys.bullPrefix });
    cleanups.push(async () => {
      await actions.close();
      connection.disconnect();
    });
    const tracker = new StateTracker(redis, keys);
    const audit = new AuditLog(redis, keys.audit);
    const processor = new EventProcessor({
      redis,
      keys,
      client: () => client,
      tracker,
      ownOperations: new OwnOperations(redis, keys),
      audit,
      engine: new RuleEngine(rules, opts),
      gate: new ActionGate(redis, keys, new Silences(redis, keys.silences), undefined, { storm: false }),
      actions,
      pending: new PendingActions(redis, keys, actions, { audit }),
      logger: pino({ level: 'silent' }),
    });
    return { keys, processor, actions, audit, tracker };
  }

  it('resumes an event whose worker died after recording its state: the rule still decides and the restart is queued, once', async () => {
    sim.controls.addInstance({ name: 'resume-1', status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
    const { processor, actions, audit, tracker } = pipeline([restartOnCrash]);
    const ref = { target, project: 'default', instance: 'resume-1' };
    await tracker.update(ref, 103, Date.now() - 60_000, { source: 'event', eventId: 'start-0' });
    const event = crash('resume-1');
    // The dead worker's first step: the state tracker already knows this event.
    await tracker.update(ref, 102, Date.parse(event.timestamp), { source: 'event', eventId: event.id, intent: 'unrequested' });

    expect(await processor.process(item(event))).toEqual(['processed']);
    expect((await actions.getJobs(['waiting', 'delayed'])).map((j) => (j.data as ActionJob).instance)).toEqual(['resume-1']);
    const records = await audit.read({ instance: 'resume-1' });
    expect(records.find((r) => r.type === 'event')?.summary).toBe('resume-1: 103 → 102 (unrequested, instance-shutdown)');
    // A second redelivery after the done mark is a duplicate; the steps are not repeated either way.
    expect(await processor.process(item(event))).toEqual(['duplicate']);
    expect((await audit.read({ instance: 'resume-1' })).map((r) => r.type)).toEqual(['event', 'decision', 'action']);
  });

  it("records the stream's frame of a change a resync already published, once, and decides nothing on it", async () => {
    sim.controls.addInstance({ name: 'late-frame', status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
    const { processor, actions, audit, tracker } = pipeline([restartOnCrash]);
    const ref = { target, project: 'default', instance: 'late-frame' };
    // The resync read it Stopped and knew why (its stop operation was listed): published, requested.
    await tracker.update(ref, 102, Date.now() - 1_000, { source: 'read', eventId: 'resync-1', intent: 'requested', requested: true });
    const frame = crash('late-frame', 'default', new Date());
    frame.intent = 'requested';
    frame.action = 'instance-stopped';
    expect(await processor.process(item(frame))).toEqual(['unchanged']);
    const records = await audit.read({ instance: 'late-frame' });
    expect(records.map((r) => [r.type, r.correlationId])).toEqual([['event', frame.id]]);
    expect(records[0]!.summary).toMatch(/^unchanged: instance-stopped at .* reports what a resync already published/);
    expect(await actions.getJobCounts('waiting', 'delayed')).toMatchObject({ waiting: 0, delayed: 0 });
  });

  it("takes an instance renamed while its stop's event was still to come for stopped by the operator's hand: a shutdown of the new name restarts nothing, and the unseen stop is alerted", async () => {
    sim.controls.addInstance({ name: 'after-rename', status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
    const { processor, actions, audit, tracker } = pipeline([restartOnCrash]);
    // Known Running under its old name; its stop's job failed (Redis full) and is retried later.
    await tracker.update({ target, project: 'default', instance: 'before-rename' }, 103, Date.now() - 5_000, {
      source: 'event',
      eventId: 'started-1',
    });
    const rename: CanonicalEvent = {
      kind: 'lifecycle',
      id: 'rename-1',
      target,
      location: 'none',
      project: 'default',
      timestamp: new Date(Date.now() - 2_000).toISOString(),
      synthetic: false,
      action: 'instance-renamed',
      source: '/1.0/instances/after-rename',
      instance: 'after-rename',
      context: { old_name: 'before-rename' },
    };
    await processor.process({ kind: 'synthetic', target, event: rename, receivedAt: Date.now() });
    // A shutdown of the new name with no requestor: forged, or the late one.
    await processor.process(item(crash('after-rename')));
    expect(await actions.getJobCounts('waiting', 'delayed')).toMatchObject({ waiting: 0, delayed: 0 });
    const alerts = (await audit.read({ instance: 'after-rename' })).filter((r) => r.type === 'alert');
    expect(alerts.map((r) => r.summary)).toEqual([
      expect.stringMatching(/^after-rename was renamed Stopped and Reflex saw no stop of it before: cause unknown/),
    ]);
  });

  it("knows a name it never saw by its volatile.uuid: a shutdown of an instance whose rename was lost in a gap (no resync since) is judged on the operator's stop of its old name", async () => {
    sim.controls.addInstance({ name: 'renamed-unseen', status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
    const { processor, actions, audit, tracker } = pipeline([restartOnCrash]);
    // The operator stopped it under its old name, which Reflex saw created (its uuid kept); the rename's frame was lost.
    const old = { target, project: 'default', instance: 'named-before' };
    await tracker.update(old, 102, Date.now() - 5_000, { source: 'event', eventId: 'stop-1', intent: 'requested', requested: true });
    await tracker.recordIdentity(old, sim.controls.identity('renamed-unseen'));
    // A shutdown of the new name with no requestor, before any resync: forged, or stale.
    expect(await processor.process(item(crash('renamed-unseen')))).toEqual(['contradicted']);
    expect(await actions.getJobCounts('waiting', 'delayed')).toMatchObject({ waiting: 0, delayed: 0 });
    const trail = await audit.read({ instance: 'renamed-unseen' });
    expect(trail[0]!.summary).toBe('instance-renamed /1.0/instances/renamed-unseen (from named-before) (seen by resync)');
    expect(trail.some((r) => r.type === 'event' && r.contradicted === 'already-down')).toBe(true);
  });

  it('records each step of an event once when the same event is processed twice before its done mark', async () => {
    sim.controls.addInstance({ name: 'twice-1', status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
    const { processor, actions, audit } = pipeline([restartOnCrash]);
    const event = crash('twice-1');
    // Two replicas handed the same batch (a stalled job): both run it side by side.
    await Promise.all([processor.process(item(event)), processor.process(item({ ...event }))]);
    expect((await audit.read({ instance: 'twice-1' })).map((r) => r.type).sort()).toEqual(['action', 'decision', 'event']);
    expect(await actions.getJobCounts('waiting', 'delayed')).toMatchObject({ waiting: 1 });
  });

  it('rejects a bad frame of a batch alone, with its reason, and processes the others', async () => {
    sim.controls.addInstance({ name: 'batch-ok', status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
    const { processor, keys } = pipeline([restartOnCrash]);
    const frame = (source: string, extra = '') =>
      JSON.stringify({
        type: 'lifecycle',
        timestamp: new Date().toISOString(),
        metadata: { action: 'instance-shutdown', source, context: {} },
        location: 'none',
        project: 'default',
      }).replace('"context":{}', `"context":{${extra}}`);
    let deep = '"d":1';
    for (let i = 0; i < 20_000; i++) deep = `"d":{${deep}}`;
    const batch = {
      kind: 'batch',
      target,
      items: [
        { kind: 'frame', target, raw: frame('/1.0/instances/%E0%A4%A'), receivedAt: Date.now() },
        { kind: 'frame', target, raw: frame('/1.0/instances/deep', deep), receivedAt: Date.now() },
        { kind: 'frame', target: 42, raw: 'not even an item' },
        { kind: 'frame', target, raw: frame('/1.0/instances/batch-ok'), receivedAt: Date.now() },
      ],
    };
    expect(await processor.process(batch)).toEqual(['rejected', 'rejected', 'rejected', 'processed']);
    const reasons = (await redis.xrange(keys.rejected, '-', '+')).map(([, f]) => f[f.indexOf('reason') + 1]);
    expect(reasons).toHaveLength(3);
    expect(reasons[0]).toMatch(/URIError/);
    expect(reasons[1]).toMatch(/nested deeper than 64 levels/);
    expect(reasons[2]).toMatch(/invalid event item/);
  });

  it('records a rule condition that does not answer as "condition timed out", and the worker goes on', async () => {
    sim.controls.addInstance({ name: 'slow-when', status: 'Stopped' });
    const hanging = defineRule({
      name: 'hangs',
      on: { kind: 'instance.status', to: [102] },
      when: () => new Promise<boolean>(() => undefined),
      actions: [{ action: 'start' }],
    });
    const { processor, audit } = pipeline([hanging], { conditionTimeoutMs: 200 });
    expect(await processor.process(item(crash('slow-when')))).toEqual(['processed']);
    expect((await audit.read({ instance: 'slow-when' })).find((r) => r.type === 'decision')?.summary).toBe(
      'skipped: condition timed out after 200 ms',
    );
  });

  describe('at the moment of acting', () => {
    const job = (instance: string, over: Partial<ActionJob> = {}): ActionJob => ({
      rule: 'restart-on-crash',
      action: 'start',
      params: {},
      target,
      project: 'default',
      instance,
      correlationId: `inc-${++seq}`,
      incidentAt: Date.now() - 1_000,
      event: crash(instance, 'default', new Date(Date.now() - 1_000)),
      origin: 'rule',
      dryRun: false,
      ...over,
    });
    async function run(j: ActionJob, prefix = uniquePrefix('act')) {
      const keys = keySpace(prefix);
      const { executor, close } = testExecutor(redis, keys, client, [restartOnCrash]);
      cleanups.push(close);
      const outcome = await executor.execute(j, `job-${seq}`, 1, 1);
      return { outcome, keys, audit: new AuditLog(redis, keys.audit) };
    }

    it('skips a start queued before the operator opted the instance out, and records why', async () => {
      sim.controls.addInstance({ name: 'opted-out', status: 'Stopped', config: { 'user.reflex.autorestart': 'false' } });
      const { outcome, audit } = await run(job('opted-out'));
      expect(outcome).toMatchObject({
        result: 'skipped',
        summary: expect.stringContaining('the rule no longer holds on the instance as read now: skipped: instance has not opted in'),
      });
      expect((await audit.read({ instance: 'opted-out' })).map((r) => [r.type, r.result])).toEqual([['outcome', 'skipped']]);
      expect(sim.controls.calls('opted-out', 'start')).toBe(0);
    });

    it('skips a start superseded by a transition the operator requested after the incident', async () => {
      sim.controls.addInstance({ name: 'operator-stopped', status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
      const prefix = uniquePrefix('act');
      await new StateTracker(redis, keySpace(prefix)).update({ target, project: 'default', instance: 'operator-stopped' }, 102, Date.now(), {
        eventId: 'lxc-stop',
        requested: true,
      });
      const { outcome } = await run(job('operator-stopped'), prefix);
      expect(outcome).toMatchObject({
        result: 'skipped',
        summary: expect.stringMatching(/^superseded: a transition to 102 was requested through the API/),
      });
      expect(sim.controls.calls('operator-stopped', 'start')).toBe(0);
    });

    it("skips a start when an operator stopped the instance after the incident, before that stop's event was processed", async () => {
      sim.controls.addInstance({ name: 'stop-in-flight', config: { 'user.reflex.autorestart': 'true' } });
      // The incident comes after the instance was started (its last_used_at), as a crash does.
      const incidentAt = await clockPast(Date.now()); // a millisecond clock: the incident's time must differ from the start's
      const queued = job('stop-in-flight', { incidentAt });
      await clockPast(incidentAt); // and the operator's stop comes after the incident
      await (await client.changeState('stop-in-flight', { action: 'stop', force: true })).wait({ timeoutMs: 5_000 });
      const { outcome } = await run(queued);
      expect(outcome).toMatchObject({
        result: 'skipped',
        summary: expect.stringMatching(/^superseded: "Stopping instance" \(operation .*, not Reflex's\)/),
      });
      expect(sim.controls.calls('stop-in-flight', 'start')).toBe(0);
    });

    it("skips a start when the operator's stop came after the instance last started but before the incident's time (as one sent in a crash's stop hook does), its event not processed yet", async () => {
      sim.controls.addInstance({ name: 'stopped-in-hook', config: { 'user.reflex.autorestart': 'true' } });
      await clockPast(Date.now()); // the instance's start (last_used_at) comes before the crash
      await crashThroughStopHook(sim.controls, 'stopped-in-hook');
      // Refused ("already stopped", as both daemons refuse it in the hook), but the operator's word all the same.
      const stop = await (await client.changeState('stopped-in-hook', { action: 'stop' })).wait({ timeoutMs: 5_000 }).catch((err: Error) => err);
      expect(String(stop)).toMatch(/already stopped/);
      // The incident's time is the announcement's, after the stop was taken: as when it came in the hook.
      const { outcome } = await run(job('stopped-in-hook', { incidentAt: await clockPast(Date.now()) }));
      expect(outcome).toMatchObject({
        result: 'skipped',
        summary: expect.stringMatching(
          /^superseded: "Stopping instance" \(operation .*, not Reflex's\) was requested at .*, since the instance last started/,
        ),
      });
      expect(sim.controls.calls('stopped-in-hook', 'start')).toBe(0);
    });

    it('skips a start when the daemon says the instance was started after the incident, not by Reflex, though no event or operation of it is known (a Redis outage held them)', async () => {
      sim.controls.addInstance({ name: 'started-unseen', status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
      const queued = job('started-unseen');
      await (await client.changeState('started-unseen', { action: 'start' })).wait({ timeoutMs: 5_000 });
      await (await client.changeState('started-unseen', { action: 'stop', force: true })).wait({ timeoutMs: 5_000 });
      const { outcome, audit } = await run(queued);
      expect(outcome).toMatchObject({
        result: 'skipped',
        summary: expect.stringMatching(
          /^superseded: the instance was started at \S+ \(the daemon's last_used_at\), after the incident .*, and not by Reflex/,
        ),
      });
      expect((await audit.read({ instance: 'started-unseen' })).find((r) => r.type === 'outcome')).toMatchObject({
        result: 'skipped',
        recheck: 'superseded',
      });
      expect(sim.controls.calls('started-unseen', 'start')).toBe(1);
    });

    it("acts again after a crash that followed its own start: Reflex's start after the incident is not an operator's", async () => {
      sim.controls.addInstance({ name: 'own-start', status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
      const prefix = uniquePrefix('act');
      const incidentAt = Date.now() - 1_000;
      expect((await run(job('own-start', { incidentAt }), prefix)).outcome).toMatchObject({ result: 'done' });
      await crashThroughStopHook(sim.controls, 'own-start');
      expect(sim.controls.statusCode('own-start')).toBe(102);
      // A redelivery of the same incident's job (its start came after the incident): still Reflex's own.
      expect((await run(job('own-start', { incidentAt }), prefix)).outcome).toMatchObject({ result: 'done' });
      expect(sim.controls.calls('own-start', 'start')).toBe(2);
    });

    it('skips a start the operator silenced after it was queued', async () => {
      sim.controls.addInstance({ name: 'silenced', status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
      const prefix = uniquePrefix('act');
      await new Silences(redis, keySpace(prefix).silences).add({ scope: { instance: 'silenced' }, reason: 'maintenance', durationMs: 60_000 });
      const { outcome } = await run(job('silenced'), prefix);
      expect(outcome).toMatchObject({ result: 'skipped', summary: expect.stringContaining('silenced since it was queued') });
      expect(sim.controls.calls('silenced', 'start')).toBe(0);
    });

    it('skips a restart of an instance quarantined since', async () => {
      sim.controls.addInstance({ name: 'quarantined', status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
      const prefix = uniquePrefix('act');
      await redis.set(keySpace(prefix).quarantine({ target, project: 'default', instance: 'quarantined' }), '1', 'PX', 60_000);
      const { outcome } = await run(job('quarantined'), prefix);
      expect(outcome).toMatchObject({ result: 'skipped', summary: expect.stringContaining('is quarantined') });
    });

    it('records an instance deleted or renamed during the back-off as a skip, not a failure', async () => {
      const { outcome, audit } = await run(job('never-existed'));
      expect(outcome).toMatchObject({ result: 'skipped', summary: expect.stringContaining('is gone (deleted or renamed') });
      expect((await audit.read({ instance: 'never-existed' })).filter((r) => r.type === 'give-up' || r.type === 'alert')).toEqual([]);
    });

    it("acts when everything still holds, and an operator's heal ignores the rule", async () => {
      sim.controls.addInstance({ name: 'still-down', status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
      expect((await run(job('still-down'))).outcome).toMatchObject({ result: 'done' });
      sim.controls.addInstance({ name: 'healed', status: 'Stopped' });
      expect((await run(job('healed', { rule: 'heal', origin: 'operator', event: undefined }))).outcome).toMatchObject({ result: 'done' });
    });

    it("skips a start when the operator's opt-out, sent before it acted, lands while it waits for their operation on the instance", async () => {
      // The daemon applies a config change when its operation ends (as LXD does when the instance is
      // busy with a crash's stop hook): the re-check's read comes before it, the call after.
      const slow = await startSimulator({ instances: 0, timings: { startMs: 10, taskMs: 400 } });
      const slowClient = new InstanceClient(parseTarget(`unix://${slow.socketPath}`));
      cleanups.push(async () => {
        await slowClient.close();
        await slow.stop();
      });
      slow.controls.addInstance({ name: 'opting-out', status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
      const { executor, close } = testExecutor(redis, keySpace(uniquePrefix('act')), slowClient, [restartOnCrash]);
      cleanups.push(close);
      const { value } = await slowClient.getInstance('opting-out');
      const optOut = await slowClient.putInstance(
        'opting-out',
        { ...value, config: { ...value.config, 'user.reflex.autorestart': 'false' } },
        undefined,
      );
      const outcome = await executor.execute(job('opting-out'), 'opt-out-1', 1, 1);
      await optOut.wait({ timeoutMs: 5_000 });
      expect(outcome).toMatchObject({ result: 'skipped', summary: expect.stringContaining('instance has not opted in') });
      expect(slow.controls.calls('opting-out', 'start')).toBe(0);
    });

    it("does not run a job again that an earlier run ended, when its worker died before the queue heard: the operator's stop since stays, though nothing remembers it", async () => {
      // A daemon that forgets an operation 0.3 s after it ends: the stop's record is gone as it would be
      // after 5 s, or with the replica that read its frames and died.
      const forgetful = await startSimulator({ instances: 0, timings: { startMs: 10, stopMs: 10, operationRetentionMs: 300 } });
      const forgetfulClient = new InstanceClient(parseTarget(`unix://${forgetful.socketPath}`));
      cleanups.push(async () => {
        await forgetfulClient.close();
        await forgetful.stop();
      });
      forgetful.controls.addInstance({ name: 'ended', status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
      const keys = keySpace(uniquePrefix('act'));
      const { executor, close } = testExecutor(redis, keys, forgetfulClient, [restartOnCrash]);
      cleanups.push(close);
      const queued = job('ended');
      const first = await executor.execute(queued, 'stalled-1', 1, 3);
      expect(first, JSON.stringify(first)).toMatchObject({ result: 'done' });
      await (await forgetfulClient.changeState('ended', { action: 'stop', force: true })).wait({ timeoutMs: 5_000 });
      await until('the daemon forgets the stop', async () => (await forgetfulClient.listOperations()).length === 0, 5_000);
      // BullMQ runs a stalled job again under its id: this run must end it as the first did.
      const again = await executor.execute(queued, 'stalled-1', 1, 3);
      expect(again).toMatchObject({ result: 'done', summary: expect.stringContaining('an earlier run of this job ended it') });
      expect(forgetful.controls.calls('ended', 'start')).toBe(1);
      expect(forgetful.controls.statusCode('ended')).toBe(102);
      const outcomes = (await new AuditLog(redis, keys.audit).read({ instance: 'ended' })).filter((r) => r.type === 'outcome');
      expect(outcomes.map((r) => r.resumed === true)).toEqual([false, true]);
    });

    it.each([
      ['between the daemon taking its start and the reply', 'reply'],
      ['while the start ran, long enough for the daemon to forget its operation', 'operation'],
    ] as const)(
      "does not start again an instance a killed run of the job started %s: the operator's stop since stays, though nothing remembers it",
      async (_when, died) => {
        const forgetful = await startSimulator({ instances: 0, timings: { startMs: 10, stopMs: 10, operationRetentionMs: 300 } });
        const forgetfulClient = new InstanceClient(parseTarget(`unix://${forgetful.socketPath}`));
        cleanups.push(async () => {
          await forgetfulClient.close();
          await forgetful.stop();
        });
        const name = `killed-${died}`;
        forgetful.controls.addInstance({ name, status: 'Stopped', config: { 'user.reflex.autorestart': 'true' } });
        const keys = keySpace(uniquePrefix('act'));
        const { executor, close } = testExecutor(redis, keys, forgetfulClient, [restartOnCrash]);
        cleanups.push(close);
        const queued = job(name);
        const ref = { target: queued.target, project: queued.project, instance: name };
        await killedRunThenOperatorStop({ redis, keys, client: forgetfulClient, ref, jobId: 'stalled-2' }, died, 5_000);
        // BullMQ runs the stalled job again under its id.
        const again = await executor.execute(queued, 'stalled-2', 1, 3);
        expect(again).toMatchObject({ result: 'skipped', summary: expect.stringContaining('an earlier run of this job sent start') });
        expect(forgetful.controls.calls(name, 'start')).toBe(1);
        expect(forgetful.controls.statusCode(name)).toBe(102);
      },
    );

    /** A give-up of `name`'s start after the tracker recorded `status` for it (`afterMs` past the incident). */
    async function giveUpAfter(name: string, status: number, afterMs: number, reason: string) {
      const keys = keySpace(uniquePrefix('act'));
      const audit = new AuditLog(redis, keys.audit);
      const alerts = new Alerts({ audit, open: openAlertsIn(redis, keys.openAlerts) });
      const { executor, close } = testExecutor(redis, keys, client, [restartOnCrash], { alerts });
      cleanups.push(close);
      const queued = job(name);
      const ref = { target: queued.target, project: queued.project, instance: queued.instance };
      await new StateTracker(redis, keys).update(ref, status, queued.incidentAt! + afterMs, { source: 'event', eventId: `${name}-${status}` });
      await executor.gaveUp(queued, `${name}-1`, reason, 1);
      return {
        alerts: (await audit.read({ instance: name })).filter((r) => r.type === 'alert'),
        open: await openAlertsIn(redis, keys.openAlerts).list(),
      };
    }

    it("ends a give-up's alert at once when its instance runs again since the incident, its Running event handled before the give-up", async () => {
      // The operator's start ran first: its Running event ended the incident's alerts, none of this job's yet.
      const { alerts, open } = await giveUpAfter('given-up', 103, 500, 'OPERATION_FAILED: The instance is already running');
      expect(alerts.map((r) => r.summary)).toEqual([
        expect.stringMatching(/^start on given-up gave up after 1 attempt/),
        expect.stringMatching(/^action\.failed resolved: given-up is Running \(103\) again since/),
      ]);
      expect(open).toEqual([]);
    });

    it("keeps a give-up's alert firing while its instance stays down", async () => {
      const { open } = await giveUpAfter('still-given-up', 102, 0, 'OPERATION_FAILED: Injected failure');
      expect(open.map((a) => a.kind)).toEqual([actionFailedKind]);
    });

    it('ends an earlier give-up alert when the run that acted died before saying so: the next run of the job resolves it', async () => {
      const keys = keySpace(uniquePrefix('act'));
      const audit = new AuditLog(redis, keys.audit);
      const alerts = new Alerts({ audit, open: openAlertsIn(redis, keys.openAlerts) });
      const { executor, close } = testExecutor(redis, keys, client, [restartOnCrash], { alerts });
      cleanups.push(close);
      sim.controls.addInstance({ name: 'gave-up-1', config: { 'user.reflex.autorestart': 'true' } });
      const queued = job('gave-up-1');
      const ref = { target: queued.target, project: queued.project, instance: queued.instance };
      await alerts.raise({ kind: actionFailedKind, severity: 'critical', ...ref, summary: 'start gave up', correlationId: 'gave-up' });
      // The run acted and recorded its end, then died before the alert's end and the queue's.
      await recordJobEnd(redis, keys, 'acted-1', { result: 'done', summary: 'started web-1' });
      expect(await executor.execute(queued, 'acted-1', 1, 3)).toMatchObject({ result: 'done' });
      const records = (await audit.read({ instance: 'gave-up-1' })).filter((r) => r.type === 'alert');
      expect(records.map((r) => r.summary)).toEqual([
        'start gave up',
        expect.stringMatching(/^action\.failed resolved: a later start on gave-up-1 succeeded/),
      ]);
    });
  });
});
