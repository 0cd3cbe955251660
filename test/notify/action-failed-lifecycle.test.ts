import { Queue } from 'bullmq';
import { pino } from 'pino';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseConfig } from '../../src/config/config.js';
import { targetsOf } from '../../src/config/config-target.js';
import { duplicateConnection } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import type { ActionJobInput } from '../../src/actions/action-job.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { startReflex, type ReflexHandle } from '../../src/app/start-reflex.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { testWebhookSecret } from './notifier-fixture.js';
import { startRecordingServer, type RecordingServer } from './recording-server.js';
import { until } from '../support/wait.js';
import { simReflexConfig } from '../support/sim-reflex-config.js';

interface Body {
  status: string;
  alerts: { kind: string; status: string; instance: string; summary: string; outcome?: string; correlationId: string }[];
}

/** The `action.failed` alert: fires when an action gives up, resolves when its instance is fine again, fires anew on the next give-up. */
describe('the action.failed alert has a lifecycle', () => {
  let sim: RunningSimulator;
  let server: RecordingServer;
  let reflex: ReflexHandle | undefined;
  let prefix: string;
  const redis = redisClient();

  beforeEach(async () => {
    server = await startRecordingServer();
    process.env.REFLEX_TEST_HOOK_URL = server.url;
    process.env.REFLEX_TEST_HOOK_KEY = testWebhookSecret;
    sim = await startSimulator({ instances: 0, timings: { startMs: 200, stopHookMs: 50 } });
    sim.controls.addInstance({ name: 'web-1', config: { 'user.reflex.autorestart': 'true' } });
    prefix = uniquePrefix('afail');
    // One attempt: an injected failure is the give-up at once.
    const config = simReflexConfig(sim, prefix, { rulesDir: 'test/fixtures/rules-notify', resyncGraceMs: 100, leaseTtlMs: 600, actionAttempts: 1 });
    reflex = await startReflex(config, pino({ level: 'silent' }));
    await until('Reflex reading the event stream', () => !!reflex?.subscriber?.connected);
  });
  afterEach(async () => {
    await reflex?.stop();
    await sim.stop();
    await server.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
  });
  afterAll(() => redis.disconnect());

  /** The action-failed alerts of each message, as `status:instance`. */
  const actionFailed = () => server.requests.map((r) => r.json as Body).flatMap((b) => b.alerts.filter((a) => a.kind === 'action.failed'));
  const statuses = () => actionFailed().map((a) => a.status);
  /** Queues a snapshot of web-1 as an operator's job (the executor runs it like any action). */
  async function operatorSnapshot(n: number): Promise<void> {
    const keys = keySpace(prefix);
    const queue = new Queue(keys.actionsQueue, { connection: duplicateConnection(redis), prefix: keys.bullPrefix });
    const job: ActionJobInput = {
      rule: 'heal',
      action: 'snapshot',
      params: { name: `manual-${n}` },
      target: reflex!.targets[0]!,
      project: 'default',
      instance: 'web-1',
      correlationId: `snap-${n}`,
      incidentAt: Date.now(),
      origin: 'operator',
      dryRun: false,
    };
    await queue.add('snapshot', job, { jobId: `snap-${n}` });
    await queue.close();
  }
  const audited = async () =>
    (await new AuditLog(redis, keySpace(prefix).audit).read({ count: 500 })).filter((r) => r.type === 'alert').map((r) => r.summary);

  it('fires when the restart of a crash gives up, resolves when the instance is Running again, and a later give-up fires a new message', async () => {
    sim.controls.failNext('web-1', 1, 'Injected failure: start refused');
    sim.controls.crash('web-1');
    await until('the action-failed firing message', () => statuses().includes('firing'), 15_000);
    expect(actionFailed()[0]).toMatchObject({ instance: 'web-1', summary: expect.stringMatching(/^start on web-1 gave up after 1 attempt\(s\)/) });

    // The operator starts it: healthy again.
    const client = new InstanceClient(targetsOf(parseConfig({ target: `unix://${sim.socketPath}`, redisUrl: redisUrl() }))[0]!.target);
    await (await client.changeState('web-1', { action: 'start', timeout: 30 })).wait({ timeoutMs: 10_000 });
    await client.close();
    await until('the action-failed resolved message', () => statuses().includes('resolved'), 15_000);
    expect(actionFailed().find((a) => a.status === 'resolved')).toMatchObject({
      summary: 'web-1 is Running (103) again, started through the API',
      outcome: 'recovered',
    });

    // A new failure episode on the same instance is news again. (Not a second crash: one within 5 s
    // of Reflex's failed start is taken for that start's echo, by design.)
    sim.controls.failNext('web-1', 1, 'Injected failure: snapshot refused');
    await operatorSnapshot(1);
    await until('a new action-failed firing message', () => statuses().length === 3, 15_000);
    expect(statuses()).toEqual(['firing', 'resolved', 'firing']);
    expect(actionFailed()[2]!.summary).toMatch(/^snapshot on web-1 gave up/);
    const trail = await audited();
    expect(trail.filter((s) => / on web-1 gave up/.test(s))).toHaveLength(2);
    expect(trail.filter((s) => s.startsWith('action.failed resolved: web-1 is Running (103) again'))).toHaveLength(1);
  });

  it('resolves when a later action on the instance succeeds, with the instance Running throughout', async () => {
    sim.controls.failNext('web-1', 1, 'Injected failure: snapshot refused');
    await operatorSnapshot(1);
    await until('the action-failed firing message', () => statuses().includes('firing'), 15_000);
    await operatorSnapshot(2);
    await until('the action-failed resolved message', () => statuses().includes('resolved'), 15_000);
    expect(actionFailed().find((a) => a.status === 'resolved')).toMatchObject({
      summary: expect.stringMatching(/^a later snapshot on web-1 succeeded/),
      outcome: 'remediated',
      correlationId: 'snap-1',
    });
    expect(await audited()).toContainEqual(expect.stringMatching(/^action.failed resolved: a later snapshot on web-1 succeeded/));
  });
});
