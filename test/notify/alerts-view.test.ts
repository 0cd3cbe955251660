import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../../src/http/http-server.js';
import { Metrics } from '../../src/metrics/metrics.js';
import type { Notifier } from '../../src/notify/notifier.js';
import { keySpace } from '../../src/redis/key-space.js';
import { Silences } from '../../src/silences/silences.js';
import { reflexInProcess } from '../cli/in-process.js';
import { redisUrl } from '../support/redis.js';
import { crashAlert, NotifierFixture, testWebhookSecret } from './notifier-fixture.js';

const hook = { kind: 'webhook', name: 'hook', url: 'http://127.0.0.1:1/hook', secretEnv: 'S' } as const;

describe('what is pending: reflex alerts and the dashboard', () => {
  let fx: NotifierFixture;
  let http: RunningHttpServer | undefined;
  afterEach(async () => {
    await http?.close();
    http = undefined;
    await fx.close();
  });

  /** A notifier whose groups wait a minute, so they stay pending, with a silence muting web-1's notifications. */
  async function pending(): Promise<{ notifier: Notifier; silences: Silences }> {
    fx = new NotifierFixture();
    const silences = new Silences(fx.redis, keySpace(fx.prefix).silences, fx.audit);
    const notifier = fx.replica({ receivers: [hook], env: { S: testWebhookSecret }, route: { receiver: 'hook', groupWaitMs: 60_000 } });
    await notifier.notify(crashAlert('web-2', { startsAt: '2026-03-01T10:00:02.000Z' }));
    await notifier.notify(crashAlert('web-1', { startsAt: '2026-03-01T10:00:01.000Z' }));
    await silences.add({ scope: { instance: 'web-1' }, mutes: ['notifications'], reason: 'noisy', durationMs: 60_000 });
    return { notifier, silences };
  }

  it('reflex alerts --json lists the firing alerts and each pending group: its alerts, which are muted and why, and what its next flush sends, when', async () => {
    const before = Date.now();
    await pending();
    const res = await reflexInProcess(['alerts', '--json', '--redis', redisUrl(), '--prefix', fx.prefix]);
    expect(res.code, res.stderr).toBe(0);
    const doc = JSON.parse(res.stdout) as {
      firing: { instance: string }[];
      groups: {
        receiver: string;
        groupLabels: Record<string, string>;
        nextFlushAt: string;
        alerts: { alert: { instance: string }; muted?: string }[];
        next: { status: string; alerts: { instance: string }[] };
      }[];
    };
    expect(doc.firing.map((a) => a.instance)).toEqual(['web-1', 'web-2']);
    expect(doc.groups).toHaveLength(1);
    const g = doc.groups[0]!;
    expect(g.receiver).toBe('hook');
    expect(g.groupLabels).toEqual({ kind: 'instance.crashed', project: 'default' });
    expect(Date.parse(g.nextFlushAt) - before).toBeGreaterThanOrEqual(59_000);
    expect(g.alerts.map((a) => [a.alert.instance, a.muted])).toEqual([
      ['web-1', expect.stringMatching(/^silence \w+ \(noisy\)$/)],
      ['web-2', undefined],
    ]);
    expect(g.next.status).toBe('firing');
    expect(g.next.alerts.map((a) => a.instance)).toEqual(['web-2']);
  });

  it('the dashboard shows firing alerts and pending groups, and adds a silence posted with the write token from the page (audited with origin dashboard); without it, or cross-origin, nothing is added', async () => {
    const { notifier, silences } = await pending();
    const token = 'read-tok';
    const writeToken = 'write-tok';
    http = await startHttpServer({
      port: 0,
      metrics: new Metrics(),
      readiness: {},
      logger: pino({ level: 'silent' }),
      dashboard: { token, writeToken, queues: [], audit: fx.audit, silences, alerts: () => notifier.board.view(notifier.mute), target: 'local' },
    });
    const page = await (await fetch(`${http.url}/dashboard`, { headers: { authorization: `Bearer ${token}` } })).text();
    expect(page).toContain('Firing alerts (2)');
    expect(page).toContain('Pending notification groups (1)');
    expect(page).toMatch(/web-1 firing, muted: silence \w+ \(noisy\)/);
    expect(page).toContain('id="silence-form"');

    const body = JSON.stringify({ scope: { project: 'billing' }, duration: '2h', reason: 'migration', mutes: ['notifications'], createdBy: 'alice' });
    const post = (headers: Record<string, string>) =>
      fetch(`${http!.url}/dashboard/silences`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    expect((await post({ authorization: `Bearer ${token}`, origin: http.url })).status).toBe(403);
    expect((await post({ authorization: `Bearer ${writeToken}`, origin: 'http://evil.example' })).status).toBe(403);
    expect((await silences.list()).map((s) => s.reason)).toEqual(['noisy']);
    const ok = await post({ authorization: `Bearer ${writeToken}`, origin: http.url });
    expect(ok.status).toBe(201);
    const made = (await ok.json()) as { id: string; mutes: string[]; origin: string; createdBy: string };
    expect(made).toMatchObject({ mutes: ['notifications'], origin: 'dashboard', createdBy: 'alice' });
    expect((await silences.list()).map((s) => s.id)).toContain(made.id);
    const audited = (await fx.audit.read({ count: 20 })).filter((r) => r.type === 'silence' && (r as { origin?: string }).origin === 'dashboard');
    expect(audited.map((r) => r.summary)).toEqual([expect.stringContaining(`silence ${made.id} added from the dashboard by alice`)]);

    const bad = await fetch(`${http.url}/dashboard/silences`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${writeToken}`, origin: http.url },
      body: JSON.stringify({ scope: {}, duration: '30', reason: 'x' }),
    });
    expect(bad.status).toBe(400);
  });
});
