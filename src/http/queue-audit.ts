import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import type { AuditLog } from '../audit/audit-log.js';
import { authenticatedUser } from './dashboard-auth.js';

/** What a bull-board API change did, in words, from its path under `/api/queues` ("paused queue events"). */
export function describeQueueChange(path: string): { queue?: string; what: string } {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts.length === 1) return { what: `${parts[0] === 'pause' ? 'paused' : parts[0] === 'resume' ? 'resumed' : parts[0]} every queue` };
  const [queue, verb, arg] = parts as [string, string, string?];
  const words: Record<string, string> = {
    pause: `paused queue ${queue}`,
    resume: `resumed queue ${queue}`,
    retry: `retried the ${arg ?? ''} jobs of queue ${queue}`,
    clean: `cleaned the ${arg ?? ''} jobs of queue ${queue}`,
    promote: `promoted the delayed jobs of queue ${queue}`,
    empty: `emptied queue ${queue}`,
    obliterate: `obliterated queue ${queue}`,
    concurrency: `set the concurrency of queue ${queue}`,
    'rate-limit': `changed the rate limit of queue ${queue}`,
    'job-schedulers': `changed job scheduler ${arg ?? ''} of queue ${queue}`,
  };
  if (words[verb]) return { queue, what: words[verb]! };
  // /:queue/:jobId/:verb
  return { queue, what: `${arg ?? 'changed'} job ${verb} of queue ${queue}` };
}

/**
 * Audits every change made through the queues page's API (bull-board, under `apiPath`) that
 * succeeded: type `queue`, with the user who made it (or `write token` for the shared one). A
 * paused events queue stops all automation: who did it must be on record.
 */
export function queueAudit(audit: AuditLog, apiPath: string): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (c.req.method === 'GET' || c.req.method === 'HEAD' || c.res.status >= 400) return;
    const actor = authenticatedUser(c)?.name ?? 'write token';
    const { queue, what } = describeQueueChange(c.req.path.slice(apiPath.length));
    await audit.append({
      type: 'queue',
      correlationId: `queue:${randomUUID()}`,
      summary: `${actor} ${what} on the queues page`,
      origin: 'queues-page',
      actor,
      ...(queue ? { queue } : {}),
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
    });
  };
}
