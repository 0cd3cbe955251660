import { afterEach, describe, expect, it } from 'vitest';
import type { ReceiverConfigInput } from '../../src/notify/receiver-config.js';
import { crashAlert, fastTimings, NotifierFixture, testWebhookSecret, closeNotifier } from './notifier-fixture.js';
import { startRecordingServer, type RecordingServer } from './recording-server.js';
import { until } from '../support/wait.js';
import { VirtualClock } from '../support/virtual-clock.js';

interface Body {
  status: string;
  groupLabels: Record<string, string>;
  alerts: { instance: string; project: string; status: string }[];
}

describe('grouping and rate limits', () => {
  let fx: NotifierFixture;
  let server: RecordingServer;
  afterEach(() => closeNotifier(fx, server));
  const hook = (extra: Partial<ReceiverConfigInput> = {}) =>
    ({ kind: 'webhook', name: 'hook', url: server.url, secretEnv: 'S', ...extra }) as ReceiverConfigInput;
  const bodies = () => server.requests.map((r) => r.json as Body);

  it('alerts of one group raised within group wait go out as one message listing every instance', async () => {
    fx = new NotifierFixture();
    server = await startRecordingServer();
    const notifier = fx.replica({
      receivers: [hook()],
      env: { S: testWebhookSecret },
      route: { receiver: 'hook', ...fastTimings, groupWaitMs: 300 },
    });
    for (const i of ['web-1', 'web-2', 'web-3']) await notifier.notify(crashAlert(i));
    await notifier.notify(crashAlert('db-1', { project: 'billing' }));
    await until('one message per group', () => server.requests.length === 2);
    await fx.quietFor(2);
    expect(server.requests).toHaveLength(2);
    const byProject = Object.fromEntries(bodies().map((b) => [b.groupLabels.project, b.alerts.map((a) => a.instance).sort()]));
    expect(byProject).toEqual({ default: ['web-1', 'web-2', 'web-3'], billing: ['db-1'] });
    expect(bodies()[0]!.groupLabels).toEqual({ kind: 'instance.crashed', project: expect.any(String) });
  });

  it('an alert joining a group already notified is sent at the next group interval with the group', async () => {
    fx = new NotifierFixture();
    server = await startRecordingServer();
    const notifier = fx.replica({ receivers: [hook()], env: { S: testWebhookSecret }, route: { receiver: 'hook', ...fastTimings } });
    await notifier.notify(crashAlert('web-1'));
    await until('the first message', () => server.requests.length === 1);
    const first = server.requests[0]!.at;
    await notifier.notify(crashAlert('web-2'));
    await until('the second message', () => server.requests.length === 2);
    expect(server.requests[1]!.at - first).toBeGreaterThanOrEqual(fastTimings.groupIntervalMs - 50);
    expect(
      bodies()[1]!
        .alerts.map((a) => a.instance)
        .sort(),
    ).toEqual(['web-1', 'web-2']);
  });

  it('an unchanged firing group is sent again once the repeat interval has passed, not a millisecond before (virtual time)', async () => {
    fx = new NotifierFixture();
    server = await startRecordingServer();
    const clock = new VirtualClock();
    const notifier = fx.replica({
      receivers: [hook()],
      env: { S: testWebhookSecret },
      route: { receiver: 'hook', ...fastTimings, repeatIntervalMs: 3_600_000 },
      clock,
    });
    await notifier.notify(crashAlert('web-1'));
    await until('the first message', () => server.requests.length === 1);
    clock.advance(3_600_000 - 1);
    await fx.quietFor(2);
    expect(server.requests).toHaveLength(1);
    clock.advance(1);
    await until('the repeat', () => server.requests.length === 2);
    expect(server.requests.map((r) => (r.json as { repeat: boolean }).repeat)).toEqual([false, true]);
  });

  it('a receiver’s rate limit spreads messages over windows without dropping any', async () => {
    fx = new NotifierFixture();
    server = await startRecordingServer();
    const notifier = fx.replica({
      receivers: [hook({ rateLimit: { count: 1, windowMs: 400 } })],
      env: { S: testWebhookSecret },
      route: { receiver: 'hook', ...fastTimings, groupBy: ['instance'] },
    });
    const start = Date.now();
    for (const i of ['a', 'b', 'c']) await notifier.notify(crashAlert(i));
    await until('all three messages', () => server.requests.length === 3, 6000);
    const at = server.requests.map((r) => r.at).sort((x, y) => x - y);
    // One message per 400 ms window (windows aligned to the clock, the first no earlier than the
    // start's): the third is admitted two windows later at the soonest, and arrives after. Measured
    // from the start, not between arrivals: a loaded machine can deliver the first one late.
    expect(at[2]!).toBeGreaterThanOrEqual((Math.floor(start / 400) + 2) * 400);
    expect(at[1]! - at[0]!).toBeGreaterThan(0);
  });

  it('two replicas share the rate limit', async () => {
    fx = new NotifierFixture();
    server = await startRecordingServer();
    const opts = {
      receivers: [hook({ rateLimit: { count: 2, windowMs: 1000 } })],
      env: { S: testWebhookSecret },
      route: { receiver: 'hook', ...fastTimings, groupBy: ['instance'] },
    };
    const [a, b] = [fx.replica(opts), fx.replica(opts)];
    const start = Date.now();
    for (const i of ['a', 'b', 'c', 'd', 'e', 'f']) await (i < 'd' ? a : b).notify(crashAlert(i));
    await until('all six messages', () => server.requests.length === 6, 8000);
    // Counted by the second each message was signed in (webhook-timestamp, taken right after the
    // limiter admitted it), not by its arrival: on a loaded machine a window's messages can arrive
    // in the next second, beside that window's own.
    const perWindow = new Map<number, number>();
    for (const r of server.requests) {
      const second = Number(r.headers['webhook-timestamp']);
      perWindow.set(second, (perWindow.get(second) ?? 0) + 1);
    }
    expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(3); // 2 per window, plus clock skew of a few ms at an edge
    // Two per 1000 ms window shared: the sixth is admitted two windows after the start's at the soonest.
    expect(Math.max(...server.requests.map((r) => r.at))).toBeGreaterThanOrEqual((Math.floor(start / 1000) + 2) * 1000);
  });
});
