import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { AuditLog } from '../audit/audit-log.js';
import { roleAtLeast } from '../config/roles.js';
import { VerifyBusyError, type DashboardUser, type DashboardUsers } from './dashboard-users.js';
import type { ConsoleSession, ConsoleSessions } from './login/console-sessions.js';
import type { LoginGuard } from './login/login-guard.js';

const cookieName = 'reflex_dashboard';

/** The dashboard's shared tokens: `read` shows everything; `write` (optional) may also change the queues. */
export interface DashboardTokens {
  /** None: only users (their tokens, the login page, the identity provider) read. */
  read?: string;
  /** None: every request that is not GET or HEAD and not a user's is refused (405), whatever it carries. */
  write?: string;
}

/** Options of {@link dashboardAuth}. */
export interface DashboardAuthOptions {
  /** How long the read token's cookie is valid, in seconds (browser Max-Age and server-side check). Default 12 h. */
  cookieMaxAgeS?: number;
  /** The clock (tests). */
  now?: () => number;
  /**
   * Per-user secrets with roles (a users file): a user's token reads, an operator's also acts,
   * audited under the user's name; a viewer's change is refused (403).
   */
  users?: DashboardUsers;
  /** With `users`, whether the shared write token still acts too (under the name typed in). Default false. */
  writeTokenWithUsers?: boolean;
  /** Server-side sessions: a user's `?token=` (and the login page) opens one, held by a cookie. None: no sessions. */
  sessions?: ConsoleSessions;
  /** Rate limit and lock-out of wrong tokens and passwords. None: no limit. */
  guard?: LoginGuard;
  /** Where a browser without credentials is sent (a GET asking for HTML); none: 401. */
  loginPath?: string;
  /** Paths (prefixes) under the dashboard whose changes need an admin (the queues page, the sessions). */
  adminPaths?: readonly string[];
  /**
   * Paths (prefixes) whose route checks a user's role itself (the approvals: each request names the
   * role it needs, and a refusal is audited there): a viewer's change is let through to it, still
   * with the Origin and JSON checks.
   */
  roleCheckedPaths?: readonly string[];
  /** Paths (prefixes) the guard lets through unauthenticated: the login routes check what they take themselves. */
  publicPaths?: readonly string[];
  /** Whether users who are not in the users file can sign in (an identity provider): the console then offers its actions. */
  externalUsers?: boolean;
  /** Audits a session ended because its user left the users file. */
  audit?: AuditLog;
}

/** Who a request authenticated as: a user (a users-file token, a session), with the session when there is one. */
export interface Authenticated {
  user: DashboardUser;
  session?: ConsoleSession;
}

const authenticated = new WeakMap<Request, Authenticated>();

/** The user this request authenticated as (a users-file token or a session), if any. */
export function authenticatedUser(c: Context): DashboardUser | undefined {
  return authenticated.get(c.req.raw)?.user;
}

/** The session this request came with, if any. */
export function authenticatedSession(c: Context): ConsoleSession | undefined {
  return authenticated.get(c.req.raw)?.session;
}

/** The address a request came from (the socket's peer; a proxy's address behind one). */
export function sourceOf(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** The name of the cookie holding a session's secret. */
export const sessionCookie = 'reflex_session';

/** Sets the session cookie: HttpOnly, SameSite=Strict, Secure over HTTPS, scoped to the dashboard. */
export function setSessionCookie(c: Context, basePath: string, secret: string, maxAgeS: number): void {
  setCookie(c, sessionCookie, secret, { httpOnly: true, sameSite: 'Strict', secure: isHttps(c), maxAge: maxAgeS, path: basePath });
}

/** Clears the session cookie. */
export function clearSessionCookie(c: Context, basePath: string): void {
  deleteCookie(c, sessionCookie, { httpOnly: true, sameSite: 'Strict', secure: isHttps(c), path: basePath });
}

function digest(text: string): Buffer {
  return createHash('sha256').update(`reflex-dashboard:${text}`).digest();
}

const equal = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);

function bearerOf(c: Context): string | undefined {
  const header = c.req.header('authorization');
  return header?.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined;
}

/**
 * Whether the request reached us over HTTPS: a TLS socket, or a reverse proxy saying so
 * (X-Forwarded-Proto / Forwarded proto=https). Trusting the proxy's header is harmless here: it
 * only makes the cookie Secure and the expected Origin https, which a forger gains nothing from.
 */
export function isHttps(c: Context): boolean {
  if (new URL(c.req.url).protocol === 'https:') return true;
  const forwarded = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  return forwarded === 'https' || /(^|[;,\s])proto=https\b/i.test(c.req.header('forwarded') ?? '');
}

/** Why a write is not same-origin, or undefined when it is: Origin must name this server as the Host header does. */
export function crossOrigin(c: Context): string | undefined {
  const origin = c.req.header('origin');
  const host = c.req.header('host');
  if (!origin || origin === 'null')
    return 'a change needs an Origin header naming this server (browsers send it; a script adds -H "Origin: http://HOST:PORT")';
  if (!host) return 'a change needs a Host header';
  const scheme = isHttps(c) ? 'https:' : 'http:';
  let same = false;
  try {
    const o = new URL(origin);
    same = o.protocol === scheme && o.host === new URL(`${scheme}//${host}`).host;
  } catch {
    same = false;
  }
  if (!same) return 'cross-origin change refused: Origin does not match this server';
  const site = c.req.header('sec-fetch-site');
  if (site && site !== 'same-origin') return `cross-site change refused (Sec-Fetch-Site: ${site.slice(0, 20)})`;
  return undefined;
}

/** A body other than JSON (a form, text/plain) is what a cross-site form can send; changes take JSON only. */
function hasNonJsonBody(c: Context): boolean {
  const length = Number(c.req.header('content-length') ?? 0);
  if (!(length > 0) && !c.req.header('transfer-encoding')) return false;
  const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
  return type !== 'application/json';
}

/**
 * Guards the dashboard. Reading (GET, HEAD) takes the read or the write token or a user's token as
 * `Authorization: Bearer TOKEN`, a session's cookie, the read token's cookie, or `?token=` once:
 * the read token sets the read cookie, a user's token opens a session; either redirects to the same
 * address without the token (so it stays out of history and Referer headers). The cookies are
 * HttpOnly, SameSite=Strict, Secure over HTTPS. A browser without any is sent to the login page.
 *
 * Every other method changes something. A user's (by token or session) needs the role (a viewer's
 * is refused, 403, but under `roleCheckedPaths`, whose route checks the role; under `adminPaths` an admin's only); the shared write token acts only without
 * users unless `writeTokenWithUsers`; the read token and its cookie never act (403). Every change
 * needs an Origin naming this server and no other Sec-Fetch-Site than same-origin (403), and a
 * JSON body if any (415). Nothing can act: 405.
 *
 * A session is checked against the users file as it is now: a user removed from it is signed out
 * (the session ended) at the next request, a changed role applies at once. A wrong token counts
 * against its source's limit; a locked-out source is refused (429) before any token is compared.
 */
export function dashboardAuth(tokens: DashboardTokens, basePath: string, opts: DashboardAuthOptions = {}): MiddlewareHandler {
  const maxAgeS = opts.cookieMaxAgeS ?? 12 * 3600;
  const now = opts.now ?? Date.now;
  const read = tokens.read === undefined ? undefined : digest(tokens.read);
  const write = tokens.write === undefined ? undefined : digest(tokens.write);
  const isRead = (given: string | undefined) => given !== undefined && read !== undefined && equal(digest(given), read);
  const isWrite = (given: string | undefined) => given !== undefined && write !== undefined && equal(digest(given), write);
  const cookieKey = tokens.read === undefined ? undefined : createHash('sha256').update(`reflex-dashboard-cookie:${tokens.read}`).digest();
  const sign = (issued: string) => createHmac('sha256', cookieKey!).update(issued).digest();
  const issueCookie = () => {
    const issued = String(now());
    return `v1.${issued}.${sign(issued).toString('hex')}`;
  };
  const validCookie = (value: string | undefined) => {
    const m = value === undefined || !cookieKey ? null : /^v1\.(\d{1,15})\.([0-9a-f]{64})$/.exec(value);
    if (!m) return false;
    const age = now() - Number(m[1]);
    return age >= -60_000 && age <= maxAgeS * 1000 && equal(Buffer.from(m[2]!, 'hex'), sign(m[1]!));
  };
  const unauthorized = (c: Context) => {
    if (opts.loginPath && (c.req.method === 'GET' || c.req.method === 'HEAD') && c.req.header('accept')?.includes('text/html')) {
      const url = new URL(c.req.url);
      return c.redirect(`${opts.loginPath}?next=${encodeURIComponent(`${url.pathname}${url.search}`)}`, 303);
    }
    c.header('WWW-Authenticate', 'Bearer realm="reflex dashboard"');
    return c.text('401 Unauthorized: the dashboard needs a sign-in (Authorization: Bearer TOKEN, ?token=TOKEN, or the login page)\n', 401);
  };
  const tooMany = (c: Context, until: number, why: string) => {
    c.header('Retry-After', String(Math.max(1, Math.ceil((until - now()) / 1000))));
    return c.text(`429 Too Many Requests: ${why}\n`, 429);
  };
  const under = (path: string, prefixes: readonly string[] | undefined) => (prefixes ?? []).some((p) => path === p || path.startsWith(`${p}/`));

  const { users, sessions, guard } = opts;
  const sharedWrites = !users || opts.writeTokenWithUsers === true;
  const anyoneActs = () => !!write || !!users?.hasOperators || !!opts.externalUsers;

  /** The session of the request's cookie, checked against the users file now (a removed user's ends). */
  const sessionOf = async (c: Context): Promise<Authenticated | undefined> => {
    const secret = sessions && getCookie(c, sessionCookie);
    const session = secret ? await sessions.get(secret) : undefined;
    if (!session) return undefined;
    if (session.via === 'oidc') return { user: { name: session.user, role: session.role }, session };
    const now = users?.lookup(session.user);
    if (now) return { user: now, session };
    await sessions!.end(session.id);
    await opts.audit
      ?.append({
        type: 'access',
        correlationId: `session:${session.id.slice(0, 16)}`,
        summary: `session of ${session.user} ended: ${session.user} is no longer in the users file`,
        result: 'session-ended',
        actor: session.user,
        via: session.via,
        source: sourceOf(c),
      })
      .catch(() => undefined);
    return undefined;
  };

  /** A token given as Bearer or ?token=: the shared tokens, else a user's (counted against the source when wrong). */
  type Checked = { kind: 'read' | 'write' } | { kind: 'user'; user: DashboardUser } | { kind: 'wrong' } | { kind: 'refused'; response: Response };
  const checkToken = async (c: Context, token: string): Promise<Checked> => {
    const source = sourceOf(c);
    const locked = await guard?.lockedUntil(source);
    if (locked)
      return {
        kind: 'refused',
        response: tooMany(c, locked, `too many failed sign-ins from ${source}: locked out until ${new Date(locked).toISOString()}`),
      };
    if (isRead(token)) return { kind: 'read' };
    if (isWrite(token)) return { kind: 'write' };
    let user: DashboardUser | undefined;
    try {
      user = users ? await users.verify(token) : undefined;
    } catch (err) {
      if (!(err instanceof VerifyBusyError)) throw err;
      guard?.busy();
      return { kind: 'refused', response: tooMany(c, now() + 1_000, err.message) };
    }
    if (user) return { kind: 'user', user };
    await guard?.failed(source, 'token');
    return { kind: 'wrong' };
  };

  return async (c, next) => {
    if (under(c.req.path, opts.publicPaths)) return next();
    const bearer = bearerOf(c);
    let shared: 'read' | 'write' | undefined;
    let who: Authenticated | undefined;
    let wrongBearer = false;
    if (bearer !== undefined) {
      const checked = await checkToken(c, bearer);
      if (checked.kind === 'refused') return checked.response;
      if (checked.kind === 'user') who = { user: checked.user };
      else if (checked.kind === 'wrong') wrongBearer = true;
      else shared = checked.kind;
    }
    if (bearer === undefined || wrongBearer) {
      // A wrong token beside a cookie (a page whose token field holds a typo): the cookie still
      // reads, and a change is refused (403) rather than taken from the cookie's user.
      const cookie = (await sessionOf(c)) ?? (validCookie(getCookie(c, cookieName)) ? 'read' : undefined);
      if (wrongBearer) {
        if (!cookie) return unauthorized(c);
        if (c.req.method !== 'GET' && c.req.method !== 'HEAD')
          return c.text('403 Forbidden: the token sent as Authorization: Bearer is not valid (the cookie only reads with it)\n', 403);
      }
      if (cookie === 'read') shared = 'read';
      else who = cookie;
    }
    if (who) authenticated.set(c.req.raw, who);

    if (c.req.method === 'GET' || c.req.method === 'HEAD') {
      const token = c.req.query('token');
      if (token !== undefined && bearer === undefined) {
        const url = new URL(c.req.url);
        url.searchParams.delete('token');
        const checked = await checkToken(c, token);
        if (checked.kind === 'refused') return checked.response;
        if (checked.kind === 'read') {
          setCookie(c, cookieName, issueCookie(), { httpOnly: true, sameSite: 'Strict', secure: isHttps(c), maxAge: maxAgeS, path: basePath });
          return c.redirect(`${url.pathname}${url.search}`, 303);
        }
        if (checked.kind === 'user' && sessions) {
          const opened = await sessions.create(checked.user, 'token', sourceOf(c));
          setSessionCookie(c, basePath, opened.secret, Math.floor(sessions.ttlMs / 1000));
          await opts.audit
            ?.append({
              type: 'access',
              correlationId: `session:${opened.session.id.slice(0, 16)}`,
              summary: `${checked.user.name} signed in (${checked.user.role}) with a token`,
              result: 'signed-in',
              actor: checked.user.name,
              via: 'token',
              source: sourceOf(c),
            })
            .catch(() => undefined);
          return c.redirect(`${url.pathname}${url.search}`, 303);
        }
        // The write token is never traded for a cookie: it stays a header a page cannot be made to send.
        if (!who && !shared) return unauthorized(c);
      }
      if (who || shared) return next();
      return unauthorized(c);
    }

    if (!who && !shared) return unauthorized(c);
    if (who) {
      const { user } = who;
      const needed = under(c.req.path, opts.adminPaths) ? 'admin' : under(c.req.path, opts.roleCheckedPaths) ? 'viewer' : 'operator';
      if (user.role === 'viewer' && needed !== 'viewer')
        return c.text(`403 Forbidden: ${user.name} is a viewer: a viewer reads, an operator acts\n`, 403);
      if (!roleAtLeast(user.role, needed)) return c.text(`403 Forbidden: ${user.name} is an ${user.role}: changing the queues needs an admin\n`, 403);
    } else {
      if (!anyoneActs()) {
        c.header('Allow', 'GET, HEAD');
        return c.text(
          '405 Method Not Allowed: the dashboard is read-only (configure dashboardWriteToken / REFLEX_DASHBOARD_WRITE_TOKEN to let it change the queues)\n',
          405,
        );
      }
      if (shared === 'write' && !sharedWrites)
        return c.text('403 Forbidden: the shared write token does not act when users are configured: use your own token (dashboardUsersFile)\n', 403);
      if (shared !== 'write')
        return c.text(
          '403 Forbidden: changing the queues needs the write token as Authorization: Bearer TOKEN (the read token and the cookie only read)\n',
          403,
        );
    }
    const why = crossOrigin(c);
    if (why) return c.text(`403 Forbidden: ${why}\n`, 403);
    if (hasNonJsonBody(c)) return c.text('415 Unsupported Media Type: a change takes a JSON body (Content-Type: application/json)\n', 415);
    return next();
  };
}
