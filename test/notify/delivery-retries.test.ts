import { describe, expect, it } from 'vitest';
import { retryAfterMs } from '../../src/notify/http-delivery.js';
import { crashAlert, fastTimings, closedAfterEach, type NotifierFixture, testWebhookSecret } from './notifier-fixture.js';
import { until } from '../support/wait.js';

describe('delivery retries and fallback', () => {
  let fx: NotifierFixture;
  const { fixture, server } = closedAfterEach();
  /** A fresh fixture, the primary receiver's server answering with `answer` and the fallback's server. */
  const failingOver = async (answer: Parameters<typeof server>[0]) => {
    fx = fixture();
    return { primary: await server(answer), fallback: await server() };
  };

  it('a receiver answering 500 is retried with backoff, then the fallback receives the alert', async () => {
    const { primary, fallback } = await failingOver(() => ({ status: 500, body: 'upstream down' }));
    const notifier = fx.replica({
      receivers: [
        { kind: 'slack', name: 'primary', url: primary.url, maxAttempts: 3, backoffMs: 100, fallback: 'pager' },
        { kind: 'webhook', name: 'pager', url: fallback.url, secretEnv: 'S' },
      ],
      env: { S: testWebhookSecret },
      route: { receiver: 'primary', ...fastTimings },
    });
    await notifier.notify(crashAlert('web-1'));
    await until('the fallback delivery', () => fallback.requests.length === 1);
    expect(primary.requests).toHaveLength(3);
    const gaps = primary.requests.slice(1).map((r, i) => r.at - primary.requests[i]!.at);
    expect(gaps[0]).toBeGreaterThanOrEqual(70); // 100 ms ±25 %
    expect(gaps[1]).toBeGreaterThanOrEqual(140); // 200 ms ±25 %
    const body = fallback.requests[0]!.json as { receiver: string; alerts: { instance: string }[] };
    expect(body.receiver).toBe('pager');
    expect(body.alerts.map((a) => a.instance)).toEqual(['web-1']);
    await fx.quietFor(1);
    expect(primary.requests).toHaveLength(3);

    const trail = await fx.audit.read({ type: 'notification' });
    const lines = trail.filter((r) => r.correlationId === 'evt-web-1').map((r) => `${r.result} ${r.receiver}`);
    expect(lines).toEqual(['retrying primary', 'retrying primary', 'failed primary', 'fallback pager', 'sent pager']);
    expect(trail.find((r) => r.result === 'failed')!.summary).toContain('answered 500: upstream down');
  });

  it('a 4xx answer is not retried and goes straight to the fallback', async () => {
    const { primary, fallback } = await failingOver(() => ({ status: 404, body: 'no_service' }));
    const notifier = fx.replica({
      receivers: [
        { kind: 'discord', name: 'primary', url: primary.url, maxAttempts: 5, backoffMs: 50, fallback: 'backup' },
        { kind: 'mattermost', name: 'backup', url: fallback.url },
      ],
      route: { receiver: 'primary', ...fastTimings },
    });
    await notifier.notify(crashAlert('web-2'));
    await until('the fallback delivery', () => fallback.requests.length === 1);
    expect(primary.requests).toHaveLength(1);
  });

  it('429 waits for Retry-After before the next attempt', async () => {
    fx = fixture();
    const primary = await server((n) => (n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 }));
    const notifier = fx.replica({
      receivers: [{ kind: 'teams', name: 'teams', url: primary.url, backoffMs: 10 }],
      route: { receiver: 'teams', ...fastTimings },
    });
    await notifier.notify(crashAlert('web-3'));
    await until('the retry after 429', () => primary.requests.length === 2);
    expect(primary.requests[1]!.at - primary.requests[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it('a timeout or refused connection counts as a retryable failure', async () => {
    fx = fixture();
    const fallback = await server();
    const notifier = fx.replica({
      receivers: [
        { kind: 'slack', name: 'gone', url: 'http://127.0.0.1:1/hook', maxAttempts: 2, backoffMs: 20, fallback: 'fb' },
        { kind: 'slack', name: 'fb', url: fallback.url },
      ],
      route: { receiver: 'gone', ...fastTimings },
    });
    await notifier.notify(crashAlert('web-4'));
    await until('the fallback delivery', () => fallback.requests.length === 1);
    const failed = (await fx.audit.read()).filter((r) => r.type === 'notification' && r.receiver === 'gone');
    expect(failed.map((r) => [r.result, r.code])).toEqual([
      ['retrying', 'NETWORK'],
      ['failed', 'NETWORK'],
    ]);
  });
});

describe('Retry-After', () => {
  it('is read as seconds or an HTTP date and capped', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('Wed, 01 Jan 2025 00:00:10 GMT', now)).toBe(10_000);
    expect(retryAfterMs('999999', now)).toBe(600_000);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });
});
