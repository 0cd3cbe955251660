import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import type { Context, Hono, MiddlewareHandler } from 'hono';

/**
 * /dashboard/queues: bull-board over Reflex's queues, behind the dashboard's auth (mounted by
 * http-server.ts, which imports this module only when a dashboard is configured).
 * Read-only twice over: bull-board hides its buttons and refuses (405) per queue, and
 * dashboardAuth refuses every non-GET before it reaches bull-board.
 */
export function mountQueuesBoard(app: Hono, queuesPath: string, queues: Queue[], readOnlyMode: boolean): void {
  const adapter = new HonoAdapter(serveStatic);
  createBullBoard({
    queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode })),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: readOnlyMode ? 'Reflex queues (read-only)' : 'Reflex queues' } },
  });
  adapter.setBasePath(queuesPath);
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
