import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhookSignature } from '../../src/notify/webhook-signature.js';
import { crashAlert, fastTimings, NotifierFixture } from './notifier-fixture.js';
import { eventually, startRecordingServer, type RecordedRequest, type RecordingServer } from './recording-server.js';

const secret = 'whsec-test-9f8e7d';

describe('signed generic webhook', () => {
  const fx = new NotifierFixture();
  let server: RecordingServer;
  let req: RecordedRequest;
  const headers = () => ({ timestamp: req.headers['x-reflex-timestamp'] as string, signature: req.headers['x-reflex-signature'] as string });

  beforeAll(async () => {
    server = await startRecordingServer();
    const notifier = fx.replica({ receivers: [{ kind: 'webhook', name: 'hook', url: server.url, secretEnv: 'HOOK_SECRET' }], env: { HOOK_SECRET: secret }, route: { receiver: 'hook', ...fastTimings } });
    await notifier.notify(crashAlert('db-1'));
    await eventually(() => server.requests.length === 1, 'the webhook request');
    req = server.requests[0]!;
  });

  afterAll(async () => {
    await fx.close();
    await server.close();
  });

  it('sends X-Reflex-Timestamp and X-Reflex-Signature: sha256=<hex>', () => {
    expect(headers().timestamp).toMatch(/^\d{10}$/);
    expect(Math.abs(Number(headers().timestamp) - Date.now() / 1000)).toBeLessThan(30);
    expect(headers().signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(headers().signature).toBe(signWebhook(secret, Number(headers().timestamp), req.raw));
  });

  it('the signature verifies over the exact body received', () => {
    expect(verifyWebhookSignature({ secret, rawBody: Buffer.from(req.raw), ...headers() })).toEqual({ ok: true });
  });

  it('a tampered body fails', () => {
    const tampered = req.raw.replace('db-1', 'db-2');
    expect(tampered).not.toBe(req.raw);
    expect(verifyWebhookSignature({ secret, rawBody: tampered, ...headers() })).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('a tampered timestamp or another secret fails', () => {
    const { timestamp, signature } = headers();
    expect(verifyWebhookSignature({ secret, rawBody: req.raw, timestamp: String(Number(timestamp) + 1), signature })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyWebhookSignature({ secret: 'other', rawBody: req.raw, timestamp, signature })).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('a replay outside the window fails, inside it passes', () => {
    const sent = new Date(Number(headers().timestamp) * 1000);
    const later = (s: number) => new Date(sent.getTime() + s * 1000);
    expect(verifyWebhookSignature({ secret, rawBody: req.raw, ...headers(), now: later(299) })).toEqual({ ok: true });
    expect(verifyWebhookSignature({ secret, rawBody: req.raw, ...headers(), now: later(301) })).toEqual({ ok: false, reason: 'stale' });
    expect(verifyWebhookSignature({ secret, rawBody: req.raw, ...headers(), now: later(61), replayWindowSec: 60 })).toEqual({ ok: false, reason: 'stale' });
  });

  it('missing or malformed headers fail', () => {
    expect(verifyWebhookSignature({ secret, rawBody: req.raw, timestamp: undefined, signature: headers().signature })).toEqual({ ok: false, reason: 'missing' });
    expect(verifyWebhookSignature({ secret, rawBody: req.raw, timestamp: headers().timestamp, signature: 'md5=abc' })).toEqual({ ok: false, reason: 'malformed' });
  });
});
