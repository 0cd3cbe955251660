import { createServer, type AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Queue } from 'bullmq';
import { Hono, type MiddlewareHandler } from 'hono';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit-log.js';
import { ReflexError } from '../errors/reflex-error.js';
import type { Metrics } from '../metrics/metrics.js';
import type { AlertsView } from '../notify/alert-board.js';
import type { Silences } from '../silences/silences.js';
import { addSilenceFromRequest } from './silence-request.js';
import { authenticatedUser, dashboardAuth } from './dashboard-auth.js';
import type { DashboardUsers } from './dashboard-users.js';
import { hostCheck } from './host-check.js';
import { ConsoleSessions } from './login/console-sessions.js';
import { defaultLockout, LoginGuard, type LockoutSettings } from './login/login-guard.js';
import { loginPathOf, logoutPathOf, registerLogin } from './login/login-routes.js';
import { oidcStartPathOf, registerOidc, type OidcSettings } from './login/oidc-login.js';
import { queueAudit } from './queue-audit.js';
import { inboundWebhooks, type InboundSources } from './inbound-webhooks.js';
import { jsonBody } from './json-body.js';
import { renderDashboard } from './dashboard-page.js';
import { registerConsole, type ConsoleSources } from './console/console-routes.js';
import { approvalsApiPathOf } from './console/approval-routes.js';
import { runChecks, type ReadinessChecks } from './readiness.js';

/** What the dashboard reads. */
export interface DashboardSources {
  /** Bearer token that reads; see dashboard-auth.ts. None: only users read (their tokens, the login page). */
  token?: string;
  /** Bearer token that may also change the queues; none: bull-board is read-only (UI and server). */
  writeToken?: string;
  /** Per-user tokens with roles (dashboardUsersFile): operators act under their own name, viewers only read. */
  users?: DashboardUsers;
  /** With `users`, whether the shared write token still acts too. Default false. */
  writeTokenWithUsers?: boolean;
  /** How long a console session lasts from sign-in. Default 12 h. */
  sessionTtlMs?: number;
  /** When failed sign-ins lock a source or a user out. Default {@link defaultLockout}. */
  lockout?: LockoutSettings;
  /** Sign-in at an identity provider (OpenID Connect); needs `console` (sessions live in its Redis). */
  oidc?: OidcSettings;
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
  /** The operator's console at /dashboard (the audit table moves to /dashboard/audit); none: /dashboard is the audit table. */
  console?: ConsoleSources;
}

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions {
  /** Default 127.0.0.1: nothing is exposed beyond the host unless asked for. */
  host?: string;
  /** 0 picks a free port (tests); startReflex treats a configured 0 as "no server". */
  port: number;
  metrics: Metrics;
  readiness: ReadinessChecks;
  /** The deployment this process belongs to, in /readyz's `deployment` (redis/deployment-id.ts). */
  deployment?: () => Promise<string | undefined>;
  /** None: /dashboard answers 404 and says how to enable it. */
  dashboard?: DashboardSources;
  /** `POST /hooks/alertmanager` and `/hooks/webhook` (inbound-webhooks.ts); none: both answer 404. */
  inbound?: InboundSources;
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
const auditPath = `${dashboardPath}/audit`;

/**
 * The routes: /metrics, /healthz, /readyz and, with a token, /dashboard (the operator's console,
 * with its API under /dashboard/console; or the audit table when no console sources are given),
 * /dashboard/audit (the audit table) and /dashboard/queues (bull-board). Every route first checks
 * the Host header (DNS rebinding).
 */
export async function buildHttpApp(opts: Omit<HttpServerOptions, 'port'>): Promise<Hono> {
  const app = new Hono();
  app.use('*', hostCheck({ bindHost: opts.host ?? '127.0.0.1', names: opts.allowedHosts }));
  app.get('/metrics', async (c) => {
    const { contentType, body } = await opts.metrics.scrape();
    return c.body(body, 200, { 'Content-Type': contentType });
  });
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  if (opts.inbound) app.route('/hooks', inboundWebhooks(opts.inbound));
  else app.all('/hooks/*', (c) => c.text('inbound alerts disabled: no inbound secret configured (inbound in the config file)\n', 404));
  app.get('/readyz', async (c) => {
    const [report, deployment] = await Promise.all([runChecks(opts.readiness), opts.deployment?.()]);
    return c.json({ status: report.ready ? 'ready' : 'not ready', deployment, checks: report.checks }, report.ready ? 200 : 503);
  });

  const board = opts.dashboard;
  if (!board) {
    const disabled = (c: { text: (t: string, s: 404) => Response }) =>
      c.text(
        'dashboard disabled: no token configured (set REFLEX_DASHBOARD_TOKEN or dashboardToken, or users: dashboardUsersFile, dashboardOidc)\n',
        404,
      );
    app.all(dashboardPath, disabled);
    app.all(`${dashboardPath}/*`, disabled);
    return app;
  }
  // Before the auth: its refusals and redirects are console responses too.
  app.use(dashboardPath, noFraming);
  app.use(`${dashboardPath}/*`, noFraming);
  // Sessions and the lock-out live in Redis beside the console's state (every replica shares them).
  const store = board.console && { redis: board.console.redis, prefix: board.console.prefix };
  const sessions = store && new ConsoleSessions(store.redis, store.prefix, board.sessionTtlMs ?? 12 * 3_600_000);
  const guard =
    store &&
    new LoginGuard(store.redis, store.prefix, board.lockout ?? defaultLockout, {
      audit: board.audit,
      logger: opts.logger,
      registry: opts.metrics.registry,
    });
  const auth = dashboardAuth({ read: board.token, write: board.writeToken }, dashboardPath, {
    users: board.users,
    writeTokenWithUsers: board.writeTokenWithUsers,
    sessions,
    guard,
    audit: board.audit,
    adminPaths: [queuesPath, `${dashboardPath}/sessions`],
    ...(board.console ? { roleCheckedPaths: [approvalsApiPathOf(dashboardPath)] } : {}),
    externalUsers: !!(sessions && board.oidc),
    ...(sessions ? { loginPath: loginPathOf(dashboardPath), publicPaths: [loginPathOf(dashboardPath), logoutPathOf(dashboardPath)] } : {}),
  });
  app.use(dashboardPath, auth);
  app.use(`${dashboardPath}/*`, auth);
  const oidc = sessions && board.oidc && { href: oidcStartPathOf(dashboardPath), name: board.oidc.name };
  if (sessions) registerLogin(app, { base: dashboardPath, sessions, guard, users: board.users, audit: board.audit, ...(oidc ? { oidc } : {}) });
  if (sessions && board.oidc)
    registerOidc(app, {
      base: dashboardPath,
      settings: board.oidc,
      sessions,
      guard,
      audit: board.audit,
      redis: board.console!.redis,
      prefix: board.console!.prefix,
      logger: opts.logger,
    });
  app.use(`${queuesPath}/api/queues/*`, queueAudit(board.audit, `${queuesPath}/api/queues`));

  // bull-board (with lodash, valibot and ejs: 88 of the 745 CommonJS modules `reflex run` loaded)
  // is loaded only when there is a dashboard to show it on. Its buttons show when someone may
  // change the queues: the write token, or an admin (others are refused by dashboardAuth). Asked
  // at each request, as the console's actions are: the users file is followed while Reflex runs.
  const readOnlyMode = () => board.writeToken === undefined && !board.users?.hasAdmins && !board.oidc?.roles.admin.length;
  const { mountQueuesBoard } = await import('./queues-board.js');
  mountQueuesBoard(app, queuesPath, board.queues, readOnlyMode);

  const limit = board.recordLimit ?? 2_000;
  const auditPagePath = board.console ? auditPath : dashboardPath;
  if (board.console)
    registerConsole(app, dashboardPath, {
      ...board.console,
      audit: board.audit,
      silences: board.silences,
      alerts: board.alerts,
      metrics: opts.metrics,
      readiness: opts.readiness,
      writable: () =>
        (board.writeToken !== undefined && (!board.users || board.writeTokenWithUsers === true)) ||
        !!board.users?.hasOperators ||
        !!board.oidc?.roles.admin.length ||
        !!board.oidc?.roles.operator.length,
      identity: board.users ? 'users' : 'token',
      assignees: () => ({ names: board.users?.actingNames ?? [], open: !board.users || !!board.oidc }),
      queuesPath,
      auditPath,
    });
  app.get(auditPagePath, async (c) => {
    const instance = c.req.query('instance') || undefined;
    const [records, silences, alerts] = await Promise.all([board.audit.read({ instance, count: limit }), board.silences.list(), board.alerts?.()]);
    c.header('Cache-Control', 'no-store');
    return c.html(
      renderDashboard({
        target: board.target,
        queuesPath,
        silences,
        alerts,
        records,
        instance,
        limit,
        silencesPath,
        writable: board.writeToken !== undefined,
        ...(board.console ? { consolePath: dashboardPath } : {}),
      }),
    );
  });
  // dashboardAuth has already required the write token as Bearer, a same-origin Origin and a JSON body.
  app.post(silencesPath, async (c) => {
    const added = await addSilenceFromRequest(board.silences, await jsonBody(c), 'dashboard', { createdBy: authenticatedUser(c)?.name });
    return 'silence' in added ? c.json(added.silence, 201) : c.json({ error: added.error }, 400);
  });
  app.delete(`${silencesPath}/:id`, async (c) => {
    const removed = await board.silences.remove(c.req.param('id'), { origin: 'dashboard', createdBy: authenticatedUser(c)?.name ?? 'dashboard' });
    return removed ? c.body(null, 204) : c.json({ error: `no silence ${c.req.param('id')}` }, 404);
  });
  return app;
}

/**
 * Forbids framing every dashboard response (`Content-Security-Policy: frame-ancestors 'none'`, and
 * `X-Frame-Options: DENY` for older browsers): a page elsewhere cannot show the console under a
 * decoy and have an operator click its buttons (clickjacking). A policy a route set itself
 * (bull-board's) keeps its directives and gains this one.
 */
const noFraming: MiddlewareHandler = async (c, next) => {
  await next();
  const policy = c.res.headers.get('content-security-policy');
  const headers = {
    'Content-Security-Policy': policy?.includes('frame-ancestors') ? policy : policy ? `${policy}; frame-ancestors 'none'` : "frame-ancestors 'none'",
    'X-Frame-Options': 'DENY',
  };
  try {
    for (const [k, v] of Object.entries(headers)) c.res.headers.set(k, v);
  } catch {
    // A response with immutable headers (one passed through from a fetch) is copied.
    c.res = new Response(c.res.body, { status: c.res.status, headers: { ...Object.fromEntries(c.res.headers), ...headers } });
  }
};

/**
 * Starts the HTTP server; rejects with HTTP_BIND_FAILED, naming the address and the system's
 * reason, when the address cannot be bound (the port is taken, the host is not this machine's).
 */
export async function startHttpServer(opts: HttpServerOptions): Promise<RunningHttpServer> {
  const app = await buildHttpApp(opts);
  const host = opts.host ?? '127.0.0.1';
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: opts.port }, () => resolve(s));
    s.once('error', (err: NodeJS.ErrnoException) => reject(bindError(err, host, opts.port)));
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const dashboard = !opts.dashboard
    ? 'disabled (no token)'
    : `${url}${dashboardPath}${
        opts.dashboard.users || opts.dashboard.oidc
          ? ` (users sign in at ${loginPathOf(dashboardPath)})`
          : opts.dashboard.writeToken === undefined
            ? ' (read-only)'
            : ' (writes with the write token)'
      }`;
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

/**
 * Rejects with HTTP_BIND_FAILED, as {@link startHttpServer} would, when `host:port` cannot be bound
 * now. `reflex run` asks before it starts anything: a taken port is then its one line, instead of
 * a start torn down half-way (a resync cut short logs its own error first).
 */
export async function checkBindable(host: string, port: number): Promise<void> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (err: NodeJS.ErrnoException) => reject(bindError(err, host, port)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

function bindError(err: NodeJS.ErrnoException, host: string, port: number): ReflexError {
  const why =
    err.code === 'EADDRINUSE'
      ? 'the port is taken (another reflex run, or another service)'
      : err.code === 'EADDRNOTAVAIL'
        ? 'the address is not on this host'
        : err.code === 'EACCES'
          ? 'a port below 1024 needs privileges'
          : (err.code ?? err.message);
  return new ReflexError(
    'HTTP_BIND_FAILED',
    `cannot serve /metrics, /healthz and /readyz on ${host}:${port}: ${why}; set --http-port (REFLEX_HTTP_PORT, httpPort) to a free port, or 0 to run without the HTTP server`,
    { cause: err },
  );
}
