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
import type { Silences } from '../rules/silences.js';
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
  silences: Silences;
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
    const [records, silences] = await Promise.all([board.audit.read({ instance, count: limit }), board.silences.list()]);
    c.header('Cache-Control', 'no-store');
    return c.html(renderDashboard({ target: board.target, queuesPath, silences, records, instance, limit }));
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
