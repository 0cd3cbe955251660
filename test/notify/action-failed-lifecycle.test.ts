import { Queue } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { duplicateConnection } from '../../src/redis/connect.js';
import type { ActionJobInput } from '../../src/actions/action-job.js';
import { startStack, type Stack } from '../support/stack.js';
import { redisClient, redisUrl } from '../support/redis.js';
import { testWebhookSecret } from './notifier-fixture.js';
import { startRecordingServer, type RecordingServer } from './recording-server.js';
import { until } from '../support/wait.js';

interface Body {
  status: string;
  alerts: { kind: string; status: string; instance: string; summary: string; outcome?: string; correlationId: string }[];
}

/** The `action.failed` alert: fires when an action gives up, resolves when its instance is fine again, fires anew on the next give-up. */
describe('the action.failed alert has a lifecycle', () => {
  let stack: Stack;
  let server: RecordingServer;

  beforeEach(async () => {
    // The rules folder's receiver reads its URL and secret from these.
    server = await startRecordingServer();
    process.env.REFLEX_TEST_HOOK_URL = server.url;
    process.env.REFLEX_TEST_HOOK_KEY = testWebhookSecret;
    stack = await startStack({
      redisUrl: redisUrl(),
      simulator: { timings: { startMs: 200, stopHookMs: 50 } },
      instances: [{ name: 'web-1', config: { 'user.reflex.autorestart': 'true' } }],
      rules: 'test/fixtures/rules-notify',
      label: 'afail',
      // One attempt: an injected failure is the give-up at once.
      config: { actionAttempts: 1 },
    });
  });
  afterEach(async () => {
    await stack.stop();
    await server.close();
    const redis = redisClient();
    const keys = await redis.keys(`${stack.prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  /** The action-failed alerts of each message, as `status:instance`. */
  const actionFailed = () => server.requests.map((r) => r.json as Body).flatMap((b) => b.alerts.filter((a) => a.kind === 'action.failed'));
  const statuses = () => actionFailed().map((a) => a.status);
  /** Queues a snapshot of web-1 as an operator's job (the executor runs it like any action). */
  async function operatorSnapshot(n: number): Promise<void> {
    const { keys } = stack;
    const queue = new Queue(keys.actionsQueue, { connection: duplicateConnection(stack.redis), prefix: keys.bullPrefix });
    const job: ActionJobInput = {
      rule: 'heal',
      action: 'snapshot',
      params: { name: `manual-${n}` },
      target: stack.reflex.targets[0]!,
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
    (await new AuditLog(stack.redis, stack.keys.audit).read({ count: 500 })).filter((r) => r.type === 'alert').map((r) => r.summary);

  it('fires when the restart of a crash gives up, resolves when the instance is Running again, and a later give-up fires a new message', async () => {
    stack.sim.controls.failNext('web-1', 1, 'Injected failure: start refused');
    stack.sim.controls.crash('web-1');
    await until('the action-failed firing message', () => statuses().includes('firing'), 15_000);
    expect(actionFailed()[0]).toMatchObject({ instance: 'web-1', summary: expect.stringMatching(/^start on web-1 gave up after 1 attempt\(s\)/) });

    // The operator starts it: healthy again.
    await (await stack.client.changeState('web-1', { action: 'start', timeout: 30 })).wait({ timeoutMs: 10_000 });
    await until('the action-failed resolved message', () => statuses().includes('resolved'), 15_000);
    expect(actionFailed().find((a) => a.status === 'resolved')).toMatchObject({
      summary: 'web-1 is Running (103) again, started through the API',
      outcome: 'recovered',
    });

    // A new failure episode on the same instance is news again. (Not a second crash: one within 5 s
    // of Reflex's failed start is taken for that start's echo, by design.)
    stack.sim.controls.failNext('web-1', 1, 'Injected failure: snapshot refused');
    await operatorSnapshot(1);
    await until('a new action-failed firing message', () => statuses().length === 3, 15_000);
    expect(statuses()).toEqual(['firing', 'resolved', 'firing']);
    expect(actionFailed()[2]!.summary).toMatch(/^snapshot on web-1 gave up/);
    const trail = await audited();
    expect(trail.filter((s) => / on web-1 gave up/.test(s))).toHaveLength(2);
    expect(trail.filter((s) => s.startsWith('action.failed resolved: web-1 is Running (103) again'))).toHaveLength(1);
  });

  it('resolves when a later action on the instance succeeds, with the instance Running throughout', async () => {
    stack.sim.controls.failNext('web-1', 1, 'Injected failure: snapshot refused');
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
