import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createReceiver } from '../../src/notify/receiver.js';
import { crashAlert, fastTimings, NotifierFixture } from './notifier-fixture.js';
import { startRecordingServer } from './recording-server.js';
import { until } from '../support/wait.js';

const token = 'T0KEN-b1c2d3e4f5';
const hmacKey = `whsec_${Buffer.from('hmac-key-z9y8x7-0123456789abcdef').toString('base64')}`;

describe('receiver secrets are redacted everywhere', () => {
  const fx = new NotifierFixture();
  afterAll(() => fx.close());

  it('a receiver prints and serialises without its URL or signing key', () => {
    const env = { SLACK_URL: `https://hooks.slack.example/services/${token}`, KEY: hmacKey };
    for (const r of [
      createReceiver({ kind: 'slack', name: 's', urlEnv: 'SLACK_URL' }, env),
      createReceiver({ kind: 'webhook', name: 'w', urlEnv: 'SLACK_URL', secretEnv: 'KEY' }, env),
    ]) {
      const shown = [JSON.stringify(r), String(r.url), inspect(r, { depth: 5 }), JSON.stringify(r.config)].join('\n');
      expect(shown).not.toContain(token);
      expect(shown).not.toContain(hmacKey);
      expect(r.url.reveal()).toBe(env.SLACK_URL);
    }
  });

  it('a plain url shows only its origin', () => {
    const r = createReceiver({ kind: 'teams', name: 't', url: `https://example.org/workflows/${token}?sig=abc` });
    expect(r.toJSON().url).toBe('https://example.org/[redacted]');
  });

  it('a missing environment variable is named, and no value is quoted', () => {
    expect(() => createReceiver({ kind: 'slack', name: 's', urlEnv: 'NOPE_URL' }, {})).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', message: 'environment variable NOPE_URL is not set (notification receiver s needs it)' }),
    );
    expect(() => createReceiver({ kind: 'slack', name: 'chat', urlFile: '/nonexistent/hook' }, {})).toThrow(
      'cannot read secret file /nonexistent/hook (notification receiver chat needs it): ENOENT',
    );
    expect(() => createReceiver({ kind: 'slack', name: 's', url: 'https://x.example', urlEnv: 'A' } as never, { A: 'https://y' })).toThrow(
      /give exactly one of url, urlEnv, urlFile/,
    );
  });

  it('failed deliveries are audited without the endpoint', async () => {
    const fallback = await startRecordingServer();
    const notifier = fx.replica({
      receivers: [
        { kind: 'slack', name: 'broken', urlEnv: 'BROKEN_URL', maxAttempts: 1, fallback: 'ok' },
        { kind: 'slack', name: 'ok', url: fallback.url },
      ],
      env: { BROKEN_URL: `http://127.0.0.1:1/services/${token}` },
      route: { receiver: 'broken', ...fastTimings },
    });
    await notifier.notify(crashAlert('web-1'));
    await until('the fallback delivery', () => fallback.requests.length === 1);
    await fallback.close();
    const trail = JSON.stringify(await fx.audit.read());
    expect(trail).toContain('broken');
    expect(trail).not.toContain(token);
  });
});
