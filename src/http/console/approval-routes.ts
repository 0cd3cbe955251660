import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { ReflexError } from '../../errors/reflex-error.js';
import { describeActions, type Approval, type Approvals, type Decider } from '../../remediation/approvals.js';
import { authenticatedUser } from '../dashboard-auth.js';
import { jsonBody } from '../json-body.js';

/** One approval as the console shows it: the request without its held jobs' options, and what it waits for. */
export interface ApprovalView {
  id: string;
  status: Approval['status'];
  settled: boolean;
  rule: string;
  target: string;
  project: string;
  instance: string;
  location?: string;
  correlationId: string;
  summary: string;
  /** The actions it holds, in order (`start`, `restart`). */
  actions: string[];
  role: Approval['role'];
  requestedAt: string;
  expiresAt: string;
  decision?: { at: string; actor?: string; origin?: string; reason?: string };
}

const viewOf = (a: Approval): ApprovalView => ({
  id: a.id,
  status: a.status,
  settled: a.settled,
  rule: a.rule,
  target: a.target,
  project: a.project,
  instance: a.instance,
  ...(a.location ? { location: a.location } : {}),
  correlationId: a.correlationId,
  summary: a.summary,
  actions: a.jobs.map((j) => j.data.action),
  role: a.role,
  requestedAt: new Date(a.requestedAt).toISOString(),
  expiresAt: new Date(a.expiresAt).toISOString(),
  ...(a.decision
    ? {
        decision: {
          at: new Date(a.decision.at).toISOString(),
          ...(a.decision.actor ? { actor: a.decision.actor } : {}),
          ...(a.decision.origin ? { origin: a.decision.origin } : {}),
          ...(a.decision.reason ? { reason: a.decision.reason } : {}),
        },
      }
    : {}),
});

const decideBody = z.strictObject({
  verdict: z.enum(['approved', 'denied']),
  reason: z.string().trim().max(500).optional(),
});

/** Where the console's approvals API lives under the dashboard's path: its route checks the role of each decision itself. */
export const approvalsApiPathOf = (base: string) => `${base}/console/approvals`;

/** The 403 page of a signed link whose signature does not hold: nothing about the approval. */
const invalidLinkPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Reflex: this link is not valid</title><link rel="icon" href="data:,"></head>
<body><main><h1>This link is not valid</h1><p>The approval link was changed or cut short: open the link from the alert as it was sent, or find the approval in the console's Approvals panel.</p></main></body></html>`;

/**
 * The console's approvals (docs/approvals.md): `GET {api}/approvals` (the waiting and the recently
 * decided), `POST {api}/approvals/:id/decide` with `{verdict: approved|denied, reason?}`, and the
 * signed link `GET {base}/approvals/:id?sig=…` of the alerts, which opens the console on that
 * approval once its signature holds (403 otherwise). Every decision goes through
 * {@link Approvals.decide} as the signed-in user with their role (origin `console`): a user below
 * the request's role is refused 403 there, and audited. A viewer's request reaches this route (the
 * auth lets it through here, so the refusal is audited too); the shared write token decides as an
 * operator, under that name (it names nobody).
 */
export function registerApprovals(app: Hono, base: string, api: string, approvals: Pick<Approvals, 'list' | 'get' | 'decide' | 'links'>): void {
  if (`${api}/approvals` !== approvalsApiPathOf(base)) throw new Error(`the approvals API is expected at ${approvalsApiPathOf(base)}`);
  app.get(`${api}/approvals`, async (c) => c.json({ approvals: (await approvals.list()).map(viewOf) }));

  app.post(`${api}/approvals/:id/decide`, async (c) => {
    const parsed = decideBody.safeParse(await jsonBody(c));
    if (!parsed.success) return c.json({ error: parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ') }, 400);
    const { verdict, reason } = parsed.data;
    try {
      const result = await approvals.decide(c.req.param('id'), verdict, deciderOf(c), reason || undefined);
      if (!result.decided) return c.json({ error: result.why, retryable: false, approval: viewOf(result.approval) }, 409);
      const a = result.approval;
      return c.json({
        decided: `${describeActions(a)} ${a.status} by ${a.decision?.actor ?? 'you'}${verdict === 'approved' ? ': a worker queues it within a second, re-checked at the moment of acting' : ': nothing is done'}`,
        approval: viewOf(a),
      });
    } catch (err) {
      if (err instanceof ReflexError && err.code === 'APPROVAL_FORBIDDEN')
        return c.json({ error: err.message, code: err.code, retryable: false }, 403);
      if (err instanceof ReflexError && err.code === 'APPROVAL_UNKNOWN') return c.json({ error: err.message, code: err.code, retryable: false }, 404);
      throw err;
    }
  });

  // The signed link: it proves the link is Reflex's and grants nothing (the auth in front of it
  // already asked for a sign-in, and sent a browser without one to the login page and back here).
  app.get(`${base}/approvals/:id`, async (c) => {
    c.header('Cache-Control', 'no-store');
    const id = c.req.param('id');
    const sig = c.req.query('sig') ?? '';
    if (!sig || !(await approvals.links.verify(id, sig))) return c.html(invalidLinkPage, 403);
    return c.redirect(`${base}?${new URLSearchParams({ approval: id })}#approvals`, 303);
  });
}

/** Who decides: the signed-in user with their role; without users, the shared write token (which names nobody) as an operator. */
function deciderOf(c: Context): Decider {
  const user = authenticatedUser(c);
  return user ? { actor: user.name, origin: 'console', role: user.role } : { actor: 'the shared write token', origin: 'console', role: 'operator' };
}
