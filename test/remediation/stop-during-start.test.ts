import { describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import type { SimulatorOptions } from '../../src/simulator/options.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import type { StoredAuditRecord } from '../../src/audit/audit-log.js';
import { auditTrail, waitForAudit } from '../support/audit-trail.js';
import { redisUrl, reflexArgs, uniquePrefix } from '../support/redis.js';
import { runReflex, startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';
import { noActionPending } from '../support/settled.js';
import { cleanupsAfterEach } from '../support/stopped-after-each.js';
import { until } from '../support/wait.js';
import { show, startCallsSince } from './trail.js';

/**
 * The simulator's form of real-stop-during-start.test.ts, with a start that takes seconds: the
 * operator's stop sent while Reflex's start runs is refused by the daemon ("busy running a start
 * operation"); Reflex gives its start back once it has ended, also when the worker that sent it was
 * killed and another one resumes waiting on it, or finds it gone (the refused stop gone from the
 * daemon's listing too: the request the stream recorded says it).
 */
describe("an operator's stop refused while Reflex's start runs", () => {
  const cleanups = cleanupsAfterEach();
  const optIn = { 'user.reflex.autorestart': 'true' };

  function reflex(sim: RunningSimulator, prefix: string, role: string): ReflexProcess {
    const p = startReflexProcess(
      ['run', '--role', role, ...reflexArgs(prefix, `unix://${sim.socketPath}`), '--rules', 'rules', '--resync-interval', '0', '--http-port', '0'],
      { REFLEX_LOG_LEVEL: 'info' },
    );
    cleanups.push(() => p.stop());
    return p;
  }

  const client = (sim: RunningSimulator) => new InstanceClient(parseTarget(`unix://${sim.socketPath}`));

  /** A simulator whose `c1` opted in, watched by a subscriber and a worker (returned, to be killed). */
  async function watched(prefix: string, timings: SimulatorOptions['timings']): Promise<{ sim: RunningSimulator; worker: ReflexProcess }> {
    const sim = await startSimulator({ instances: 0, timings });
    cleanups.push(() => sim.stop());
    sim.controls.addInstance({ name: 'c1', config: optIn });
    await reflex(sim, prefix, 'subscriber').waitForLog('event stream connected');
    const worker = reflex(sim, prefix, 'worker');
    await worker.waitForLog('reflex running');
    return { sim, worker };
  }

  /** Waits until the daemon has forgotten the operation (its retention lapsed): a GET of it fails. */
  const forgotten = (sim: RunningSimulator, id: string): Promise<true> =>
    until(
      'the start operation forgotten',
      () =>
        client(sim)
          .getOperation(id)
          .then(
            () => false,
            () => true,
          ),
      30_000,
    );

  /** Crashes `c1` and answers the id of the start Reflex sent for it, once the trail has it. */
  async function crashedAndStarted(sim: RunningSimulator, prefix: string): Promise<string> {
    const crashedAt = Date.now();
    sim.controls.crash('c1');
    const trail = await waitForAudit(
      redisUrl(),
      prefix,
      'c1',
      (rs) => startCallsSince(rs, crashedAt).some((r) => r.operationId !== undefined),
      30_000,
    );
    return String(startCallsSince(trail, crashedAt)[0]!.operationId);
  }

  /** The operator's stop, as `lxc stop` sends it; answers how its operation ended. */
  async function operatorStop(sim: RunningSimulator, name: string): Promise<string> {
    const op = await client(sim).changeState(name, { action: 'stop', timeout: -1, force: false });
    return op.wait().then(
      () => 'Success',
      (err: Error) => `Failure: ${err.message}`,
    );
  }

  const cases = [
    { killed: false, gone: false, title: '' },
    { killed: true, gone: false, title: ' by the worker that resumed it after the first was killed' },
    { killed: true, gone: true, title: ' by the worker that took the job over after the first was killed and its start operation was forgotten' },
  ];
  for (const { killed, gone, title } of cases)
    it(`is honoured: the container ends Stopped, the start given back${title}`, async () => {
      // Forgotten: the daemon drops an ended operation after a while (LXD: 5 s), the operator's refused stop with it.
      const prefix = uniquePrefix('start-stop');
      const { sim, worker } = await watched(prefix, { startMs: 2_000, stopHookMs: 100, ...(gone ? { operationRetentionMs: 200 } : {}) });
      const startId = await crashedAndStarted(sim, prefix);
      if (killed) await worker.kill(); // SIGKILL while the start operation still runs
      const stop = await operatorStop(sim, 'c1');
      expect(stop, 'the daemon refuses a stop while the start runs').toMatch(/^Failure: .*busy running a "start" operation/);
      if (gone) await forgotten(sim, startId);
      if (killed) await reflex(sim, prefix, 'worker').waitForLog('reflex running');
      await waitForAudit(redisUrl(), prefix, 'c1', (rs) => rs.some((r) => r.type === 'outcome' && /given back/.test(r.summary)), 30_000);
      await noActionPending(redisUrl(), prefix);
      const trail = await auditTrail(redisUrl(), prefix, 'c1');
      expect(sim.controls.statusCode('c1'), show(trail)).toBe(102);
      expect(sim.controls.calls('c1', 'start'), show(trail)).toBe(1);
      const given = trail.find((r) => r.type === 'outcome' && /given back/.test(r.summary))!;
      expect(given.summary).toMatch(
        /superseded: a stop was requested through the API at \S+ \(operation [0-9a-f-]+, not Reflex's; refused by the daemon: [^)]*busy running a "start" operation\), while this start ran; an operator's decision is never undone: stopped again \(operation /,
      );
    }, 120_000);

  it('alerts when the instance cannot be stopped again: action.give-back-failed stays firing while it runs, and ends once it is stopped', async () => {
    const prefix = uniquePrefix('start-stop-fail');
    const { sim } = await watched(prefix, { startMs: 2_000, stopHookMs: 100 });
    await crashedAndStarted(sim, prefix);
    expect(await operatorStop(sim, 'c1')).toMatch(/^Failure: .*busy running a "start" operation/);
    // The daemon fails the give-back's clean stop and its forced one.
    sim.controls.failNext('c1', 2, 'Injected stop failure');
    const raised = (r: StoredAuditRecord) => r.type === 'alert' && r.kind === 'action.give-back-failed' && r.resolved !== true;
    await waitForAudit(redisUrl(), prefix, 'c1', (rs) => rs.some(raised), 30_000);
    await noActionPending(redisUrl(), prefix);
    // Reflex's own start event (Running, intent self) is handled too: it resolves the crash, never this alert.
    await waitForAudit(
      redisUrl(),
      prefix,
      'c1',
      (rs) => rs.some((r) => r.type === 'alert' && r.kind === 'instance.crashed' && r.resolved === true),
      30_000,
    );
    let trail = await auditTrail(redisUrl(), prefix, 'c1');
    expect(sim.controls.statusCode('c1'), 'up against the operator').toBe(103);
    expect(sim.controls.calls('c1', 'stop'), show(trail)).toBe(3); // the operator's, the clean one, the forced one
    expect(sim.controls.calls('c1', 'start'), 'not retried: a retry would not stop it').toBe(1);
    const outcome = trail.find((r) => r.type === 'outcome' && /given back, and that failed/.test(r.summary));
    expect(outcome, show(trail)).toMatchObject({ result: 'failed', code: 'GIVE_BACK_FAILED' });
    expect(
      trail.filter(raised).map((r) => r.summary),
      show(trail),
    ).toEqual([
      expect.stringMatching(
        /^c1 runs against an operator's stop \(operation [0-9a-f-]+\): .*could not be stopped again as the operator asked: .*Injected stop failure; stop it by hand$/,
      ),
    ]);
    expect(
      trail.filter((r) => r.type === 'give-up' || (r.type === 'alert' && r.kind === 'action.failed')),
      `not dead-lettered: the start succeeded\n${show(trail)}`,
    ).toEqual([]);
    expect(
      trail.some((r) => r.type === 'alert' && r.kind === 'action.give-back-failed' && r.resolved === true),
      show(trail),
    ).toBe(false);

    // The operator stops it by hand: the alert ends.
    await (await client(sim).changeState('c1', { action: 'stop', force: true })).wait();
    trail = await waitForAudit(
      redisUrl(),
      prefix,
      'c1',
      (rs) => rs.some((r) => r.type === 'alert' && r.kind === 'action.give-back-failed' && r.resolved === true),
      30_000,
    );
    expect(trail.find((r) => r.type === 'alert' && r.kind === 'action.give-back-failed' && r.resolved === true)?.summary).toMatch(
      /c1 is Stopped \(102\) now, as the operator asked/,
    );
  }, 120_000);

  it('touches nothing when the name is another instance by the time the start is given back (deleted and made again)', async () => {
    const prefix = uniquePrefix('start-stop-new');
    const { sim, worker } = await watched(prefix, { startMs: 2_000, stopHookMs: 100, operationRetentionMs: 200 });
    const startId = await crashedAndStarted(sim, prefix);
    await worker.kill(); // SIGKILL while the start operation still runs
    expect(await operatorStop(sim, 'c1')).toMatch(/^Failure: .*busy running a "start" operation/);
    await forgotten(sim, startId);
    // The operator deletes the instance and makes another one under its name, running.
    await (await client(sim).changeState('c1', { action: 'stop', force: true })).wait();
    await (await client(sim).deleteInstance('c1')).wait();
    sim.controls.addInstance({ name: 'c1', status: 'Running', config: optIn });
    const newcomer = sim.controls.identity('c1');

    await reflex(sim, prefix, 'worker').waitForLog('reflex running');
    await waitForAudit(redisUrl(), prefix, 'c1', (rs) => rs.some((r) => r.type === 'outcome' && /another instance now/.test(r.summary)), 30_000);
    await noActionPending(redisUrl(), prefix);
    const trail = await auditTrail(redisUrl(), prefix, 'c1');
    expect(sim.controls.identity('c1'), show(trail)).toBe(newcomer);
    expect(sim.controls.statusCode('c1'), `the new instance left Running\n${show(trail)}`).toBe(103);
  }, 120_000);

  it("is honoured over the operator's own heal: the later decision wins, and the heal's start is given back", async () => {
    const sim = await startSimulator({ instances: 0, timings: { startMs: 2_000 } });
    cleanups.push(() => sim.stop());
    sim.controls.addInstance({ name: 'c1', status: 'Stopped' });
    const prefix = uniquePrefix('heal-stop');
    const worker = reflex(sim, prefix, 'all');
    await worker.waitForLog('event stream connected');

    const healed = runReflex(['heal', 'c1', '--wait', '60s', ...reflexArgs(prefix, `unix://${sim.socketPath}`), '--config', '/dev/null']);
    await waitForAudit(redisUrl(), prefix, 'c1', (rs) => startCallsSince(rs).some((r) => r.operationId !== undefined), 30_000);
    const stop = await operatorStop(sim, 'c1');
    expect(stop, 'the daemon refuses a stop while the start runs').toMatch(/^Failure: .*busy running a "start" operation/);
    await healed;
    await waitForAudit(redisUrl(), prefix, 'c1', (rs) => rs.some((r) => r.type === 'outcome' && /given back/.test(r.summary)), 30_000);
    await noActionPending(redisUrl(), prefix);
    const trail = await auditTrail(redisUrl(), prefix, 'c1');
    expect(sim.controls.statusCode('c1'), show(trail)).toBe(102);
    expect(sim.controls.calls('c1', 'start'), show(trail)).toBe(1);
  }, 120_000);
});
