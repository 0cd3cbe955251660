import { Queue } from 'bullmq';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { InstanceClient } from '../../src/client/client.js';
import { eventItemHash } from '../../src/events/event-ingestor.js';
import { keySpace } from '../../src/redis/key-space.js';
import { ActionGate } from '../../src/remediation/decide/action-gate.js';
import { EventProcessor } from '../../src/remediation/decide/event-processor.js';
import { OwnOperations } from '../../src/events/own-operations.js';
import { PendingActions } from '../../src/remediation/pending-actions.js';
import { loadRulesFolder } from '../../src/rules/rules-folder.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { Silences } from '../../src/silences/silences.js';
import type { RunningSimulator } from '../../src/simulator/simulator.js';
import { recordingAlerts } from '../alerts/recording-alerts.js';
import { crashEvent } from '../support/crash-event.js';
import { fileSimulator } from '../support/file-simulator.js';
import { AuditLog, type StoredAuditRecord } from '../../src/audit/audit-log.js';
import { StatusCode } from '../../src/client/status-code.js';
import { EventArchive } from '../../src/events/event-archive.js';
import { StateTracker } from '../../src/events/state-tracker.js';
import type { SentAlert } from '../notify/recording-server.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { bundledRules, optIn, quickSimTimings, startStack, type Stack } from '../support/stack.js';
import { settled } from '../support/settled.js';
import { until } from '../support/wait.js';
import { show } from './trail.js';
import { simApi } from '../support/sim-api.js';

/**
 * Issue 39, item 2 on the simulator: a stop counts as a crash (crash-loop budget, crash alert,
 * remediation) only when the daemon agrees. A forged or stale `instance-shutdown` for a name that
 * exists nowhere, or for an instance that is running, is audited and raised as a suspicious notice
 * that does not stay firing; nothing is spent, so the real crash after it is healed at once. The
 * frames are injected into the simulator's event stream as it is (no requestor: a crash's shape).
 * The same on real LXD and Incus, through a frame-injecting proxy: real-contradicted-stop.test.ts.
 */
describe('a stop the daemon contradicts is never spent (simulator, bundled rules)', () => {
  let stack: Stack | undefined;

  afterEach(async () => {
    await stack?.stop();
    stack = undefined;
  });

  const start = async (): Promise<Stack> => {
    stack = await startStack({
      redisUrl: redisUrl(),
      label: 'contra',
      instances: [
        { name: 'web-1', config: optIn },
        { name: 'web-2', config: optIn },
        { name: 'db-1', config: {} },
      ],
      webhook: { route: { groupWaitMs: 100, groupIntervalMs: 300 } },
    });
    return stack;
  };
  const trail = (instance: string): Promise<StoredAuditRecord[]> => new AuditLog(stack!.redis, stack!.keys.audit).read({ instance });
  const sent = (): SentAlert[] => stack!.webhook!.requests.flatMap((r) => (r.json as { alerts: SentAlert[] }).alerts);
  /** A shutdown with no requestor, as the daemon sends it after a crash. */
  const forgedShutdown = (name: string) => ({
    type: 'lifecycle' as const,
    project: 'default',
    metadata: { action: 'instance-shutdown', source: `/1.0/instances/${name}`, name, project: 'default', context: {} },
  });
  const contradicted = async (name: string) => (await trail(name)).find((r) => r.type === 'event' && 'contradicted' in r);

  it('a shutdown for a name that exists nowhere is audited and alerted once as suspicious, the notice resolves, and no crash alert fires', async () => {
    const { sim, redis, keys } = await start();
    sim.controls.injectFrame(forgedShutdown('ghost'));

    const record = await until('the contradiction audited', () => contradicted('ghost'));
    expect(record, show(await trail('ghost'))).toMatchObject({
      contradicted: 'gone',
      summary: expect.stringMatching(/^contradicted by the daemon: .*404/),
    });
    await until('the notice sent, then resolved', () => sent().some((a) => a.kind === 'event.contradicted' && a.status === 'resolved'));
    const notices = sent().filter((a) => a.kind === 'event.contradicted');
    expect(notices.map((a) => a.status)).toEqual(['firing', 'resolved']);
    expect(notices[0]).toMatchObject({ severity: 'warning', instance: 'ghost' });
    expect(
      sent().filter((a) => a.kind === 'instance.crashed'),
      'no crash alert for a name that does not exist',
    ).toEqual([]);
    expect(await redis.zcard(keys.notify.active), 'nothing left firing on the board').toBe(0);
    expect(await redis.exists(keys.restarts({ target: stack!.target, project: 'default', instance: 'ghost' })), 'no budget').toBe(0);
    expect(
      await new StateTracker(redis, keys).get({ target: stack!.target, project: 'default', instance: 'ghost' }),
      'the tracker holds nothing for the name',
    ).toBeUndefined();
    const counted = (await stack!.reflex.metrics.stopsContradicted.get()).values.map((v) => [v.labels.reason, v.value]);
    expect(counted).toEqual([['gone', 1]]);
    const archived = await new EventArchive({ redis, key: keys.archive }).read({ outcome: 'contradicted' });
    expect(archived.map((a) => ('instance' in a.event ? a.event.instance : ''))).toEqual(['ghost']);
  });

  it('a forged shutdown of a running opted-in instance spends no restart and calls nothing; its real crash after is healed with restart 1 and no back-off', async () => {
    const { sim, redis, keys, target } = await start();
    const ref = { target, project: 'default', instance: 'web-1' };

    // The heal time of a crash with nothing before it, on a twin instance: the yardstick.
    const baseline = await healTime(stack!, 'web-2');

    sim.controls.injectFrame(forgedShutdown('web-1'));
    await until('the forged frame archived', async () => (await new EventArchive({ redis, key: keys.archive }).read({})).some(isShutdownOf('web-1')));
    // Whatever the frame made Reflex queue has run by now.
    await settled(redisUrl(), stack!.prefix);
    expect(sim.controls.calls('web-1', 'start'), 'no start for a forged stop').toBe(0);
    expect(await redis.exists(keys.restarts(ref)), 'the crash-loop budget is untouched').toBe(0);
    const record = await contradicted('web-1');
    expect(record?.summary, show(await trail('web-1'))).toMatch(/but web-1 is Running \(103\)/);
    expect(sim.controls.statusCode('web-1')).toBe(StatusCode.Running);
    expect(
      (await trail('web-1')).filter((r) => r.correlationId === record!.correlationId && r.type === 'decision'),
      'the rules never saw it',
    ).toEqual([]);
    expect((await new StateTracker(redis, keys).get(ref))?.status, 'the tracker has the daemon’s word').toBe(StatusCode.Running);

    const afterForged = await healTime(stack!, 'web-1');
    const trailNow = await trail('web-1');
    const decisions = trailNow.filter((r) => r.type === 'decision');
    expect(decisions.at(-1)?.summary, show(trailNow)).toMatch(/restart 1 of the budget$/);
    expect(sim.controls.calls('web-1', 'start'), 'one start, for the real crash').toBe(1);
    // The figure for the report; the assertion is the trail's (no back-off), not a timing.
    console.info(
      `heal after a crash: ${baseline.toFixed(0)} ms alone, ${afterForged.toFixed(0)} ms after a forged shutdown (ratio ${(afterForged / baseline).toFixed(2)})`,
    );
    expect(afterForged, 'healed well inside the bundled rule’s first back-off (10 s)').toBeLessThan(10_000);
    await until('the notice resolved', () => sent().some((a) => a.kind === 'event.contradicted' && a.status === 'resolved'));
  });

  it('a crash alert still firing for an instance resolves when it is deleted (the daemon answers 404), and a stale shutdown of it after that is contradicted', async () => {
    const { sim, client } = await start();
    sim.controls.crash('db-1');
    await until('the crash alert of db-1 (not opted in: nobody heals it)', () =>
      sent().some((a) => a.kind === 'instance.crashed' && a.instance === 'db-1' && a.status === 'firing'),
    );
    await until('db-1 free of its stop hook', async () => (await client.getInstance('db-1')).value.status_code === StatusCode.Stopped);
    await until('db-1 deleted', async () => {
      try {
        await (await client.deleteInstance('db-1')).wait();
        return true;
      } catch {
        return false;
      }
    });
    await until('the crash alert resolved', () =>
      sent().some((a) => a.kind === 'instance.crashed' && a.instance === 'db-1' && a.status === 'resolved'),
    );
    const resolved = sent().find((a) => a.kind === 'instance.crashed' && a.status === 'resolved')!;
    expect(resolved.summary).toMatch(/db-1 does not exist any more/);

    sim.controls.injectFrame(forgedShutdown('db-1'));
    await until('the stale shutdown contradicted', () => contradicted('db-1'));
    expect(
      sent()
        .filter((a) => a.kind === 'instance.crashed' && a.instance === 'db-1')
        .map((a) => a.status),
    ).toEqual(['firing', 'resolved']);
  });

  it("a forged shutdown of an instance the operator stopped and then renamed is contradicted under its new name: the stop stays the operator's last word", async () => {
    const { sim, client } = await start();
    await (await client.changeState('web-1', { action: 'stop' })).wait();
    await until('the stop audited', async () => (await trail('web-1')).some((r) => r.type === 'event' && /103 → 102 \(requested/.test(r.summary)));
    await until('web-1 renamed to web-7', async () => (await simApi(sim, 'POST', '/1.0/instances/web-1', { name: 'web-7' })) === 202);
    await until('the rename audited', async () => (await trail('web-7')).some((r) => r.type === 'event' && /instance-renamed/.test(r.summary)));
    sim.controls.injectFrame(forgedShutdown('web-7'));
    const record = await until('the forged shutdown contradicted', () => contradicted('web-7'));
    expect(record, show(await trail('web-7'))).toMatchObject({ contradicted: 'already-down' });
    await settled(redisUrl(), stack!.prefix);
    expect(sim.controls.calls('web-7', 'start'), 'the operator stopped it: no start').toBe(0);
    expect(sim.controls.statusCode('web-7')).toBe(StatusCode.Stopped);
  });

  it('a crash alert still firing for an instance resolves when it is renamed away (nothing runs under the old name any more)', async () => {
    const { sim } = await start();
    sim.controls.crash('db-1');
    await until('the crash alert of db-1', () => sent().some((a) => a.kind === 'instance.crashed' && a.instance === 'db-1' && a.status === 'firing'));
    await until('db-1 renamed to db-9', async () => (await simApi(sim, 'POST', '/1.0/instances/db-1', { name: 'db-9' })) === 202);
    await until('the crash alert of the old name resolved', () =>
      sent().some((a) => a.kind === 'instance.crashed' && a.instance === 'db-1' && a.status === 'resolved'),
    );
  });
});

/** A call to the simulator's API as an operator's client makes it; answers the HTTP status. */
/** Whether an archived event is an instance-shutdown of `name`. */
const isShutdownOf =
  (name: string) =>
  (a: { event: { kind: string; action?: string; instance?: string } }): boolean =>
    a.event.kind === 'instance.status' && a.event.action === 'instance-shutdown' && a.event.instance === name;

/** Crashes the instance and answers the milliseconds until the simulator reads it Running again. */
async function healTime(stack: Stack, name: string): Promise<number> {
  const t0 = performance.now();
  stack.sim.controls.crash(name);
  await until(`${name} stopped`, () => stack.sim.controls.statusCode(name) !== StatusCode.Running, 5_000, 1);
  await until(`${name} Running again`, () => stack.sim.controls.statusCode(name) === StatusCode.Running, 15_000, 5);
  const took = performance.now() - t0;
  await until(`the heal of ${name} recorded`, async () =>
    (await new AuditLog(stack.redis, stack.keys.audit).read({ instance: name })).some((r) => r.type === 'outcome'),
  );
  return took;
}

describe('a contradicted stop redelivered (the event processor on the simulator)', () => {
  let sim: RunningSimulator;
  let client: InstanceClient;
  let target: string;
  const { redis, cleanups } = fileSimulator(quickSimTimings, (s) => ({ sim, client, target } = s));

  it('is recorded, counted in the tracker and alerted once however often its job runs, and never queues an action', async () => {
    sim.controls.addInstance({ name: 'again-1', config: optIn });
    const keys = keySpace(uniquePrefix('contra-redo'));
    const connection = redisClient();
    const actions = new Queue(keys.actionsQueue, { connection, prefix: keys.bullPrefix });
    cleanups.push(async () => {
      await actions.close();
      connection.disconnect();
    });
    const audit = new AuditLog(redis, keys.audit);
    const recording = recordingAlerts(audit);
    const tracker = new StateTracker(redis, keys);
    const { rules } = await loadRulesFolder(bundledRules);
    const processor = new EventProcessor({
      redis,
      keys,
      client: () => client,
      tracker,
      ownOperations: new OwnOperations(redis, keys),
      audit,
      engine: new RuleEngine(rules),
      gate: new ActionGate(redis, keys, new Silences(redis, keys.silences)),
      actions,
      pending: new PendingActions(redis, keys, actions, { audit }),
      logger: pino({ level: 'silent' }),
      alerts: recording.alerts,
      stopSettleMs: 200,
    });
    const event = crashEvent(target, 'again-1');
    const item = { kind: 'synthetic' as const, target, event, receivedAt: Date.now() };
    expect(await processor.process(item)).toEqual(['contradicted']);
    // The worker died before the done mark: the job runs again, and again side by side on two replicas.
    await redis.del(keys.eventDone(eventItemHash(item)));
    await Promise.all([processor.process(item), processor.process({ ...item })]);
    const records = await audit.read({ instance: 'again-1' });
    expect(records.map((r) => r.type).sort(), show(records)).toEqual(['alert', 'event']);
    expect(recording.raised.map((a) => a.kind)).toEqual(['event.contradicted']);
    expect((await tracker.get({ target, project: 'default', instance: 'again-1' }))?.status).toBe(StatusCode.Running);
    expect(await actions.getJobCounts('waiting', 'delayed', 'prioritized')).toEqual({ waiting: 0, delayed: 0, prioritized: 0 });
  });
});
