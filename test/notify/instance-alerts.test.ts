import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ActionGate } from '../../src/remediation/decide/action-gate.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { CanonicalEvent } from '../../src/events/canonical-event.js';
import { Alerts } from '../../src/alerts/alerts.js';
import { InstanceAlerts } from '../../src/notify/instance-alerts.js';
import { keySpace } from '../../src/redis/key-space.js';
import { StateTracker } from '../../src/events/state-tracker.js';
import { Silences } from '../../src/silences/silences.js';
import type { ReflexHandle } from '../../src/app/start-reflex.js';
import { startStack, type StackParts } from '../support/stack.js';
import { redisClient, redisUrl } from '../support/redis.js';
import { NotifierFixture, notificationsSettled, testWebhookSecret, closeNotifier } from './notifier-fixture.js';
import { startRecordingServer, type RecordingServer, type SentAlert } from './recording-server.js';
import { until } from '../support/wait.js';

interface Body {
  status: string;
  alerts: SentAlert[];
}

const optIn = { 'user.reflex.autorestart': 'true' };

describe('instance alerts from the pipeline', () => {
  let stack: StackParts;
  let server: RecordingServer;
  const replicas: ReflexHandle[] = [];
  const bodies = () => server.requests.map((r) => r.json as Body);
  /** Waits until nothing more can be sent: every group settled, every delivery done. */
  const settled = () => until('every group settled and every delivery done', () => notificationsSettled(stack.redis, stack.prefix));

  beforeEach(async () => {
    // The rules folder's receiver reads its URL and secret from these.
    server = await startRecordingServer();
    process.env.REFLEX_TEST_HOOK_URL = server.url;
    process.env.REFLEX_TEST_HOOK_KEY = testWebhookSecret;
    stack = await startStack({
      redisUrl: redisUrl(),
      // A start slower than the group wait, so the firing message goes out before the recovery.
      simulator: { timings: { startMs: 1_500, stopHookMs: 100 } },
      instances: [
        { name: 'web-1', config: optIn },
        { name: 'batch-1', config: {} },
      ],
      rules: 'test/fixtures/rules-notify',
      label: 'ialert',
      reflex: false,
    });
  });
  afterEach(async () => {
    replicas.splice(0);
    await stack.stop();
    await server.close();
    const redis = redisClient();
    const keys = await redis.keys(`${stack.prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  /** Starts `count` replicas of Reflex on the stack and waits until one reads the event stream. */
  async function startReplicas(count: number): Promise<void> {
    for (let i = 0; i < count; i++) replicas.push(await stack.replica());
    await until('a replica reading the event stream', () => replicas.some((r) => r.subscriber?.connected));
  }

  it('a crash followed by recovery yields one alert and one resolved message, with two replicas running', async () => {
    await startReplicas(2);
    stack.sim.controls.crash('web-1');
    await until('the firing and the resolved message', () => server.requests.length >= 2, 15_000);
    await settled();
    expect(bodies().map((b) => [b.status, b.alerts.map((a) => `${a.kind} ${a.instance}:${a.status}`)])).toEqual([
      ['firing', ['instance.crashed web-1:firing']],
      ['resolved', ['instance.crashed web-1:resolved']],
    ]);
    const [firing, resolved] = bodies().map((b) => b.alerts[0]!);
    // What happened and what Reflex will do, with the link to the instance's trail.
    expect(firing).toMatchObject({
      severity: 'warning',
      project: 'default',
      summary: 'web-1 stopped without a request (a crash or a guest poweroff)',
      actions: [{ action: 'start', result: 'queued', summary: 'by rule restart-on-crash' }],
      auditUrl: 'http://127.0.0.1:9464/dashboard?instance=web-1',
    });
    // What Reflex did, with the operation id and the outcome, on the same incident.
    expect(resolved).toMatchObject({
      summary: 'web-1 is Running (103) again, started by Reflex',
      outcome: 'restarted',
      correlationId: firing!.correlationId,
      endsAt: expect.any(String),
    });
    expect(resolved!.actions).toEqual([{ action: 'start', result: 'done', summary: expect.any(String), operationId: expect.any(String) }]);
    // The ids are the audit trail's: the crash event is the incident, the operation the start's.
    const trail = await new AuditLog(stack.redis, stack.keys.audit).read({ instance: 'web-1' });
    expect(trail.filter((r) => r.correlationId === firing!.correlationId).map((r) => r.type)).toEqual(
      expect.arrayContaining(['event', 'decision', 'action', 'call', 'outcome', 'notification']),
    );
    const outcome = trail.find((r) => r.type === 'outcome') as { operationId?: string } | undefined;
    expect(resolved!.actions[0]!.operationId).toBe(outcome?.operationId);
    expect(new Set(server.requests.map((r) => r.headers['webhook-id'])).size).toBe(2);
  });

  it('a crash no rule remediates is a critical alert saying so, resolved when someone starts the instance', async () => {
    await startReplicas(1);
    stack.sim.controls.crash('batch-1');
    await until('the firing message', () => server.requests.length === 1);
    expect(bodies()[0]!.alerts[0]).toMatchObject({
      kind: 'instance.crashed',
      severity: 'critical',
      instance: 'batch-1',
      actions: [],
      outcome: 'not remediated: rule restart-on-crash skipped: instance has not opted in (user.reflex.autorestart is not true)',
    });
    await (await stack.client.changeState('batch-1', { action: 'start', timeout: 30 })).wait({ timeoutMs: 10_000 });
    await until('the resolved message', () => server.requests.length === 2);
    expect(bodies()[1]!.alerts[0]).toMatchObject({
      status: 'resolved',
      summary: 'batch-1 is Running (103) again, started through the API',
      outcome: 'recovered',
    });
  });

  it('an instance a resync finds in Error is an instance.error alert, resolved when Reflex has started it again', async () => {
    await startReplicas(1);
    // The daemon sends no event for Error (112): only a resync sees it.
    stack.sim.controls.setError('web-1');
    await replicas[0]!.resync();
    await until('the firing and the resolved message', () => server.requests.length >= 2, 15_000);
    await settled();
    expect(bodies().map((b) => [b.status, b.alerts.map((a) => `${a.kind}:${a.status}`)])).toEqual([
      ['firing', ['instance.error:firing']],
      ['resolved', ['instance.error:resolved']],
    ]);
    expect(bodies()[0]!.alerts[0]!.summary).toBe('web-1 reports Error (112)');
    expect(bodies()[1]!.alerts[0]).toMatchObject({
      outcome: 'restarted',
      actions: [{ action: 'start', result: 'done', operationId: expect.any(String) }],
    });
  });
});

describe('instance alerts on redelivery', () => {
  let fx: NotifierFixture;
  let server: RecordingServer;
  afterEach(() => closeNotifier(fx, server));

  const event = (over: Partial<Extract<CanonicalEvent, { kind: 'instance.status' }>>): CanonicalEvent => ({
    kind: 'instance.status',
    id: 'evt-crash-1',
    target: 'local',
    location: 'none',
    project: 'default',
    timestamp: '2025-01-02T03:04:05.000000000+00:00',
    synthetic: false,
    instance: 'web-1',
    from: 103,
    to: 102,
    intent: 'unrequested',
    action: 'instance-shutdown',
    ...over,
  });
  const queued = [{ rule: 'restart-on-crash', result: 'queued' as const, summary: 'matched', actions: [{ action: 'start', delayMs: 0 }] }];

  it('the same crash and recovery seen again (a retried job, another replica) send nothing more, and a crash older than the recovery reopens nothing', async () => {
    fx = new NotifierFixture();
    server = await startRecordingServer();
    const replica = () => {
      const notifier = fx.webhookReplica(server.url);
      return new InstanceAlerts({ redis: fx.redis, notifier, alerts: new Alerts({ audit: fx.audit, notifier }) });
    };
    const [a, b] = [replica(), replica()];
    await Promise.all([a.observe(event({}), queued), b.observe(event({}), queued)]);
    await until('the firing message', () => server.requests.length === 1);
    await a.observe(event({}), queued);
    const running = event({
      id: 'evt-run-1',
      timestamp: '2025-01-02T03:04:09.000000000+00:00',
      from: 102,
      to: 103,
      intent: 'requested',
      action: 'instance-started',
    });
    await Promise.all([a.observe(running, []), b.observe(running, [])]);
    await until('the resolved message', () => server.requests.length === 2);
    await b.observe(running, []);
    await a.observe(event({}), queued);
    await fx.quietFor(4);
    expect(server.requests.map((r) => (r.json as Body).status)).toEqual(['firing', 'resolved']);
  });

  it('holds back per-instance crash alerts while their member is in a failure storm (storm control sends one grouped alert), not on other members', async () => {
    fx = new NotifierFixture();
    server = await startRecordingServer();
    const notifier = fx.webhookReplica(server.url);
    // Real storm control on the same Redis: two failing remediations on member node1 make a storm there.
    const ks = keySpace(fx.prefix);
    const gate = new ActionGate(fx.redis, ks, new Silences(fx.redis, ks.silences), undefined, { storm: { threshold: 2, windowMs: 60_000 } });
    const alerts = new InstanceAlerts({
      redis: fx.redis,
      notifier,
      alerts: new Alerts({ audit: fx.audit, notifier }),
      inStorm: (e) => gate.inStorm(e),
    });
    const onNode1 = [event({ location: 'node1' }), event({ id: 'evt-crash-2', instance: 'web-2', location: 'node1' })];
    for (const e of onNode1)
      await gate.storms!.failed(
        { target: e.target, location: 'node1', project: e.project, instance: ('instance' in e ? e.instance : undefined) ?? '', rule: 'heal' },
        'test',
      );
    for (const e of onNode1) await alerts.observe(e, []);
    await fx.quietFor(4);
    expect(server.requests).toHaveLength(0);
    // Another member is not in the storm: its crash alerts as usual.
    await alerts.observe(event({ id: 'evt-crash-3', instance: 'web-3', location: 'node2' }), []);
    await until('the firing message of the crash on another member', () => server.requests.length === 1);
  });

  it('raises nothing for a crash whose recovery was handled first (its job resumed after the replica that took it died): nothing would ever resolve it', async () => {
    fx = new NotifierFixture();
    server = await startRecordingServer();
    const notifier = fx.webhookReplica(server.url);
    const tracker = new StateTracker(fx.redis, keySpace(fx.prefix));
    const alerts = new InstanceAlerts({
      redis: fx.redis,
      notifier,
      alerts: new Alerts({ audit: fx.audit, notifier }),
      runningSince: async (e) => {
        const now = await tracker.get({ target: e.target, project: e.project, instance: e.instance });
        return now && now.status === 103 && now.eventId !== e.id && now.at >= Date.parse(e.timestamp) ? now.at : undefined;
      },
    });
    const crash = event({ id: 'evt-crash-late' });
    const ref = { target: crash.target, project: crash.project, instance: 'web-1' };
    await tracker.update(ref, 102, Date.parse(crash.timestamp), { source: 'event', eventId: crash.id, intent: 'unrequested' });
    // The restart's Running, handled by the other replica while this crash's job waited for its lock.
    await tracker.update(ref, 103, Date.parse(crash.timestamp) + 4_000, { source: 'event', eventId: 'evt-run-2', intent: 'self' });
    await alerts.observe(crash, queued);
    await fx.quietFor(4);
    expect(server.requests).toHaveLength(0);
    expect((await fx.audit.read({ instance: 'web-1' })).filter((r) => r.type === 'alert')).toEqual([]);
  });
});
