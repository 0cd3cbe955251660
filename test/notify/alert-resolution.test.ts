import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { CanonicalEvent } from '../../src/events/canonical-event.js';
import { actionFailedKind, Alerts, crashLoopKind, openAlertsIn } from '../../src/alerts/alerts.js';
import { InstanceAlerts } from '../../src/notify/instance-alerts.js';
import { keySpace } from '../../src/redis/key-space.js';
import { NotifierFixture, closeNotifier } from './notifier-fixture.js';
import { startRecordingServer, type RecordingServer } from './recording-server.js';
import { until } from '../support/wait.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

interface Body {
  alerts: { kind: string; status: string; instance: string; summary: string }[];
}

const running: CanonicalEvent = {
  kind: 'instance.status',
  id: 'evt-run',
  target: 'local',
  location: 'node1',
  project: 'default',
  timestamp: new Date(Date.now() + 1000).toISOString(),
  synthetic: false,
  instance: 'web-1',
  from: 102,
  to: 103,
  intent: 'requested',
  action: 'instance-started',
};
const raised = (kind: string, instance: string) => ({
  kind,
  severity: 'critical' as const,
  target: 'local',
  project: 'default',
  instance,
  member: 'node1',
  summary: `${kind} on ${instance}`,
  correlationId: `evt-${kind}`,
  labels: {},
});

/** The alerts about an instance or its member that its recovery ends, besides its crash alert. */
describe('a recovery resolves the alerts it ends', () => {
  let fx: NotifierFixture;
  let server: RecordingServer;
  afterEach(() => closeNotifier(fx, server));

  async function setup(inStorm: boolean) {
    fx = new NotifierFixture();
    server = await startRecordingServer();
    const notifier = fx.webhookReplica(server.url, { groupBy: ['kind'] });
    const audit = new AuditLog(fx.redis, keySpace(fx.prefix).audit);
    return {
      notifier,
      audit,
      alerts: new InstanceAlerts({ notifier, redis: fx.redis, alerts: new Alerts({ audit, notifier }), inStorm: async () => inStorm }),
    };
  }
  const sent = () => server.requests.flatMap((r) => (r.json as Body).alerts.map((a) => `${a.kind} ${a.instance}:${a.status}`)).sort();

  it('crash-loop of the instance and the storm of its member, once the member is out of the storm; each resolution audited', async () => {
    const { notifier, audit, alerts } = await setup(false);
    await notifier.notify(raised('instance.crash-loop', 'web-1'));
    await notifier.notify(raised('member.storm', 'member:node1'));
    await until('both firing messages', () => server.requests.length === 2);
    await alerts.observe(running, []);
    await until('both resolved messages', () => server.requests.length === 4);
    expect(sent()).toEqual([
      'instance.crash-loop web-1:firing',
      'instance.crash-loop web-1:resolved',
      'member.storm member:node1:firing',
      'member.storm member:node1:resolved',
    ]);
    const trail = (await audit.read({ count: 20 }))
      .filter((r) => r.type === 'alert')
      .map((r) => r.summary)
      .sort();
    expect(trail).toEqual([
      'instance.crash-loop resolved: web-1 is Running (103) again, started through the API',
      'member.storm resolved: the failure storm on node1 is over: no rule is held there any more, and web-1 is Running (103) again, started through the API',
    ]);
  });

  it('a storm still held on the member stays firing', async () => {
    const { notifier, alerts } = await setup(true);
    await notifier.notify(raised('member.storm', 'member:node1'));
    await until('the firing message', () => server.requests.length === 1);
    await alerts.observe(running, []);
    expect((await notifier.board.firing()).map((a) => a.kind)).toEqual(['member.storm']);
  });
});

/** Without a notifier the alerts raised are kept open in a hash: a recovery ends them from there. */
describe('a recovery without a notifier', () => {
  const redis = redisClient();
  const keys = keySpace(uniquePrefix('recovery'));
  afterAll(() => redis.disconnect());

  it("asks whether a crashed instance runs again since and whether its member is in a storm together, then raises the crash's alert", async () => {
    const asked: string[] = [];
    const audit = new AuditLog(redis, keys.audit);
    const instanceAlerts = new InstanceAlerts({
      redis,
      alerts: new Alerts({ audit, open: openAlertsIn(redis, keys.openAlerts) }),
      runningSince: async () => {
        asked.push('running since?');
        await new Promise((answered) => setImmediate(answered));
        asked.push('not running');
        return undefined;
      },
      inStorm: async () => {
        asked.push('in a storm?');
        return false;
      },
    });
    const crash: CanonicalEvent = { ...running, id: 'evt-crash-asked', from: 103, to: 102, intent: 'unrequested', action: 'instance-shutdown' };
    await instanceAlerts.observe(crash, []);
    expect(asked.slice(0, 3)).toEqual(['running since?', 'in a storm?', 'not running']);
    expect((await audit.read({ count: 20 })).filter((r) => r.correlationId === 'evt-crash-asked').map((r) => r.kind)).toEqual(['instance.crashed']);
  });

  it('reads the alerts kept open in one round trip, and ends each one firing, audited', async () => {
    let rounds = 0;
    let inFlight = 0;
    // A read sent while none is answered yet leaves in the same round trip as the reads before it.
    const counted = <T>(read: Promise<T>): Promise<T> => {
      if (inFlight++ === 0) rounds++;
      return read.finally(() => inFlight--);
    };
    const open = openAlertsIn(
      {
        hset: (key, field, value) => redis.hset(key, field, value),
        hget: (key, field) => counted(redis.hget(key, field)),
        hmget: (key, ...fields) => counted(redis.hmget(key, ...fields)),
        hdel: (key, field) => redis.hdel(key, field),
        hvals: (key) => counted(redis.hvals(key)),
      },
      keys.openAlerts,
    );
    const audit = new AuditLog(redis, keys.audit);
    const alerts = new Alerts({ audit, open });
    for (const kind of ['instance.crashed', actionFailedKind, crashLoopKind])
      await alerts.raise({ ...raised(kind, 'web-1'), startsAt: running.timestamp });
    rounds = 0;
    await new InstanceAlerts({ redis, alerts }).observe(running, []);
    expect(rounds).toBe(1);
    expect(await open.list()).toEqual([]);
    const ended = (await audit.read({ count: 20 })).filter((r) => r.resolved === true).map((r) => r.kind);
    expect(ended.sort()).toEqual([actionFailedKind, crashLoopKind, 'instance.crashed'].sort());
  });
});
