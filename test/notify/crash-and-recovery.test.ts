import { afterEach, describe, expect, it } from 'vitest';
import { alertFingerprint } from '../../src/alerts/alert.js';
import type { Notifier } from '../../src/notify/notifier.js';
import { crashAlert, NotifierFixture, closeNotifier } from './notifier-fixture.js';
import { startRecordingServer, type RecordingServer } from './recording-server.js';
import { until } from '../support/wait.js';

interface Body {
  status: string;
  alerts: { instance: string; status: string; summary: string; endsAt?: string; actions: unknown[] }[];
}

describe('a crash followed by recovery', () => {
  let fx: NotifierFixture;
  let server: RecordingServer;
  afterEach(() => closeNotifier(fx, server));

  async function replicas(count: number): Promise<Notifier[]> {
    fx = new NotifierFixture();
    server = await startRecordingServer();
    return Array.from({ length: count }, () => fx.webhookReplica(server.url));
  }
  const bodies = () => server.requests.map((r) => r.json as Body);
  const fingerprint = alertFingerprint({ kind: 'instance.crashed', target: 'local', project: 'default', instance: 'web-1' });

  it('yields one alert and one resolved message', async () => {
    const [notifier] = await replicas(1);
    await notifier!.notify(crashAlert('web-1'));
    await until('the firing message', () => server.requests.length === 1);
    await fx.quietFor(3);
    expect(server.requests).toHaveLength(1);

    const resolved = await notifier!.resolve(fingerprint, { summary: 'web-1 is Running again' });
    expect(resolved?.status).toBe('resolved');
    await until('the resolved message', () => server.requests.length === 2);
    await fx.quietFor(3);
    expect(bodies().map((b) => [b.status, b.alerts.map((a) => `${a.instance}:${a.status}`)])).toEqual([
      ['firing', ['web-1:firing']],
      ['resolved', ['web-1:resolved']],
    ]);
    const clear = bodies()[1]!.alerts[0]!;
    expect(clear.summary).toBe('web-1 is Running again');
    expect(clear.endsAt).toBeDefined();
    expect(clear.actions).toHaveLength(1);
  });

  it('with two replicas both seeing the crash and the recovery, still one of each', async () => {
    const [a, b] = await replicas(2);
    await Promise.all([a!.notify(crashAlert('web-1')), b!.notify(crashAlert('web-1', { startsAt: '2025-01-02T03:04:05.010Z' }))]);
    await until('the firing message', () => server.requests.length === 1);
    await fx.quietFor(3);
    // A replica that handles the event late raises the same alert again: no new message.
    await b!.notify(crashAlert('web-1'));
    await fx.quietFor(2);
    expect(server.requests).toHaveLength(1);

    await Promise.all([a!.resolve(fingerprint), b!.resolve(fingerprint)]);
    await until('the resolved message', () => server.requests.length === 2);
    await fx.quietFor(3);
    expect(bodies().map((x) => x.status)).toEqual(['firing', 'resolved']);
    const ids = server.requests.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(2);
  });

  it('a condition that clears before its group wait is over sends nothing', async () => {
    const [notifier] = await replicas(1);
    await notifier!.notify(crashAlert('web-1'));
    await notifier!.resolve(fingerprint);
    await fx.quietFor(3);
    expect(server.requests).toHaveLength(0);
    expect(await notifier!.resolve(fingerprint)).toBeUndefined();
  });

  it('a second crash after recovery is a new alert', async () => {
    const [notifier] = await replicas(1);
    await notifier!.notify(crashAlert('web-1', { startsAt: undefined }));
    await until('the first firing message', () => server.requests.length === 1);
    await notifier!.resolve(fingerprint);
    await until('the resolved message', () => server.requests.length === 2);
    await notifier!.notify(crashAlert('web-1', { startsAt: undefined, correlationId: 'evt-web-1-again' }));
    await until('the second firing message', () => server.requests.length === 3);
    expect(bodies().map((x) => x.status)).toEqual(['firing', 'resolved', 'firing']);
  });
});
