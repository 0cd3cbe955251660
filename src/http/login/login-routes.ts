import type { Context, Hono } from 'hono';
import { z } from 'zod';
import type { AuditLog } from '../../audit/audit-log.js';
import {
  authenticatedSession,
  authenticatedUser,
  clearSessionCookie,
  crossOrigin,
  sessionCookie,
  setSessionCookie,
  sourceOf,
} from '../dashboard-auth.js';
import { VerifyBusyError, type DashboardUser, type DashboardUsers } from '../dashboard-users.js';
import { jsonBody } from '../json-body.js';
import type { ConsoleSessions, SessionVia } from './console-sessions.js';
import type { LoginGuard } from './login-guard.js';
import { renderLogin } from './login-page.js';
import { getCookie } from 'hono/cookie';

/** What the login routes use. */
export interface LoginOptions {
  /** The dashboard's path (`/dashboard`). */
  base: string;
  sessions: ConsoleSessions;
  guard?: LoginGuard;
  users?: DashboardUsers;
  audit: AuditLog;
  /** The identity provider's button, when one is configured (its routes are registered by oidc-login.ts). */
  oidc?: { href: string; name: string };
}

/** The login page's address under `base`. */
export const loginPathOf = (base: string) => `${base}/login`;
/** The sign-out address under `base`. */
export const logoutPathOf = (base: string) => `${base}/logout`;

/** Where to go after signing in: a path under the dashboard, never another site (`//evil`, `/\evil`). */
export function safeNext(base: string, next: unknown): string {
  return typeof next === 'string' && (next === base || next.startsWith(`${base}/`) || next.startsWith(`${base}?`)) && !/[\\\s]/.test(next)
    ? next
    : base;
}

/** Opens a session for `user`, sets its cookie and audits the sign-in. */
export async function signIn(c: Context, o: Pick<LoginOptions, 'base' | 'sessions' | 'audit'>, user: DashboardUser, via: SessionVia): Promise<void> {
  const { secret, session } = await o.sessions.create(user, via, sourceOf(c));
  setSessionCookie(c, o.base, secret, Math.floor(o.sessions.ttlMs / 1000));
  await o.audit.append({
    type: 'access',
    correlationId: `session:${session.id.slice(0, 16)}`,
    summary: `${user.name} signed in (${user.role}) with ${via === 'oidc' ? 'the identity provider' : `a ${via}`}`,
    result: 'signed-in',
    actor: user.name,
    role: user.role,
    via,
    source: session.source,
  });
}

const endBody = z.strictObject({ id: z.string().min(1).max(100).optional(), user: z.string().min(1).max(100).optional() });
/** The largest login form taken (a name and a password are a few hundred bytes). */
const maxFormBytes = 8 * 1024;

/**
 * The login page (`GET/POST /dashboard/login`: a name and password from the users file), the
 * sign-out (`POST /dashboard/logout`) and the admin's view of sessions (`GET /dashboard/sessions`,
 * `POST /dashboard/sessions/end` with `{id}` or `{user}`). The login and sign-out routes are
 * outside dashboardAuth (nobody is signed in yet), so they check the Origin themselves: a page
 * elsewhere can neither sign a browser in as someone else nor out.
 */
export function registerLogin(app: Hono, o: LoginOptions): void {
  const loginPath = loginPathOf(o.base);
  const page = (c: Context, status: 200 | 401 | 403 | 429, extra: { problem?: string; name?: string; next?: string } = {}) => {
    c.header('Cache-Control', 'no-store');
    return c.html(
      renderLogin({ action: loginPath, next: safeNext(o.base, extra.next ?? c.req.query('next')), passwords: !!o.users, oidc: o.oidc, ...extra }),
      status,
    );
  };

  app.get(loginPath, (c) => page(c, 200));

  app.post(loginPath, async (c) => {
    const foreign = crossOrigin(c);
    if (foreign) return page(c, 403, { problem: `Refused: ${foreign}` });
    if (Number(c.req.header('content-length') ?? 0) > maxFormBytes) return page(c, 401, { problem: 'Refused: the form is too large' });
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const name = typeof form.name === 'string' ? form.name.trim().slice(0, 100) : '';
    const password = typeof form.password === 'string' ? form.password.slice(0, 1000) : '';
    const next = safeNext(o.base, form.next);
    if (!o.users) return page(c, 401, { problem: 'No users file is configured: sign in with the token or the identity provider', next });
    const source = sourceOf(c);
    const locked = await o.guard?.lockedUntil(source, name || undefined);
    if (locked) {
      c.header('Retry-After', String(Math.max(1, Math.ceil((locked - Date.now()) / 1000))));
      return page(c, 429, { problem: `Too many failed sign-ins: locked out until ${new Date(locked).toISOString()}`, name, next });
    }
    let user: DashboardUser | undefined;
    try {
      user = name && password ? await o.users.verifyPassword(name, password) : undefined;
    } catch (err) {
      if (!(err instanceof VerifyBusyError)) throw err;
      o.guard?.busy();
      c.header('Retry-After', '1');
      return page(c, 429, { problem: err.message, name, next });
    }
    if (!user) {
      await o.guard?.failed(source, 'password', name || undefined);
      return page(c, 401, { problem: 'Wrong name or password', name, next });
    }
    await o.guard?.succeeded(user.name);
    await signIn(c, o, user, 'password');
    return c.redirect(next, 303);
  });

  app.post(logoutPathOf(o.base), async (c) => {
    const foreign = crossOrigin(c);
    if (foreign) return c.text(`403 Forbidden: ${foreign}\n`, 403);
    const secret = getCookie(c, sessionCookie);
    const session = secret ? await o.sessions.get(secret) : undefined;
    if (session) {
      await o.sessions.end(session.id);
      await o.audit.append({
        type: 'access',
        correlationId: `session:${session.id.slice(0, 16)}`,
        summary: `${session.user} signed out`,
        result: 'signed-out',
        actor: session.user,
        via: session.via,
        source: sourceOf(c),
      });
    }
    clearSessionCookie(c, o.base);
    return c.redirect(loginPath, 303);
  });

  // Behind dashboardAuth (an admin path: its changes need an admin); reading the list does too.
  const adminOnly = (c: Context) => {
    const user = authenticatedUser(c);
    return user?.role === 'admin'
      ? undefined
      : c.json({ error: `${user ? `${user.name} is a ${user.role}: ` : ''}the sessions are an admin's` }, 403);
  };
  app.get(`${o.base}/sessions`, async (c) => {
    const refused = adminOnly(c);
    if (refused) return refused;
    const mine = authenticatedSession(c)?.id;
    return c.json({ sessions: (await o.sessions.list()).map((s) => ({ ...s, current: s.id === mine })) });
  });
  app.post(`${o.base}/sessions/end`, async (c) => {
    const refused = adminOnly(c);
    if (refused) return refused;
    const parsed = endBody.safeParse(await jsonBody(c));
    if (!parsed.success || !parsed.data.id === !parsed.data.user) return c.json({ error: 'give id (a session) or user (all their sessions)' }, 400);
    const admin = authenticatedUser(c)!.name;
    const ended = parsed.data.id ? Number(await o.sessions.end(parsed.data.id)) : await o.sessions.endUser(parsed.data.user!);
    await o.audit.append({
      type: 'access',
      correlationId: `sessions-end:${Date.now()}`,
      summary: `${admin} ended ${ended} session(s) of ${parsed.data.user ?? `session ${parsed.data.id!.slice(0, 12)}`}`,
      result: 'session-ended',
      actor: admin,
      ...(parsed.data.user ? { user: parsed.data.user } : { session: parsed.data.id }),
      source: sourceOf(c),
    });
    return c.json({ ended });
  });
}
