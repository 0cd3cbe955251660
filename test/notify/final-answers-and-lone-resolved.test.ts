import { describe, expect, it } from 'vitest';
import { crashAlert, fastTimings, closedAfterEach, type NotifierFixture } from './notifier-fixture.js';
import { until } from '../support/wait.js';

describe('answers that will never succeed, and resolved messages for a receiver that missed the firing one', () => {
  let fx: NotifierFixture;
  const { fixture, server } = closedAfterEach();

  it('408, 409 and 425 are retried; 410 goes to the fallback at once', async () => {
    fx = fixture();
    const statuses = [408, 409, 425];
    const flaky = await server((n) => ({ status: statuses[n - 1] ?? 200 }));
    const gone = await server(() => ({ status: 410, body: 'webhook deleted' }));
    const backup = await server();
    const notifier = fx.replica({
      receivers: [
        { kind: 'slack', name: 'flaky', url: flaky.url, backoffMs: 20, maxAttempts: 5 },
        { kind: 'slack', name: 'gone', url: gone.url, backoffMs: 20, maxAttempts: 5, fallback: 'backup' },
        { kind: 'slack', name: 'backup', url: backup.url },
      ],
      route: { receiver: 'flaky', ...fastTimings, routes: [{ match: { instance: 'web-2' }, receiver: 'gone' }] },
    });
    await notifier.notify(crashAlert('web-1'));
    await notifier.notify(crashAlert('web-2'));
    await until('the retries and the fallback', () => flaky.requests.length === 4 && backup.requests.length === 1);
    expect(gone.requests).toHaveLength(1);
    // The delivery is audited after its answer arrives: wait for the fourth record, not the fourth request.
    const codes = async () => (await fx.audit.read({ type: 'notification' })).filter((r) => r.receiver === 'flaky').map((r) => r.code ?? r.result);
    await until('the four deliveries audited', async () => (await codes()).length === 4);
    expect(await codes()).toEqual(['NOTIFY_DEFERRED', 'NOTIFY_DEFERRED', 'NOTIFY_DEFERRED', 'sent']);
  });

  it('a Discord 400 on the firing message: the fallback gets firing and resolved, Discord never a lone RESOLVED', async () => {
    fx = fixture();
    const discord = await server((n) => (n === 1 ? { status: 400, body: '{"message": "Invalid Form Body"}' } : { status: 204 }));
    const backup = await server();
    const notifier = fx.replica({
      receivers: [
        { kind: 'discord', name: 'discord', url: discord.url, fallback: 'backup' },
        { kind: 'mattermost', name: 'backup', url: backup.url },
      ],
      route: { receiver: 'discord', ...fastTimings },
    });
    const alert = await notifier.notify(crashAlert('web-3'));
    await until('the firing message at the fallback', () => backup.requests.length === 1);
    await notifier.resolve(alert.fingerprint);
    await until('the resolved message at the fallback', () => backup.requests.length === 2);
    await fx.quietFor(2);
    expect(discord.requests).toHaveLength(1);
    const texts = backup.requests.map((r) => (r.json as { text: string }).text.split('\n')[0]);
    expect(texts).toEqual(['#### [FIRING:1] instance.crashed: web-3', '#### [RESOLVED] instance.crashed: web-3']);
    const trail = (await fx.audit.read({ type: 'notification' })).map((r) => `${r.result} ${r.receiver} ${r.alertStatus}`);
    expect(trail).toEqual([
      'failed discord firing',
      'fallback backup firing',
      'sent backup firing',
      'fallback backup resolved',
      'sent backup resolved',
    ]);
  });

  it('without a fallback, the resolved message of an alert the receiver never got firing is not sent (audited as skipped)', async () => {
    fx = fixture();
    const discord = await server((n) => (n === 1 ? { status: 400 } : { status: 204 }));
    const notifier = fx.replica({
      receivers: [{ kind: 'discord', name: 'discord', url: discord.url }],
      route: { receiver: 'discord', ...fastTimings },
    });
    const alert = await notifier.notify(crashAlert('web-4'));
    await until('the failed firing message', async () => (await fx.audit.read({ type: 'notification' })).some((r) => r.result === 'failed'));
    await notifier.resolve(alert.fingerprint);
    await until('the skipped resolved message', async () => (await fx.audit.read({ type: 'notification' })).some((r) => r.result === 'skipped'));
    expect(discord.requests).toHaveLength(1);
  });

  it('a receiver that got the firing message gets the resolved one as before', async () => {
    fx = fixture();
    const discord = await server(() => ({ status: 204 }));
    const notifier = fx.replica({
      receivers: [{ kind: 'discord', name: 'discord', url: discord.url }],
      route: { receiver: 'discord', ...fastTimings },
    });
    const alert = await notifier.notify(crashAlert('web-5'));
    await until('the firing message', () => discord.requests.length === 1);
    await notifier.resolve(alert.fingerprint);
    await until('the resolved message', () => discord.requests.length === 2);
    expect((discord.requests[1]!.json as { content: string }).content).toBe('[RESOLVED] instance.crashed: web-5');
  });
});
