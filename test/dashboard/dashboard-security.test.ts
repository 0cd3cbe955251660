import { request as httpRequest } from 'node:http';
import { Queue } from 'bullmq';
import { Hono } from 'hono';
import { duplicateConnection, type RedisConnection } from '../../src/redis/connect.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { dashboardAuth } from '../../src/http/dashboard-auth.js';
import { startHttpServer, type RunningHttpServer } from '../../src/http/http-server.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { keySpace } from '../../src/redis/key-space.js';
import { Silences } from '../../src/silences/silences.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

const readToken = `read-token-${Math.random().toString(36).slice(2)}`;
const writeToken = `write-token-${Math.random().toString(36).slice(2)}`;

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request with exactly these headers (fetch would not let a test set Host). */
function send(server: RunningHttpServer, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: server.port,
        method,
        path,
        headers: { ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** An `api-call` job as an attacker would add it: it would run with Reflex's identity. */
const addJobBody = JSON.stringify({ name: 'api-call', data: { method: 'DELETE', path: '/1.0/instances/web-1' }, options: {} });

interface Board {
  server: RunningHttpServer;
  actions: Queue;
  origin: string;
  /** The dashboard cookie, as a browser holds it after ?token=. */
  cookie: string;
  addPath: string;
  stop(): Promise<void>;
}

async function startBoard(redis: RedisConnection, opts: { write?: string; allowedHosts?: string[] } = {}): Promise<Board> {
  const keys = keySpace(uniquePrefix('dash-sec'));
  const connection = duplicateConnection(redis);
  const actions = new Queue(keys.actionsQueue, { connection, prefix: keys.bullPrefix });
  const server = await startHttpServer({
    port: 0,
    metrics: new Metrics(),
    readiness: {},
    logger: pino({ level: 'silent' }),
    allowedHosts: opts.allowedHosts,
    dashboard: {
      token: readToken,
      writeToken: opts.write,
      queues: [actions],
      audit: new AuditLog(redis, keys.audit),
      silences: new Silences(redis, keys.silences),
      target: 'unix:///test',
    },
  });
  const login = await send(server, 'GET', `/dashboard/queues?token=${readToken}`);
  expect(login.status).toBe(303);
  const cookie = String((login.headers['set-cookie'] as string[])[0]).split(';')[0]!;
  return {
    server,
    actions,
    origin: server.url,
    cookie,
    addPath: `/dashboard/queues/api/queues/${encodeURIComponent(actions.name)}/add`,
    async stop() {
      await server.close();
      await actions.obliterate({ force: true });
      await actions.close();
      connection.disconnect();
    },
  };
}

/** POSTs {@link addJobBody} to bull-board's add-job route of `board` with exactly these headers. */
const addJob = (board: Board, headers: Record<string, string>) => send(board.server, 'POST', board.addPath, headers, addJobBody);

/** Sends {@link addJob} with `headers`, expects it refused with `status`, and no job in the queue. */
async function refusedAdd(board: Board, headers: Record<string, string>, status: number): Promise<void> {
  const res = await addJob(board, headers);
  expect(res.status, JSON.stringify(headers)).toBe(status);
  expect(await jobCount(board.actions)).toBe(0);
}

/** A {@link startBoard} board for a whole describe: filled in before its tests, stopped after them. */
function boardPerSuite(opts: Parameters<typeof startBoard>[1] = {}): Board {
  const board = {} as Board;
  let redis: RedisConnection | undefined;
  beforeAll(async () => {
    redis = redisClient();
    Object.assign(board, await startBoard(redis, opts));
  });
  afterAll(async () => {
    await board.stop?.();
    redis?.disconnect();
  });
  return board;
}

const jobCount = async (q: Queue) => Object.values(await q.getJobCounts()).reduce((a, b) => a + b, 0);

describe('dashboard without a write token (read-only)', () => {
  const board = boardPerSuite();

  it("refuses a text/plain POST to bull-board's add-job route carrying the dashboard cookie, and adds no job", async () => {
    const res = await addJob(board, { cookie: board.cookie, 'content-type': 'text/plain', origin: board.origin });
    expect(res.status).toBe(405);
    expect(res.body).toContain('read-only');
    expect(await jobCount(board.actions)).toBe(0);
  });

  it('refuses pausing a queue even with the token in the Authorization header', async () => {
    const res = await send(board.server, 'PUT', `/dashboard/queues/api/queues/${encodeURIComponent(board.actions.name)}/pause`, {
      authorization: `Bearer ${readToken}`,
      origin: board.origin,
    });
    expect(res.status).toBe(405);
    expect(await board.actions.isPaused()).toBe(false);
  });

  it('still serves the read-only views to the cookie: the page, the queue list (flagged read-only) and the bull-board UI', async () => {
    const page = await send(board.server, 'GET', '/dashboard', { cookie: board.cookie });
    expect(page.status).toBe(200);
    const ui = await send(board.server, 'GET', '/dashboard/queues', { cookie: board.cookie });
    expect(ui.status).toBe(200);
    const list = await send(board.server, 'GET', '/dashboard/queues/api/queues', { cookie: board.cookie });
    expect(list.status).toBe(200);
    const queues = (JSON.parse(list.body) as { queues: { name: string; readOnlyMode: boolean }[] }).queues;
    expect(queues.map((q) => [q.name, q.readOnlyMode])).toEqual([[board.actions.name, true]]);
  });

  it('refuses a change without any credential with 401, not 405 (read-only-ness is not told to strangers)', async () => {
    const res = await addJob(board, { 'content-type': 'application/json', origin: board.origin });
    expect(res.status).toBe(401);
  });
});

describe('dashboard with a write token', () => {
  const board = boardPerSuite({ write: writeToken });

  it('refuses the cookie alone, even same-origin with a JSON body (a cookie is never enough for a change)', async () => {
    for (const type of ['text/plain', 'application/json']) {
      const res = await addJob(board, { cookie: board.cookie, 'content-type': type, origin: board.origin });
      expect(res.status, type).toBe(403);
      expect(res.body).toContain('write token');
    }
    expect(await jobCount(board.actions)).toBe(0);
  });

  it('refuses a change with the read token', async () => {
    await refusedAdd(board, { authorization: `Bearer ${readToken}`, 'content-type': 'application/json', origin: board.origin }, 403);
  });

  it('refuses a change with the write token from another origin, with no Origin, or from another site', async () => {
    const auth = { authorization: `Bearer ${writeToken}`, 'content-type': 'application/json' };
    const cases: Record<string, string>[] = [
      { ...auth, origin: 'http://evil.example' },
      { ...auth, origin: board.origin.replace('http:', 'https:') },
      { ...auth, origin: 'null' },
      auth,
      { ...auth, origin: board.origin, 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of cases) {
      const res = await addJob(board, headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
    }
    expect(await jobCount(board.actions)).toBe(0);
  });

  it('refuses a same-origin change with the write token whose body is not JSON (415)', async () => {
    await refusedAdd(board, { authorization: `Bearer ${writeToken}`, 'content-type': 'text/plain', origin: board.origin }, 415);
  });

  it('lets a same-origin change with the write token through (the queue can be paused), but never adds or edits a job', async () => {
    const headers = {
      authorization: `Bearer ${writeToken}`,
      'content-type': 'application/json',
      origin: board.origin,
      'sec-fetch-site': 'same-origin',
    };
    const res = await addJob(board, headers);
    expect(res.status, res.body).toBe(405);
    expect(res.body).toContain('jobs are added only by Reflex');
    expect(await jobCount(board.actions)).toBe(0);
    // A job Reflex queued keeps the payload Reflex gave it.
    const queued = await board.actions.add('start', {
      rule: 'restart-on-crash',
      action: 'start',
      target: 'unix:///test',
      project: 'default',
      instance: 'web-1',
      correlationId: 'c1',
    });
    const edit = await send(
      board.server,
      'PATCH',
      `/dashboard/queues/api/queues/${encodeURIComponent(board.actions.name)}/${queued.id}/update-data`,
      headers,
      JSON.stringify({ data: { method: 'DELETE', path: '/1.0/instances/web-1' } }),
    );
    expect(edit.status, edit.body).toBe(405);
    expect((await board.actions.getJob(queued.id!))!.data).toMatchObject({ rule: 'restart-on-crash', instance: 'web-1' });
    await queued.remove();
    const pause = await send(board.server, 'PUT', `/dashboard/queues/api/queues/${encodeURIComponent(board.actions.name)}/pause`, {
      authorization: `Bearer ${writeToken}`,
      origin: board.origin,
    });
    expect(pause.status, pause.body).toBe(200);
    expect(await board.actions.isPaused()).toBe(true);
  });

  it('lets the write token read, but never trades it for a cookie through ?token=', async () => {
    expect((await send(board.server, 'GET', '/dashboard', { authorization: `Bearer ${writeToken}` })).status).toBe(200);
    expect((await send(board.server, 'GET', `/dashboard?token=${writeToken}`)).status).toBe(401);
  });
});

describe('dashboard cookie', () => {
  const board = boardPerSuite();

  it('is HttpOnly, SameSite=Strict, scoped to /dashboard, expires after 12 h, and is Secure only over HTTPS', async () => {
    const plain = await send(board.server, 'GET', `/dashboard?token=${readToken}`);
    const attrs = String((plain.headers['set-cookie'] as string[])[0])
      .split(';')
      .map((a) => a.trim().toLowerCase());
    expect(attrs).toEqual(expect.arrayContaining(['httponly', 'samesite=strict', 'path=/dashboard', 'max-age=43200']));
    expect(attrs).not.toContain('secure');
    expect(String((plain.headers['set-cookie'] as string[])[0])).not.toContain(readToken);
    // Behind a TLS-terminating proxy that says so.
    const proxied = await send(board.server, 'GET', `/dashboard?token=${readToken}`, { 'x-forwarded-proto': 'https' });
    expect(
      String((proxied.headers['set-cookie'] as string[])[0])
        .split(';')
        .map((a) => a.trim().toLowerCase()),
    ).toContain('secure');
  });

  it('stops opening the dashboard once 12 h have passed (checked by the server, not only by the browser), and when the token changes', async () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const app = new Hono();
    app.use('/dashboard/*', dashboardAuth({ read: readToken }, '/dashboard', { now: () => now }));
    app.get('/dashboard/x', (c) => c.text('ok'));
    const login = await app.request(`/dashboard/x?token=${readToken}`);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    expect((await app.request('/dashboard/x', { headers: { cookie } })).status).toBe(200);
    now += 12 * 3600_000 - 1_000;
    expect((await app.request('/dashboard/x', { headers: { cookie } })).status).toBe(200);
    now += 2_000;
    expect((await app.request('/dashboard/x', { headers: { cookie } })).status).toBe(401);

    const rotated = new Hono();
    rotated.use('/dashboard/*', dashboardAuth({ read: `${readToken}-new` }, '/dashboard', { now: () => now }));
    rotated.get('/dashboard/x', (c) => c.text('ok'));
    const fresh = (await app.request(`/dashboard/x?token=${readToken}`)).headers.get('set-cookie')!.split(';')[0]!;
    expect((await app.request('/dashboard/x', { headers: { cookie: fresh } })).status).toBe(200);
    expect((await rotated.request('/dashboard/x', { headers: { cookie: fresh } })).status).toBe(401);
  });
});

describe('Host header check (DNS rebinding)', () => {
  const board = boardPerSuite({ allowedHosts: ['reflex.internal', '*.example.org'] });

  it("answers 421 with a clear text on every route to a Host that is not this server's", async () => {
    for (const path of ['/metrics', '/readyz', '/healthz', '/dashboard', '/dashboard/queues/api/queues']) {
      for (const host of ['evil.example', `evil.example:${board.server.port}`, 'example.org', 'reflex.internal.evil.example']) {
        const res = await send(board.server, 'GET', path, { host, authorization: `Bearer ${readToken}` });
        expect(res.status, `${path} ${host}`).toBe(421);
        expect(res.body).toContain('does not answer to the host name');
        expect(res.body).toContain('httpAllowedHosts');
      }
    }
  });

  it('answers IP addresses (a Prometheus scrape by IP), localhost and the allowed names', async () => {
    const port = board.server.port;
    for (const host of [
      `127.0.0.1:${port}`,
      '127.0.0.1',
      `10.1.2.3:${port}`,
      `[::1]:${port}`,
      `localhost:${port}`,
      'LOCALHOST',
      'reflex.internal',
      `reflex.internal.:${port}`,
      'a.example.org',
      'deep.a.example.org',
    ]) {
      const res = await send(board.server, 'GET', '/metrics', { host });
      expect(res.status, host).toBe(200);
    }
  });
});
