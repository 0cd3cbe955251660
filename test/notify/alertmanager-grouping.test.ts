import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { ReceiverConfigInput } from '../../src/notify/receiver-config.js';
import type { NotifierOptions } from '../../src/notify/notifier.js';
import { keySpace } from '../../src/redis/key-space.js';
import { matchingSilence, Silences } from '../../src/silences/silences.js';
import { crashAlert, fastTimings, closedAfterEach, type NotifierFixture, testWebhookSecret } from './notifier-fixture.js';
import type { RecordingServer } from './recording-server.js';
import { until } from '../support/wait.js';

interface Body {
  status: string;
  alerts: { instance: string; status: string; kind: string }[];
}

const at = (s: number) => new Date(Date.parse('2026-03-01T10:00:00.000Z') + s * 1000).toISOString();

describe('grouping as Alertmanager does it', () => {
  let fx: NotifierFixture;
  const { fixture, server } = closedAfterEach();
  const hook = (name: string, url: string, extra: Partial<ReceiverConfigInput> = {}) =>
    ({ kind: 'webhook', name, url, secretEnv: 'S', ...extra }) as ReceiverConfigInput;
  const bodies = (s: RecordingServer) => s.requests.map((r) => r.json as Body);
  const listed = (b: Body) => b.alerts.map((a) => `${a.instance}:${a.status}`);
  const replica = (opts: Omit<NotifierOptions, 'redis' | 'audit' | 'prefix' | 'env'>) => fx.replica({ ...opts, env: { S: testWebhookSecret } });
  /**
   * A notifier flushing a group at once, then every `groupIntervalMs`, that has sent the first
   * message: `first` firing. The interval is a real BullMQ delay: what a test does before the next
   * flush must fit in it on a loaded machine (nine notifier calls took over 800 ms in CI).
   */
  const firstMessageSent = async (first: string, groupIntervalMs: number) => {
    fx = fixture();
    const s = await server();
    const n = replica({ receivers: [hook('hook', s.url)], route: { receiver: 'hook', ...fastTimings, groupWaitMs: 0, groupIntervalMs } });
    await n.notify(crashAlert(first, { startsAt: at(0) }));
    await until('the first message', () => s.requests.length === 1);
    return { s, n };
  };

  it('alerts that fired and healed while a group waited for its next flush appear, resolved, in its next message, in the order they happened', async () => {
    const { s, n } = await firstMessageSent('c1', 4000);
    // Raised out of order (a slow replica): the message still lists them as they happened.
    for (const [i, name] of [
      [4, 'c5'],
      [2, 'c3'],
      [1, 'c2'],
      [3, 'c4'],
    ] as const)
      await n.notify(crashAlert(name, { startsAt: at(i) }));
    for (const name of ['c1', 'c2', 'c3', 'c4', 'c5'])
      await n.resolve((await n.notify(crashAlert(name, { startsAt: at(Number(name[1]) - 1) }))).fingerprint, { endsAt: at(10) });
    await until('the next message', () => s.requests.length === 2, 15_000);
    expect(listed(bodies(s)[0]!)).toEqual(['c1:firing']);
    expect(bodies(s)[1]!.status).toBe('resolved');
    expect(listed(bodies(s)[1]!)).toEqual(['c1:resolved', 'c2:resolved', 'c3:resolved', 'c4:resolved', 'c5:resolved']);
    await fx.quietFor(2);
    expect(s.requests).toHaveLength(2);
  });

  it('a group still firing lists an alert that fired and healed since its last message beside the firing ones', async () => {
    const { s, n } = await firstMessageSent('web-1', 3000);
    const brief = await n.notify(crashAlert('web-2', { startsAt: at(1) }));
    await n.resolve(brief.fingerprint, { endsAt: at(2) });
    await until('the next message', () => s.requests.length === 2);
    expect(bodies(s)[1]!.status).toBe('firing');
    expect(listed(bodies(s)[1]!)).toEqual(['web-1:firing', 'web-2:resolved']);
  });

  it('a receiver with sendResolved false gets firing alerts only, and no message when all cleared; another receiver of the same alerts gets the resolved ones', async () => {
    fx = fixture();
    const [all, firingOnly] = [await server(), await server()];
    const n = replica({
      receivers: [hook('all', all.url), hook('pager', firingOnly.url, { sendResolved: false })],
      // web-2's firing and healing must fall between two flushes (the expected second message lists it
      // resolved): an interval a loaded machine cannot overrun, as firstMessageSent's.
      route: {
        receiver: 'all',
        ...fastTimings,
        groupWaitMs: 0,
        groupIntervalMs: 3000,
        routes: [{ receiver: 'all', continue: true }, { receiver: 'pager' }],
      },
    });
    const a = await n.notify(crashAlert('web-1', { startsAt: at(0) }));
    await until('the firing messages', () => all.requests.length === 1 && firingOnly.requests.length === 1);
    const b = await n.notify(crashAlert('web-2', { startsAt: at(1) }));
    await n.resolve(b.fingerprint, { endsAt: at(2) });
    await until('web-2 resolved to the first receiver', () => all.requests.length === 2);
    await n.resolve(a.fingerprint, { endsAt: at(3) });
    await until('all resolved to the first receiver', () => all.requests.length === 3);
    await fx.quietFor(3);
    expect(bodies(all).map(listed)).toEqual([['web-1:firing'], ['web-1:firing', 'web-2:resolved'], ['web-1:resolved']]);
    expect(bodies(firingOnly).map(listed)).toEqual([['web-1:firing']]);
  });

  it('a firing storm alert inhibits the crash alerts of its member, not those of another member; inhibitRules [] turns that off', async () => {
    fx = fixture();
    const [s, plain] = [await server(), await server()];
    const route = { receiver: 'hook', ...fastTimings, groupBy: ['kind'] };
    const n = replica({ receivers: [hook('hook', s.url)], route });
    const storm = {
      kind: 'member.storm',
      severity: 'critical' as const,
      target: 'local',
      project: 'default',
      instance: 'member:node1',
      summary: 'storm on node1',
      correlationId: 'evt-storm',
      labels: {},
    };
    const crashes = [
      crashAlert('a-1', { member: 'node1', startsAt: at(0) }),
      crashAlert('b-1', { member: 'node2', startsAt: at(1) }),
      crashAlert('a-2', { member: 'node1', startsAt: at(2) }),
    ];
    await n.notify(storm);
    for (const c of crashes) await n.notify(c);
    await until('the storm and the crash messages', () => s.requests.length === 2);
    const byKind = Object.fromEntries(bodies(s).map((b) => [b.alerts[0]!.kind, listed(b)]));
    expect(byKind).toEqual({ 'member.storm': ['member:node1:firing'], 'instance.crashed': ['b-1:firing'] });
    await fx.close();

    // The same alerts with inhibitRules: [] (every replica of a deployment shares its settings).
    fx = fixture();
    const m = replica({ receivers: [hook('hook', plain.url)], route, inhibitRules: [] });
    await m.notify(storm);
    for (const c of crashes) await m.notify(c);
    // Every crash is sent: in one message, or in two when the group flushed between them (a loaded
    // machine), the second listing the group's firing alerts again with the new one.
    const crashed = () => [
      ...new Set(
        bodies(plain)
          .filter((b) => b.alerts[0]!.kind === 'instance.crashed')
          .flatMap((b) => b.alerts.map((a) => a.instance)),
      ),
    ];
    await until(
      'the storm message and every crash sent',
      () => bodies(plain).some((b) => b.alerts[0]!.kind === 'member.storm') && crashed().length >= 3,
    );
    expect(crashed()).toEqual(['a-1', 'b-1', 'a-2']);
  });

  it('a silence muting notifications only leaves its alerts out of messages (checked when the group flushes) but lets actions run; one muting actions only does the reverse', async () => {
    fx = fixture();
    const s = await server();
    const audit = new AuditLog(fx.redis, keySpace(fx.prefix).audit);
    const silences = new Silences(fx.redis, keySpace(fx.prefix).silences, audit);
    const n = replica({ receivers: [hook('hook', s.url)], route: { receiver: 'hook', ...fastTimings, groupWaitMs: 400 } });
    await n.notify(crashAlert('web-1', { startsAt: at(0) }));
    await n.notify(crashAlert('web-2', { startsAt: at(1) }));
    await n.notify(crashAlert('web-3', { startsAt: at(2) }));
    // Added after the alerts fired, before their group's first flush.
    const quiet = await silences.add({ scope: { instance: 'web-1' }, mutes: ['notifications'], reason: 'noisy', durationMs: 60_000 });
    const handsOff = await silences.add({ scope: { instance: 'web-2' }, mutes: ['actions'], reason: 'manual work', durationMs: 60_000 });
    await until('the message', () => s.requests.length === 1);
    await fx.quietFor(2);
    expect(s.requests).toHaveLength(1);
    expect(listed(bodies(s)[0]!)).toEqual(['web-2:firing', 'web-3:firing']);

    const list = await silences.list();
    const subject = (instance: string) => ({ target: 'local', project: 'default', location: 'none', instance });
    expect(matchingSilence(list, subject('web-1'))).toBeUndefined();
    expect(matchingSilence(list, subject('web-2'))?.id).toBe(handsOff.id);
    expect(matchingSilence(list, subject('web-1'), 'notifications')?.id).toBe(quiet.id);
    expect((await audit.read({ count: 10 })).filter((r) => r.type === 'silence').map((r) => r.summary)).toEqual([
      expect.stringMatching(new RegExp(`^silence ${quiet.id} added by .* mutes notifications of instance=web-1 \\(noisy\\)`)),
      expect.stringMatching(new RegExp(`^silence ${handsOff.id} added by .* mutes actions of instance=web-2 \\(manual work\\)`)),
    ]);
  });

  it('a new silence mutes both actions and notifications by default, actions only when scoped by a filter, and refuses notifications with a filter', async () => {
    fx = fixture();
    const silences = new Silences(fx.redis, keySpace(fx.prefix).silences);
    expect((await silences.add({ scope: { project: 'web' }, reason: 'r', durationMs: 1000 })).mutes).toEqual(['actions', 'notifications']);
    expect((await silences.add({ scope: { filter: 'config.user.tier eq db' }, reason: 'r', durationMs: 1000 })).mutes).toEqual(['actions']);
    await expect(
      silences.add({ scope: { filter: 'config.user.tier eq db' }, mutes: ['notifications'], reason: 'r', durationMs: 1000 }),
    ).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    // A silence stored before `mutes` existed muted actions only, and still does.
    await fx.redis.hset(
      keySpace(fx.prefix).silences,
      'old1',
      JSON.stringify({
        id: 'old1',
        scope: { instance: 'x' },
        reason: 'r',
        createdBy: 'u',
        createdAt: new Date().toISOString(),
        until: new Date(Date.now() + 60_000).toISOString(),
      }),
    );
    expect((await silences.list()).find((s) => s.id === 'old1')?.mutes).toEqual(['actions']);
  });
});
