import type { AddressInfo } from 'node:net';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serve, type ServerType } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import { Hono } from 'hono';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit-log.js';
import type { Metrics } from '../metrics/metrics.js';
import { z } from 'zod';
import { readDuration } from '../config/duration.js';
import type { AlertsView } from '../notify/alert-board.js';
import { silenceMutes, type Silences } from '../rules/silences.js';
import { dashboardAuth } from './dashboard-auth.js';
import { hostCheck } from './host-check.js';
import { renderDashboard } from './dashboard-page.js';
import { runChecks, type ReadinessChecks } from './readiness.js';

/** What the dashboard reads. */
export interface DashboardSources {
  /** Bearer token that reads; see dashboard-auth.ts. */
  token: string;
  /** Bearer token that may also change the queues; none: bull-board is read-only (UI and server). */
  writeToken?: string;
  /** Shown in bull-board (the events and actions queues). */
  queues: Queue[];
  audit: AuditLog;
  /** Read, and written by the page's silence form (with the write token; audited with origin `dashboard`). */
  silences: Silences;
  /** The firing alerts and pending notification groups; none: the page says notifications are not configured. */
  alerts?: () => Promise<AlertsView>;
  target: string;
  /** Newest audit records the page reads at most. Default 2000. */
  recordLimit?: number;
}

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions {
  /** Default 127.0.0.1: nothing is exposed beyond the host unless asked for. */
  host?: string;
  /** 0 picks a free port (tests); startReflex treats a configured 0 as "no server". */
  port: number;
  metrics: Metrics;
  readiness: ReadinessChecks;
  /** None: /dashboard answers 404 and says how to enable it. */
  dashboard?: DashboardSources;
  /** Host names answered besides IP addresses, localhost and `host` (see host-check.ts). Default none. */
  allowedHosts?: readonly string[];
  logger: Logger;
}

/** A listening HTTP server. */
export interface RunningHttpServer {
  /** `http://host:port` */
  url: string;
  port: number;
  close(): Promise<void>;
}

const dashboardPath = '/dashboard';
const queuesPath = `${dashboardPath}/queues`;
const silencesPath = `${dashboardPath}/silences`;

/** The body of the dashboard's silence form (POST /dashboard/silences). */
const silenceRequestSchema = z.strictObject({
  scope: z.strictObject({ instance: z.string().max(200).optional(), project: z.string().max(200).optional(), location: z.string().max(200).optional(), target: z.string().max(500).optional() }).default({}),
  /** Everything (a global maintenance window), instead of a scope. */
  all: z.boolean().optional(),
  duration: z.string().min(1).max(40),
  reason: z.string().min(1).max(500),
  mutes: z.array(z.enum(silenceMutes)).min(1).optional(),
  /** Who, as the operator typed it. Default `dashboard`. */
  createdBy: z.string().max(100).optional(),
});

/**
 * The routes: /metrics, /healthz, /readyz and, with a token, /dashboard (page) and
 * /dashboard/queues (bull-board). Every route first checks the Host header (DNS rebinding).
 */
export function buildHttpApp(opts: Omit<HttpServerOptions, 'port'>): Hono {
  const app = new Hono();
  app.use('*', hostCheck({ bindHost: opts.host ?? '127.0.0.1', names: opts.allowedHosts }));
  app.get('/metrics', async (c) => {
    const { contentType, body } = await opts.metrics.scrape();
    return c.body(body, 200, { 'Content-Type': contentType });
  });
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const report = await runChecks(opts.readiness);
    return c.json({ status: report.ready ? 'ready' : 'not ready', checks: report.checks }, report.ready ? 200 : 503);
  });

  const board = opts.dashboard;
  if (!board) {
    const disabled = (c: { text: (t: string, s: 404) => Response }) => c.text('dashboard disabled: no token configured (set REFLEX_DASHBOARD_TOKEN or dashboardToken)\n', 404);
    app.all(dashboardPath, disabled);
    app.all(`${dashboardPath}/*`, disabled);
    return app;
  }
  const auth = dashboardAuth({ read: board.token, write: board.writeToken }, dashboardPath);
  app.use(dashboardPath, auth);
  app.use(`${dashboardPath}/*`, auth);

  // Read-only twice over: bull-board hides its buttons and refuses (405) per queue, and
  // dashboardAuth refuses every non-GET before it reaches bull-board.
  const readOnlyMode = board.writeToken === undefined;
  const adapter = new HonoAdapter(serveStatic);
  createBullBoard({ queues: board.queues.map((q) => new BullMQAdapter(q, { readOnlyMode })), serverAdapter: adapter, options: { uiConfig: { boardTitle: readOnlyMode ? 'Reflex queues (read-only)' : 'Reflex queues' } } });
  adapter.setBasePath(queuesPath);
  app.route(queuesPath, adapter.registerPlugin());

  const limit = board.recordLimit ?? 2_000;
  app.get(dashboardPath, async (c) => {
    const instance = c.req.query('instance') || undefined;
    const [records, silences, alerts] = await Promise.all([board.audit.read({ instance, count: limit }), board.silences.list(), board.alerts?.()]);
    c.header('Cache-Control', 'no-store');
    return c.html(renderDashboard({ target: board.target, queuesPath, silences, alerts, records, instance, limit, silencesPath, writable: !readOnlyMode }));
  });
  // dashboardAuth has already required the write token as Bearer, a same-origin Origin and a JSON body.
  app.post(silencesPath, async (c) => {
    const parsed = silenceRequestSchema.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) return c.json({ error: parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ') }, 400);
    const { scope, duration, reason, mutes, createdBy } = parsed.data;
    // A bare number would be milliseconds: on a form more likely a slip, as on the command line.
    const durationMs = /^\s*\d+(\.\d+)?\s*$/.test(duration) ? undefined : readDuration(duration);
    if (!durationMs) return c.json({ error: `duration: expected a duration such as 30m, 2h, 1h30m, 1w` }, 400);
    const clean = Object.fromEntries(Object.entries(scope).filter(([, v]) => v)) as typeof scope;
    if (!Object.keys(clean).length && !parsed.data.all) return c.json({ error: 'scope: give an instance, project, member (location) or target, or all: true' }, 400);
    try {
      const silence = await board.silences.add({ scope: clean, durationMs, reason, mutes, createdBy: createdBy || 'dashboard', origin: 'dashboard' });
      return c.json(silence, 201);
    } catch (err) {
      return c.json({ error: (err as Error).message }, 400);
    }
  });
  app.delete(`${silencesPath}/:id`, async (c) => {
    const removed = await board.silences.remove(c.req.param('id'), { origin: 'dashboard', createdBy: 'dashboard' });
    return removed ? c.body(null, 204) : c.json({ error: `no silence ${c.req.param('id')}` }, 404);
  });
  return app;
}

/** Starts the HTTP server; rejects when the address cannot be bound (e.g. the port is in use). */
export async function startHttpServer(opts: HttpServerOptions): Promise<RunningHttpServer> {
  const app = buildHttpApp(opts);
  const host = opts.host ?? '127.0.0.1';
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: opts.port }, () => resolve(s));
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const dashboard = !opts.dashboard ? 'disabled (no token)' : `${url}${dashboardPath}${opts.dashboard.writeToken === undefined ? ' (read-only)' : ' (writes with the write token)'}`;
  opts.logger.info({ url, dashboard }, 'http server listening (/metrics, /healthz, /readyz)');
  return {
    url,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        // Keep-alive sockets (a browser, a scraper) would otherwise hold close() open.
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
