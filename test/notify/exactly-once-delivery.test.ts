import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../src/notify/webhook-signature.js';
import type { ReceiverConfigInput } from '../../src/notify/receiver-config.js';
import { crashAlert, fastTimings, NotifierFixture, testWebhookSecret } from './notifier-fixture.js';
import { until } from '../support/wait.js';

/**
 * The delivery timeout of these tests, and how long the stalling receiver takes over its first
 * request. The retry must be answered within the timeout: on a loaded CI 300 ms was not always
 * enough for a local answer, and the retry timed out too.
 */
const timeoutMs = 2_000;
const stallMs = 4_000;

interface Attempt {
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
}

/**
 * A receiver whose first answer comes after the sender's timeout (it still processes that request,
 * as a real service does), and which answers the retry at once. It keeps the messages it processed,
 * dropping those whose key (`keyOf`, undefined for a service without one) it has seen: what
 * a receiver that de-duplicates does.
 */
async function stallingReceiver(keyOf: (a: Attempt) => string[] | undefined) {
  const attempts: Attempt[] = [];
  const messages: Attempt[] = [];
  const seen = new Set<string>();
  let finished = 0;
  const process = (a: Attempt) => {
    const keys = keyOf(a);
    finished++;
    if (keys && keys.every((k) => seen.has(k))) return;
    for (const k of keys ?? []) seen.add(k);
    messages.push(a);
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const a = { path: req.url ?? '', headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') };
      attempts.push(a);
      const answer = () => {
        process(a);
        if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"success"}');
      };
      if (attempts.length === 1) setTimeout(answer, stallMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    attempts,
    messages,
    /** Both attempts have been processed (the stalled one too). */
    settled: () => finished >= 2,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const header = (a: Attempt, name: string) => String(a.headers[name]);
const json = (a: Attempt) => JSON.parse(a.raw) as Record<string, unknown>;

describe('a receiver that answers after the timeout, then 200', () => {
  let fx: NotifierFixture;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await fx.close();
    await Promise.all(closers.splice(0).map((c) => c()));
  });

  /** Sends one crash alert to a receiver of `config` in front of a stalling receiver; resolves when both attempts were processed. */
  async function deliverThroughStall(
    config: (url: string) => ReceiverConfigInput,
    keyOf: (a: Attempt) => string[] | undefined,
    env: Record<string, string> = {},
  ) {
    fx = new NotifierFixture();
    const receiver = await stallingReceiver(keyOf);
    closers.push(receiver.close);
    const notifier = fx.replica({
      receivers: [{ ...config(receiver.url), timeoutMs, backoffMs: 50, maxAttempts: 3 } as ReceiverConfigInput],
      env,
      route: { receiver: 'r', ...fastTimings },
    });
    await notifier.notify(crashAlert('web-1'));
    await until('the stalled attempt and its retry', receiver.settled, 30_000);
    const trail = await until('the delivery audited', async () => {
      const records = await fx.audit.read({ type: 'notification' });
      return records.some((r) => r.result !== 'retrying') && records;
    });
    expect(trail.map((r) => `${r.result} ${r.code ?? ''}`.trim())).toEqual(['retrying TIMEOUT', 'sent']);
    expect(receiver.attempts).toHaveLength(2);
    return receiver;
  }

  it('signed webhook: the same webhook-id, Idempotency-Key and body bytes on both attempts, each signed; one message', async () => {
    const r = await deliverThroughStall(
      (url) => ({ kind: 'webhook', name: 'r', url, secretEnv: 'S' }),
      (a) => [header(a, 'webhook-id')],
      { S: testWebhookSecret },
    );
    const [first, retry] = r.attempts as [Attempt, Attempt];
    expect(header(retry, 'webhook-id')).toBe(header(first, 'webhook-id'));
    expect(header(retry, 'idempotency-key')).toBe(`"${header(first, 'webhook-id')}"`);
    expect(header(first, 'idempotency-key')).toBe(header(retry, 'idempotency-key'));
    expect(retry.raw).toBe(first.raw);
    for (const a of r.attempts) expect(verifyWebhookSignature({ secret: testWebhookSecret, rawBody: a.raw, headers: a.headers }).ok).toBe(true);
    expect(r.messages).toHaveLength(1);
  });

  it('CloudEvents: the same id, time and body bytes on both attempts, Idempotency-Key = id; one message', async () => {
    const r = await deliverThroughStall(
      (url) => ({ kind: 'cloudevents', name: 'r', url }),
      (a) => [`${String(json(a).source)} ${String(json(a).id)}`],
    );
    const [first, retry] = r.attempts as [Attempt, Attempt];
    expect(retry.raw).toBe(first.raw);
    expect(json(retry).time).toBe(json(first).time);
    expect(header(first, 'idempotency-key')).toBe(`"${String(json(first).id)}"`);
    expect(header(retry, 'idempotency-key')).toBe(header(first, 'idempotency-key'));
    expect(r.messages).toHaveLength(1);
  });

  it('PagerDuty: the same dedup_key and body bytes on both attempts; one alert', async () => {
    const r = await deliverThroughStall(
      (url) => ({ kind: 'pagerduty', name: 'r', url, routingKeyEnv: 'PD_KEY' }),
      (a) => [String(json(a).dedup_key)],
      { PD_KEY: 'R0UT1NGKEY0000000000000000000000' },
    );
    const [first, retry] = r.attempts as [Attempt, Attempt];
    expect(retry.raw).toBe(first.raw);
    expect(json(first).dedup_key).toMatch(/^reflex:[0-9a-f]{16}:2025-01-02T03:04:05.000Z$/);
    expect(r.messages).toHaveLength(1);
  });

  it("Alertmanager: the same labels (an alert's identity there) and body bytes on both attempts; one alert", async () => {
    const labelsOf = (a: Attempt) =>
      (JSON.parse(a.raw) as { labels: Record<string, string> }[]).map((x) => JSON.stringify(Object.entries(x.labels).sort()));
    const r = await deliverThroughStall((url) => ({ kind: 'alertmanager', name: 'r', url: url.replace(/\/hook$/, '') }), labelsOf);
    const [first, retry] = r.attempts as [Attempt, Attempt];
    expect(first.path).toBe('/api/v2/alerts');
    expect(retry.raw).toBe(first.raw);
    expect(labelsOf(retry)).toEqual(labelsOf(first));
    expect(r.messages).toHaveLength(1);
  });

  it('Mattermost (no idempotency key in its API): the retry posts a second message, as docs/notifications.md says', async () => {
    const r = await deliverThroughStall(
      (url) => ({ kind: 'mattermost', name: 'r', url }),
      () => undefined,
    );
    expect(r.attempts[1]!.raw).toBe(r.attempts[0]!.raw);
    expect(r.messages).toHaveLength(2);
  });

  it('Discord (execute webhook takes no nonce): the same, two messages', async () => {
    const r = await deliverThroughStall(
      (url) => ({ kind: 'discord', name: 'r', url }),
      () => undefined,
    );
    expect(r.messages).toHaveLength(2);
  });
});
