import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import type { Context, Hono, MiddlewareHandler } from 'hono';

/**
 * /dashboard/queues: bull-board over Reflex's queues, behind the dashboard's auth (mounted by
 * http-server.ts, which imports this module only when a dashboard is configured).
 * Read-only twice over while nobody may change the queues (`readOnlyMode`, asked at each request):
 * bull-board hides its buttons and refuses (405) per queue, and dashboardAuth refuses every non-GET
 * before it reaches bull-board.
 */
export function mountQueuesBoard(app: Hono, queuesPath: string, queues: Queue[], readOnlyMode: () => boolean): void {
  const adapter = new HonoAdapter(serveStatic);
  let readOnly = readOnlyMode();
  const adapters = () => queues.map((q) => new BullMQAdapter(q, { readOnlyMode: readOnly }));
  const title = () => ({ boardTitle: readOnly ? 'Reflex queues (read-only)' : 'Reflex queues' });
  const board = createBullBoard({ queues: adapters(), serverAdapter: adapter, options: { uiConfig: title() } });
  adapter.setBasePath(queuesPath);
  // Whether anyone may change the queues follows the users file (an admin added or removed while
  // Reflex runs): bull-board's read-only mode is fixed per queue adapter, so the adapters are replaced.
  const follow: MiddlewareHandler = async (_c, next) => {
    if (readOnlyMode() !== readOnly) {
      readOnly = !readOnly;
      board.replaceQueues(adapters());
      // The rest of the page's settings (icons, the history flags) stay as createBullBoard made them.
      adapter.setUIConfig({ ...(adapter as unknown as { uiConfig?: object }).uiConfig, ...title() });
    }
    await next();
  };
  app.use(queuesPath, follow);
  app.use(`${queuesPath}/*`, follow);
  // Jobs come only from Reflex's own code paths (a rule, a schedule, an operator's heal), each
  // validated and audited with who decided it. A job added or edited here would run any payload
  // (an `api-call` is any API call, as root on a unix socket) audited as rule `heal` with no actor;
  // bull-board has no option to turn these two off, so they are refused before it, even with the write token.
  const noNewJobs = (c: Context) =>
    c.text(
      "reflex: jobs are added only by Reflex (rules, schedules, reflex heal and the console's Heal): the queues page does not add or edit jobs\n",
      405,
    );
  app.post(`${queuesPath}/api/queues/:queue/add`, noNewJobs);
  app.patch(`${queuesPath}/api/queues/:queue/:job/update-data`, noNewJobs);
  // bull-board's page loads its fonts from Google: a console must work air-gapped and leak nothing
  // about who looks at it, so the link is dropped (the system's sans-serif and monospace stand in).
  const localFonts: MiddlewareHandler = async (c, next) => {
    await next();
    if (!c.res.headers.get('content-type')?.startsWith('text/html')) return;
    const html = await c.res.text();
    const headers = new Headers(c.res.headers);
    headers.delete('content-length');
    c.res = new Response(html.replace(/<link[^>]+href="https:\/\/fonts\.(googleapis|gstatic)\.com[^>]*>/g, ''), { status: c.res.status, headers });
  };
  app.use(queuesPath, localFonts);
  app.use(`${queuesPath}/*`, localFonts);
  app.route(queuesPath, adapter.registerPlugin());
}
