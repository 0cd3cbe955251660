import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpParamsSchema } from '../../src/actions/http-action.js';
import type { CanonicalEvent } from '../../src/events/canonical-event.js';
import { startActionBed, type ActionBed } from './action-bed.js';

/** What the endpoint received. */
interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A local HTTP endpoint whose answer each test sets. */
async function startEndpoint(): Promise<{
  url: string;
  received: Received[];
  answer: (fn: (req: Received, res: ServerResponse, n: number) => void) => void;
  close: () => Promise<void>;
}> {
  const received: Received[] = [];
  let handler: (req: Received, res: ServerResponse, n: number) => void = (_, res) => res.end('ok');
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const r = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      received.push(r);
      handler(r, res, received.length);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answer: (fn) => {
      handler = fn;
      received.length = 0;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const crash: CanonicalEvent = {
  kind: 'instance.status',
  id: 'evt-1',
  target: 't',
  location: 'none',
  project: 'default',
  timestamp: '2026-01-02T03:04:05.000Z',
  synthetic: false,
  instance: 'web-1',
  from: 103,
  to: 102,
  intent: 'unrequested',
};
const token = 'tok-3f9a1c7e5b2d8e4f';

describe('the http action', () => {
  let bed: ActionBed;
  let endpoint: Awaited<ReturnType<typeof startEndpoint>>;
  beforeAll(async () => {
    process.env.REFLEX_TEST_HTTP_TOKEN = token;
    process.env.REFLEX_TEST_HTTP_URL = 'placeholder';
    endpoint = await startEndpoint();
    bed = await startActionBed({ instances: ['web-1'] });
  });
  afterAll(async () => {
    delete process.env.REFLEX_TEST_HTTP_TOKEN;
    delete process.env.REFLEX_TEST_HTTP_URL;
    await bed.stop();
    await endpoint.close();
  });

  it('sends the templated body with the secret header; the audit has status, duration and answer, never the secret', async () => {
    endpoint.answer((_, res) => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ticket: 'RB-42', echoed: token }));
    });
    const params = {
      url: `${endpoint.url}/runbooks/{incident.instance}/restart`,
      headers: { Authorization: { env: 'REFLEX_TEST_HTTP_TOKEN' }, 'X-Source': 'reflex' },
      body: {
        instance: '{incident.instance}',
        status: '{instance.status}',
        summary: '{event.kind} to {event.to} ({event.intent})',
        incident: '{incident.id}',
        event: '{event}',
      },
    };
    const id = await bed.queue({ rule: 'runbook', action: 'http', params, instance: 'web-1', origin: 'rule', event: crash, correlationId: 'evt-1' });
    const records = await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'outcome'));

    expect(endpoint.received).toHaveLength(1);
    const got = endpoint.received[0]!;
    expect(got).toMatchObject({ method: 'POST', url: '/runbooks/web-1/restart' });
    expect(got.headers).toMatchObject({ authorization: token, 'x-source': 'reflex', 'content-type': 'application/json' });
    expect(JSON.parse(got.body)).toEqual({
      instance: 'web-1',
      status: 'Running',
      summary: 'instance.status to 102 (unrequested)',
      incident: 'evt-1',
      event: crash,
    });

    const call = records.find((r) => r.type === 'call')!;
    expect(call).toMatchObject({
      method: 'POST',
      url: `${endpoint.url}/runbooks/web-1/restart`,
      status: 201,
      truncated: false,
      summary: expect.stringMatching(/^POST http:\/\/127\.0\.0\.1:\d+\/runbooks\/web-1\/restart → 201 in \d+ ms$/),
    });
    expect(call.durationMs).toEqual(expect.any(Number));
    expect(JSON.parse(String(call.response))).toEqual({ ticket: 'RB-42', echoed: '[redacted]' });
    expect(records.find((r) => r.type === 'outcome')).toMatchObject({ result: 'done' });
    expect(JSON.stringify(records)).not.toContain(token);
  });

  it('keeps a URL given as a secret out of the audit, and bounds the answer it records to 2 KiB', async () => {
    process.env.REFLEX_TEST_HTTP_URL = `${endpoint.url}/hook/${token}`;
    endpoint.answer((_, res) => res.end('x'.repeat(10_000)));
    const id = await bed.queue({
      rule: 'runbook',
      action: 'http',
      params: { url: { env: 'REFLEX_TEST_HTTP_URL' }, method: 'PUT', body: 'plain text' },
      instance: 'web-1',
      origin: 'rule',
    });
    const records = await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'outcome'));
    expect(endpoint.received).toMatchObject([
      { method: 'PUT', url: `/hook/${token}`, body: 'plain text', headers: { 'content-type': 'text/plain; charset=utf-8' } },
    ]);
    const call = records.find((r) => r.type === 'call')!;
    expect(call).toMatchObject({ url: '[redacted] (env:REFLEX_TEST_HTTP_URL)', status: 200, truncated: true });
    expect(String(call.response)).toHaveLength(2048);
    expect(JSON.stringify(records)).not.toContain(token);
  });

  it('retries a 500 by the retry policy, then succeeds', async () => {
    endpoint.answer((_, res, n) => {
      res.statusCode = n === 1 ? 500 : 200;
      res.end(n === 1 ? 'database is down' : 'ok');
    });
    const id = await bed.queue({ rule: 'runbook', action: 'http', params: { url: `${endpoint.url}/retry` }, instance: 'web-1', origin: 'rule' });
    const records = await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'outcome' && r.result === 'done'));
    expect(endpoint.received).toHaveLength(2);
    expect(records.filter((r) => r.type === 'call').map((r) => r.status)).toEqual([500, 200]);
    expect(records.filter((r) => r.type === 'outcome').map((r) => [r.result, r.code])).toEqual([
      ['retrying', 'HTTP_SERVER_ERROR'],
      ['done', undefined],
    ]);
  });

  it('does not retry a 404: it gives up at once', async () => {
    endpoint.answer((_, res) => {
      res.statusCode = 404;
      res.end('no such runbook');
    });
    const id = await bed.queue({ rule: 'runbook', action: 'http', params: { url: `${endpoint.url}/missing` }, instance: 'web-1', origin: 'rule' });
    const records = await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'give-up'));
    expect(endpoint.received).toHaveLength(1);
    expect(records.filter((r) => r.type === 'outcome')).toMatchObject([
      { result: 'failed', code: 'HTTP_REJECTED', summary: expect.stringContaining('answered 404: no such runbook; giving up') },
    ]);
  });

  it('counts a status listed in expect as success', async () => {
    endpoint.answer((_, res) => {
      res.statusCode = 404;
      res.end();
    });
    const id = await bed.queue({
      rule: 'runbook',
      action: 'http',
      params: { url: `${endpoint.url}/gone`, method: 'DELETE', expect: [200, 204, 404] },
      instance: 'web-1',
      origin: 'rule',
    });
    const records = await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'outcome'));
    expect(records.find((r) => r.type === 'outcome')).toMatchObject({ result: 'done', summary: expect.stringContaining('answered 404') });
  });

  it('times out an endpoint that does not answer, retries, and gives up after the attempts', async () => {
    endpoint.answer(() => undefined); // never answers
    const id = await bed.queue(
      { rule: 'runbook', action: 'http', params: { url: `${endpoint.url}/slow`, timeout: '300ms' }, instance: 'web-1', origin: 'rule' },
      { attempts: 2 },
    );
    const records = await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'give-up'));
    expect(endpoint.received).toHaveLength(2);
    expect(records.filter((r) => r.type === 'outcome').map((r) => [r.result, r.code])).toEqual([
      ['retrying', 'TIMEOUT'],
      ['failed', 'TIMEOUT'],
    ]);
    expect(records.find((r) => r.type === 'call')).toMatchObject({ summary: expect.stringContaining('no answer within 300 ms') });
  });

  it('in dry-run sends nothing and records what it would send', async () => {
    endpoint.answer((_, res) => res.end());
    const id = await bed.queue({
      rule: 'runbook',
      action: 'http',
      params: {
        url: `${endpoint.url}/dry`,
        headers: { authorization: { env: 'REFLEX_TEST_HTTP_TOKEN' } },
        body: { instance: '{incident.instance}' },
      },
      instance: 'web-1',
      origin: 'rule',
      dryRun: true,
    });
    const records = await bed.waitFor(id, (rs) => rs.some((r) => r.type === 'outcome'));
    expect(endpoint.received).toHaveLength(0);
    expect(records.find((r) => r.type === 'call')).toMatchObject({
      dryRun: true,
      request: '{"instance":"web-1"}',
      summary: expect.stringContaining('dry-run: would POST'),
    });
    expect(records.find((r) => r.type === 'outcome')).toMatchObject({ result: 'dry-run' });
  });

  it('refuses, when rules load, an unknown placeholder and a URL that is not http(s)', () => {
    const issues = (p: unknown) => httpParamsSchema.safeParse(p).error?.issues.map((i) => i.message) ?? [];
    expect(issues({ url: 'https://x.example/{evnt.kind}' })[0]).toContain('unknown placeholder(s) {evnt.kind}');
    expect(issues({ url: 'ftp://x.example/' })).toEqual(['an http:// or https:// URL']);
    expect(issues({ url: 'https://x.example/', timeout: 'soon' })[0]).toContain('not a duration');
    expect(issues({ url: 'https://x.example/', metod: 'GET' })[0]).toContain('Unrecognized key');
  });
});
