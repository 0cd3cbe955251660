import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { assigneePattern, maxNoteLength, type TriageChange } from '../../alerts/triage.js';
import { parseTimeArg } from '../../audit/audit-query.js';
import type { OperatorOrigin } from '../../remediation/operator-actions.js';
import { jsonBody } from '../json-body.js';
import { findIncident, triageIncident, type TriageDeps } from './incident-triage.js';

/** Whom an incident may be assigned to: `names` (the users file's operators and admins), and whether any other name is taken too. */
export interface Assignees {
  names: string[];
  /** True with an identity provider (its users are not listed anywhere) or without users (the shared token). */
  open: boolean;
}

const triageBody = z
  .strictObject({
    /** The incident's correlation id. */
    id: z.string().min(1).max(300),
    /** Where to look for it: a duration back (7d) or an ISO time. Default 7d. */
    since: z.string().max(40).optional(),
    ack: z.literal(true).optional(),
    assign: z.string().regex(assigneePattern, 'a user name: letters, digits, . _ @ - only').optional(),
    note: z.string().trim().min(1).max(maxNoteLength).optional(),
    actor: z.string().max(100).optional(),
  })
  .refine((b) => [b.ack, b.assign, b.note].filter((x) => x !== undefined).length === 1, 'give one of ack, assign, note');

/**
 * The console's triage of an incident: `POST {api}/incidents/triage` with the incident's
 * correlation id and one of `ack: true`, `assign: NAME`, `note: TEXT`. An operator or an admin
 * (dashboardAuth refuses a viewer, 403); audited with the user, shown to other viewers through the
 * audit feed, and put on the incident's firing alerts. `GET {api}/assignees` lists whom to assign to.
 */
export function registerTriage(
  app: Hono,
  api: string,
  deps: TriageDeps & { assignees: () => Assignees; by: (c: Context, actor?: string) => OperatorOrigin },
): void {
  app.get(`${api}/assignees`, (c) => c.json(deps.assignees()));
  app.post(`${api}/incidents/triage`, async (c) => {
    const parsed = triageBody.safeParse(await jsonBody(c));
    if (!parsed.success) return c.json({ error: parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ') }, 400);
    const b = parsed.data;
    const since = parseTimeArg(b.since ?? '7d');
    if (!since) return c.json({ error: 'since: a duration back from now (7d) or an ISO time' }, 400);
    if (b.assign !== undefined) {
      const who = deps.assignees();
      if (!who.open && !who.names.includes(b.assign))
        return c.json({ error: `${b.assign} is not a user who may act (an operator or an admin of the users file)` }, 400);
    }
    const incident = await findIncident(deps.audit, b.id, since);
    if (!incident) return c.json({ error: `no incident ${b.id} since ${since.toISOString()}` }, 404);
    const change: TriageChange = b.ack ? { ack: true } : b.assign !== undefined ? { assign: b.assign } : { note: b.note! };
    const done = await triageIncident(deps, incident, change, deps.by(c, b.actor));
    return c.json({ triaged: done.summary, changed: done.changed, alerts: done.alerts, triage: done.triage ?? null });
  });
}
