import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { DashboardUser, DashboardUsers } from './dashboard-users.js';

const cookieName = 'reflex_dashboard';

/** The dashboard's tokens: `read` shows everything; `write` (optional) may also change the queues. */
export interface DashboardTokens {
  read: string;
  /** None: every request that is not GET or HEAD is refused (405), whatever it carries. */
  write?: string;
}

/** Options of {@link dashboardAuth}. */
export interface DashboardAuthOptions {
  /** How long the cookie is valid, in seconds (browser Max-Age and server-side check). Default 12 h. */
  cookieMaxAgeS?: number;
  /** The clock (tests). */
  now?: () => number;
  /**
   * Per-user tokens with roles (a users file): a user's token reads, and an operator's also acts,
   * audited under the user's name; a viewer's change is refused (403).
   */
  users?: DashboardUsers;
  /** With `users`, whether the shared write token still acts too (under the name typed in). Default false. */
  writeTokenWithUsers?: boolean;
}

const authenticated = new WeakMap<Request, DashboardUser>();

/** The user this request authenticated as (a users-file token), if any. */
export function authenticatedUser(c: Context): DashboardUser | undefined {
  return authenticated.get(c.req.raw);
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
function isHttps(c: Context): boolean {
  if (new URL(c.req.url).protocol === 'https:') return true;
  const forwarded = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  return forwarded === 'https' || /(^|[;,\s])proto=https\b/i.test(c.req.header('forwarded') ?? '');
}

/** Why a write is not same-origin, or undefined when it is: Origin must name this server as the Host header does. */
function crossOrigin(c: Context): string | undefined {
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
 * Guards the dashboard. Reading (GET, HEAD) takes the read or the write token as
 * `Authorization: Bearer TOKEN`, the cookie, or `?token=READ_TOKEN` once, which sets the cookie and
 * redirects to the same address without the token (so it stays out of history and Referer
 * headers, and the bull-board UI's own calls carry the cookie). The cookie is HttpOnly,
 * SameSite=Strict, Secure over HTTPS, and holds an HMAC of its issue time keyed by the read
 * token, so it expires on the server too (and when the token changes).
 *
 * Every other method changes something. Without a write token it is refused (405: read-only).
 * With one, it needs the write token in the Authorization header (a cookie or the read token is
 * never enough: 403), an Origin naming this server and no other Sec-Fetch-Site than same-origin
 * (403), and a JSON body if any (415). Nothing else answers 401.
 */
export function dashboardAuth(tokens: DashboardTokens, basePath: string, opts: DashboardAuthOptions = {}): MiddlewareHandler {
  const maxAgeS = opts.cookieMaxAgeS ?? 12 * 3600;
  const now = opts.now ?? Date.now;
  const read = digest(tokens.read);
  const write = tokens.write === undefined ? undefined : digest(tokens.write);
  const isRead = (given: string | undefined) => given !== undefined && equal(digest(given), read);
  const isWrite = (given: string | undefined) => given !== undefined && write !== undefined && equal(digest(given), write);
  const cookieKey = createHash('sha256').update(`reflex-dashboard-cookie:${tokens.read}`).digest();
  const sign = (issued: string) => createHmac('sha256', cookieKey).update(issued).digest();
  const issueCookie = () => {
    const issued = String(now());
    return `v1.${issued}.${sign(issued).toString('hex')}`;
  };
  const validCookie = (value: string | undefined) => {
    const m = value === undefined ? null : /^v1\.(\d{1,15})\.([0-9a-f]{64})$/.exec(value);
    if (!m) return false;
    const age = now() - Number(m[1]);
    return age >= -60_000 && age <= maxAgeS * 1000 && equal(Buffer.from(m[2]!, 'hex'), sign(m[1]!));
  };
  const unauthorized = (c: Context) => {
    c.header('WWW-Authenticate', 'Bearer realm="reflex dashboard"');
    return c.text('401 Unauthorized: the dashboard needs its token (Authorization: Bearer TOKEN, or ?token=TOKEN)\n', 401);
  };

  const users = opts.users;
  const sharedWrites = !users || opts.writeTokenWithUsers === true;
  return async (c, next) => {
    const bearer = bearerOf(c);
    const user = users && bearer !== undefined && !isRead(bearer) && !isWrite(bearer) ? await users.verify(bearer) : undefined;
    if (user) authenticated.set(c.req.raw, user);
    const canRead = isRead(bearer) || isWrite(bearer) || !!user || validCookie(getCookie(c, cookieName));
    if (c.req.method === 'GET' || c.req.method === 'HEAD') {
      if (canRead) return next();
      if (isRead(c.req.query('token'))) {
        setCookie(c, cookieName, issueCookie(), { httpOnly: true, sameSite: 'Strict', secure: isHttps(c), maxAge: maxAgeS, path: basePath });
        const url = new URL(c.req.url);
        url.searchParams.delete('token');
        return c.redirect(`${url.pathname}${url.search}`, 303);
      }
      return unauthorized(c);
    }
    if (!canRead) return unauthorized(c);
    if (user?.role === 'viewer') return c.text(`403 Forbidden: ${user.name} is a viewer: a viewer reads, an operator acts\n`, 403);
    if (!write && !users?.hasOperators) {
      c.header('Allow', 'GET, HEAD');
      return c.text(
        '405 Method Not Allowed: the dashboard is read-only (configure dashboardWriteToken / REFLEX_DASHBOARD_WRITE_TOKEN to let it change the queues)\n',
        405,
      );
    }
    if (isWrite(bearer) && !sharedWrites)
      return c.text('403 Forbidden: the shared write token does not act when users are configured: use your own token (dashboardUsersFile)\n', 403);
    if (!isWrite(bearer) && user?.role !== 'operator')
      return c.text(
        '403 Forbidden: changing the queues needs the write token as Authorization: Bearer TOKEN (the read token and the cookie only read)\n',
        403,
      );
    const why = crossOrigin(c);
    if (why) return c.text(`403 Forbidden: ${why}\n`, 403);
    if (hasNonJsonBody(c)) return c.text('415 Unsupported Media Type: a change takes a JSON body (Content-Type: application/json)\n', 415);
    return next();
  };
}
