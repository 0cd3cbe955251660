import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver } from '../../src/notify/receiver.js';
import { verifyWebhookSignature } from '../../src/notify/webhook-signature.js';
import { crashAlert, fastTimings, NotifierFixture, testWebhookSecret } from './notifier-fixture.js';
import { startRecordingServer, type RecordedRequest, type RecordingServer } from './recording-server.js';
import { until } from '../support/wait.js';

const secret = testWebhookSecret;
const newSecret = `whsec_${Buffer.alloc(32, 42).toString('base64')}`;
const strangerSecret = `whsec_${Buffer.alloc(32, 99).toString('base64')}`;
const headersOf = (req: RecordedRequest) => req.headers as Record<string, string>;

describe('signed webhook (Standard Webhooks)', () => {
  // Notifiers of one fixture are replicas of one deployment; each test's receivers are a deployment of their own.
  const fixtures: NotifierFixture[] = [];
  const deployment = () => {
    const fx = new NotifierFixture();
    fixtures.push(fx);
    return fx;
  };
  const servers: RecordingServer[] = [];
  const server = async (...args: Parameters<typeof startRecordingServer>) => {
    const s = await startRecordingServer(...args);
    servers.push(s);
    return s;
  };
  let req: RecordedRequest;

  beforeAll(async () => {
    const s = await server();
    const notifier = deployment().replica({
      receivers: [{ kind: 'webhook', name: 'hook', url: s.url, secretEnv: 'HOOK_SECRET' }],
      env: { HOOK_SECRET: secret },
      route: { receiver: 'hook', ...fastTimings },
    });
    await notifier.notify(crashAlert('db-1'));
    await until('the webhook request', () => s.requests.length === 1);
    req = s.requests[0]!;
  });

  afterAll(async () => {
    for (const fx of fixtures) await fx.close();
    for (const s of servers) await s.close();
  });

  it('the standardwebhooks library verifies a delivery as received, and the id is the notification id', () => {
    const body = new Webhook(secret).verify(req.raw, headersOf(req)) as { id: string; alerts: { instance: string }[] };
    expect(body.alerts[0]!.instance).toBe('db-1');
    expect(req.headers['webhook-id']).toBe(body.id);
    expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
  });

  it('the library refuses a tampered body or another key', () => {
    const tampered = req.raw.replace('db-1', 'db-2');
    expect(tampered).not.toBe(req.raw);
    expect(() => new Webhook(secret).verify(tampered, headersOf(req))).toThrow(/No matching signature/);
    expect(() => new Webhook(strangerSecret).verify(req.raw, headersOf(req))).toThrow(/No matching signature/);
  });

  it("Reflex's exported verifier accepts what the library signs and refuses what it should", () => {
    const at = new Date();
    const signed = (body: string, key = secret, when = at) => ({
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(when.getTime() / 1000)),
      'webhook-signature': new Webhook(key).sign('msg_1', when, body),
    });
    const body = '{"hello":"world"}';
    expect(verifyWebhookSignature({ secret, rawBody: Buffer.from(body), headers: signed(body) })).toEqual({
      ok: true,
      id: 'msg_1',
      timestamp: Math.floor(at.getTime() / 1000),
    });
    expect(verifyWebhookSignature({ secret, rawBody: req.raw, headers: headersOf(req) })).toMatchObject({ ok: true, id: req.headers['webhook-id'] });
    expect(verifyWebhookSignature({ secret, rawBody: '{"hello":"World"}', headers: signed(body) })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyWebhookSignature({ secret: strangerSecret, rawBody: body, headers: signed(body) })).toEqual({ ok: false, reason: 'mismatch' });
    // A receiver rotating its own key accepts either.
    expect(verifyWebhookSignature({ secret: [strangerSecret, secret], rawBody: body, headers: signed(body) })).toMatchObject({ ok: true });
    const old = new Date(at.getTime() - 301_000);
    expect(verifyWebhookSignature({ secret, rawBody: body, headers: signed(body, secret, old) })).toEqual({ ok: false, reason: 'stale' });
    expect(verifyWebhookSignature({ secret, rawBody: body, headers: signed(body, secret, old), toleranceSec: 600 })).toMatchObject({ ok: true });
    expect(verifyWebhookSignature({ secret, rawBody: body, headers: { ...signed(body), 'webhook-id': undefined } })).toEqual({
      ok: false,
      reason: 'missing',
    });
    expect(verifyWebhookSignature({ secret, rawBody: body, headers: { ...signed(body), 'webhook-signature': 'sha256=abc' } })).toEqual({
      ok: false,
      reason: 'malformed',
    });
    expect(verifyWebhookSignature({ secret, rawBody: body, headers: new Headers(signed(body)) })).toMatchObject({ ok: true });
  });

  it('with two keys during a rotation, receivers holding either key verify, and one holding neither does not', async () => {
    const s = await server();
    const notifier = deployment().replica({
      receivers: [{ kind: 'webhook', name: 'rotating', url: s.url, secretEnv: ['OLD_KEY', 'NEW_KEY'] }],
      env: { OLD_KEY: secret, NEW_KEY: newSecret },
      route: { receiver: 'rotating', ...fastTimings },
    });
    await notifier.notify(crashAlert('web-7'));
    await until('the webhook request', () => s.requests.length === 1);
    const r = s.requests[0]!;
    expect((r.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    expect(new Webhook(secret).verify(r.raw, headersOf(r))).toEqual(r.json);
    expect(new Webhook(newSecret).verify(r.raw, headersOf(r))).toEqual(r.json);
    expect(() => new Webhook(strangerSecret).verify(r.raw, headersOf(r))).toThrow(/No matching signature/);
  });

  it('a retried delivery keeps its id and body, and each attempt verifies', async () => {
    const s = await server((n) => (n === 1 ? { status: 503, body: 'busy' } : { status: 200 }));
    const notifier = deployment().replica({
      receivers: [{ kind: 'webhook', name: 'flaky', url: s.url, secretEnv: 'HOOK_SECRET', backoffMs: 1_400 }],
      env: { HOOK_SECRET: secret },
      route: { receiver: 'flaky', ...fastTimings },
    });
    await notifier.notify(crashAlert('web-8'));
    await until('the first attempt and its retry', () => s.requests.length === 2);
    const [first, retry] = s.requests as [RecordedRequest, RecordedRequest];
    expect(retry.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(retry.raw).toBe(first.raw);
    // Re-signed with the time of its own attempt (the backoff is at least 1050 ms with its jitter).
    expect(Number(retry.headers['webhook-timestamp'])).toBeGreaterThan(Number(first.headers['webhook-timestamp']));
    for (const r of [first, retry]) expect(new Webhook(secret).verify(r.raw, headersOf(r))).toEqual(first.json);
  });

  it('a signing secret read from a file (trailing newline and all) signs as the same secret in the environment', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reflex-secret-'));
    try {
      writeFileSync(join(dir, 'hook'), `${secret}\n`, { mode: 0o600 });
      const s = await server();
      const notifier = deployment().replica({
        receivers: [{ kind: 'webhook', name: 'from-file', url: s.url, secretFile: join(dir, 'hook') }],
        env: {},
        route: { receiver: 'from-file', ...fastTimings },
      });
      await notifier.notify(crashAlert('web-9'));
      await until('the webhook request', () => s.requests.length === 1);
      expect(new Webhook(secret).verify(s.requests[0]!.raw, headersOf(s.requests[0]!))).toEqual(s.requests[0]!.json);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a secret that is not whsec_<base64> of 24 to 64 bytes is a config error naming the field, never the secret', () => {
    const hook = (env: Record<string, string>) => () =>
      createReceiver({ kind: 'webhook', name: 'hook', url: 'http://127.0.0.1:1/', secretEnv: 'HOOK_SECRET' }, env);
    const notBase64 = 'whsec_not*base64!!but-secret-text';
    for (const [value, why] of [
      [notBase64, /secretEnv HOOK_SECRET is not base64 after whsec_/],
      ['plain-old-hmac-key-1234567890', /secretEnv HOOK_SECRET does not start with whsec_/],
      [`whsec_${Buffer.alloc(16).toString('base64')}`, /secretEnv HOOK_SECRET holds a 16-byte key/],
    ] as const) {
      let error: (Error & { code?: string }) | undefined;
      try {
        hook({ HOOK_SECRET: value })();
      } catch (err) {
        error = err as Error & { code?: string };
      }
      expect(error?.code).toBe('CONFIG_INVALID');
      expect(error?.message).toMatch(why);
      expect(error?.message).not.toContain(value.slice(6));
    }
    expect(() => createReceiver({ kind: 'webhook', name: 'hook', url: 'http://127.0.0.1:1/', secretFile: '/nonexistent/reflex-hook' })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('/nonexistent/reflex-hook') }),
    );
    expect(() => createReceiver({ kind: 'webhook', name: 'hook', url: 'http://127.0.0.1:1/' })).toThrow(/give exactly one of secretEnv, secretFile/);
  });
});
