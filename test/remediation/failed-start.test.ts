import { Queue } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog, type StoredAuditRecord } from '../../src/audit/audit-log.js';
import { StatusCode } from '../../src/client/status-code.js';
import { isFailedStart, StartFailures } from '../../src/events/intent.js';
import { OwnOperations } from '../../src/events/own-operations.js';
import { incidentOf } from '../../src/http/console/incident-story.js';
import { StateTracker } from '../../src/events/state-tracker.js';
import type { ReflexHandle } from '../../src/app/start-reflex.js';
import { startStack, type StackParts } from '../support/stack.js';
import { redisClient, redisUrl } from '../support/redis.js';
import type { SentAlert } from '../notify/recording-server.js';
import { until } from '../support/wait.js';

const optIn = { 'user.reflex.autorestart': 'true' };

/**
 * A start that fails (LXD: the operation fails, then the stop hook sends an `instance-shutdown`
 * without requestor, as after a crash) is not a crash: the bundled rule does not restart the
 * instance, no restart is counted, and one warning alert carries the daemon's error and log hint.
 * The simulator's `failNextStart` fault reproduces what LXD 5.0.2 sends (docs/events.md).
 */
describe('a failed start is not a crash (simulator, bundled rules)', () => {
  let stack: StackParts;
  let reflex: ReflexHandle | undefined;
  const redis = redisClient();
  const alerts = () => stack.webhook!.requests.flatMap((r) => (r.json as { alerts: SentAlert[] }).alerts);
  const trail = (instance: string): Promise<StoredAuditRecord[]> => new AuditLog(redis, stack.keys.audit).read({ instance });

  beforeEach(async () => {
    stack = await startStack({
      redisUrl: redisUrl(),
      simulator: { timings: { stopHookMs: 100 } },
      instances: [{ name: 'web-1', status: 'Stopped', config: optIn }],
      rules: 'rules',
      label: 'failstart',
      webhook: true,
      reflex: false,
    });
  });
  afterEach(async () => {
    reflex = undefined;
    await stack.stop();
    const keys = await redis.keys(`*${stack.prefix}*`);
    // One key a call: on a Redis Cluster the keys lie in different slots.
    await Promise.all(keys.map((k) => redis.del(k)));
  });

  async function startReflexOnSim(): Promise<void> {
    reflex = await stack.replica();
    await until('Reflex reading the event stream', () => Boolean(reflex?.subscriber?.connected));
  }

  /** The operator's `lxc start`, answered by the daemon's failure. */
  async function operatorStartFails(name: string): Promise<void> {
    stack.sim.controls.failNextStart(name);
    const op = await stack.client.changeState(name, { action: 'start', timeout: 30 });
    await expect(op.wait({ timeoutMs: 10_000 })).rejects.toThrow(/forkstart/);
  }

  it('an opted-in instance whose start fails is neither restarted nor counted; one warning alert names the error and the log, resolved once it runs', async () => {
    await startReflexOnSim();
    await operatorStartFails('web-1');

    // Written after the rules decided and queued whatever they queue: from here on, nothing more comes from this event.
    await until('the failed start in the audit', async () => (await trail('web-1')).some((r) => r.type === 'alert'));
    const records = await trail('web-1');
    const stop = records.find((r) => r.type === 'event' && (r as { event?: { action?: string } }).event?.action === 'instance-shutdown');
    expect((stop as { event?: { intent?: string } }).event?.intent).toBe('failed-start');
    expect(
      records.filter((r) => r.type === 'action' || r.type === 'call'),
      'nothing queued or called',
    ).toEqual([]);
    expect(records.find((r) => r.type === 'alert')!.summary).toMatch(
      /^web-1 failed to start and never ran: Failed to run: .*forkstart web-1 .*; not a crash/,
    );
    // The console tells it as what it is.
    expect(incidentOf(records.filter((r) => r.correlationId === stop!.correlationId))?.story).toMatch(
      /^default\/web-1 failed to start \(never ran\)/,
    );
    const restarts = stack.keys.restarts({ target: stop!.target!, project: 'default', instance: 'web-1' });
    expect(await redis.zcard(restarts), 'no restart reserved').toBe(0);
    expect(stack.sim.controls.calls('web-1', 'start'), 'only the operator started it').toBe(1);

    await until('the failed-start alert', () => alerts().length === 1);
    expect(alerts()[0]).toMatchObject({
      kind: 'instance.start-failed',
      status: 'firing',
      severity: 'warning',
      instance: 'web-1',
      actions: [],
      outcome: 'not restarted: the instance never ran, a failed start is not a crash',
    });
    expect(alerts()[0]!.summary).toContain('Try `lxc info --show-log web-1` for more info');

    // Fixed and started by the operator: the alert resolves.
    await (await stack.client.changeState('web-1', { action: 'start', timeout: 30 })).wait({ timeoutMs: 10_000 });
    await until('the resolved message', () => alerts().some((a) => a.status === 'resolved'));
    expect(
      alerts().filter((a) => a.status === 'firing'),
      'alerted once',
    ).toHaveLength(1);
    expect(alerts().at(-1)).toMatchObject({
      kind: 'instance.start-failed',
      status: 'resolved',
      summary: 'web-1 is Running (103) again, started through the API',
    });

    // It ran: its next unrequested stop is a crash again, and the bundled rule heals it.
    stack.sim.controls.crash('web-1');
    await until('the crash healed', async () => (await trail('web-1')).some((r) => r.type === 'outcome'), 15_000);
    expect(stack.sim.controls.statusCode('web-1')).toBe(StatusCode.Running);
    expect(await redis.zcard(restarts), 'the crash is restart 1 of the budget').toBe(1);
  });

  it("an operator's start that fails during a crash-loop back-off supersedes the delayed restart, audited", async () => {
    stack.sim.controls.addInstance({ name: 'db-1', config: optIn });
    await startReflexOnSim();
    stack.sim.controls.crash('db-1');
    await until('the first crash healed', async () => (await trail('db-1')).some((r) => r.type === 'outcome'), 15_000);
    await until('db-1 Running again', () => stack.sim.controls.statusCode('db-1') === StatusCode.Running);
    stack.sim.controls.crash('db-1');
    // The bundled rule's second restart waits out a back-off (10 s).
    await until(
      'the delayed restart queued',
      async () => (await trail('db-1')).some((r) => r.type === 'action' && /to run in \d+ ms/.test(r.summary)),
      15_000,
    );
    const delayed = (await trail('db-1')).find((r) => r.type === 'action' && /to run in/.test(r.summary)) as StoredAuditRecord & { jobId: string };

    await operatorStartFails('db-1');
    await until('the delayed restart superseded', async () =>
      (await trail('db-1')).some((r) => r.type === 'outcome' && r.summary.includes('superseded')),
    );
    const superseded = (await trail('db-1')).find((r) => r.type === 'outcome' && r.summary.includes('superseded'))!;
    expect(superseded).toMatchObject({ result: 'skipped', jobId: delayed.jobId });
    expect(superseded.summary).toMatch(/^start skipped: superseded by a start through the API that failed/);
    const keys = stack.keys;
    const actions = new Queue(keys.actionsQueue, { connection: redis, prefix: keys.bullPrefix });
    expect(await actions.getJob(delayed.jobId), 'the delayed job is gone').toBeUndefined();
    await actions.close();
  });

  it("knows the failed start from the daemon's operation list when its event has not been processed yet", async () => {
    await operatorStartFails('web-1');
    await until('web-1 Stopped', () => stack.sim.controls.statusCode('web-1') === StatusCode.Stopped);
    const keys = stack.keys;
    const ref = { target: 'local', project: 'default', instance: 'web-1' };
    const deps = { tracker: new StateTracker(redis, keys), client: stack.client, own: new OwnOperations(redis, keys) };
    const stop = { intent: 'unrequested' as const, action: 'instance-shutdown', timestamp: new Date().toISOString() };
    const refined = await new StartFailures(redis, keys).classify(ref, stop, deps);
    expect(refined.intent).toBe('failed-start');
    expect(refined.startFailure?.err).toMatch(/forkstart web-1/);
    // A stop of an instance last seen Running is a crash, whatever failed before.
    await deps.tracker.update(ref, StatusCode.Running, Date.now() - 1_000, { source: 'event' });
    expect((await new StartFailures(redis, keys).classify(ref, stop, deps)).intent).toBe('unrequested');
  });
});

describe('which failed operation is a failed launch', () => {
  const failedOp = (description: string, err: string) =>
    ({
      kind: 'operation.status',
      id: 'op-event',
      target: 'local',
      location: 'none',
      project: 'default',
      timestamp: new Date().toISOString(),
      synthetic: false,
      operationId: 'op-1',
      description,
      instances: ['web-1'],
      to: StatusCode.Failure,
      err,
    }) as unknown as Parameters<typeof isFailedStart>[0];

  it('is a start or launch that failed, not a start refused because the instance already runs (it ran)', () => {
    expect(isFailedStart(failedOp('Starting instance', 'Failed to run: forkstart web-1: exit status 1'))).toBe(true);
    expect(isFailedStart(failedOp('Creating instance', 'Failed to run: forkstart web-1: exit status 1'))).toBe(true);
    expect(isFailedStart(failedOp('Starting instance', 'The instance is already running'))).toBe(false);
    expect(isFailedStart(failedOp('Stopping instance', 'The instance is already stopped'))).toBe(false);
  });
});
