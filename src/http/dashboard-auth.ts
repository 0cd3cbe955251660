import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';

const cookieName = 'reflex_dashboard';

function digest(text: string): Buffer {
  return createHash('sha256').update(`reflex-dashboard:${text}`).digest();
}

/**
 * Guards the dashboard with a bearer token: `Authorization: Bearer TOKEN`, or `?token=TOKEN` once,
 * which sets an HttpOnly cookie and redirects to the same address without the token (so it stays
 * out of history and Referer headers, and the bull-board UI's own API calls carry the cookie).
 * The cookie holds a digest of the token, not the token. Everything else answers 401.
 */
export function dashboardAuth(token: string, basePath: string): MiddlewareHandler {
  const expected = digest(token);
  const matches = (given: string | undefined) => given !== undefined && timingSafeEqual(digest(given), expected);
  const cookieValue = expected.toString('hex');
  return async (c, next) => {
    const header = c.req.header('authorization');
    const bearer = header?.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : undefined;
    if (matches(bearer)) return next();
    const cookie = getCookie(c, cookieName);
    if (cookie && cookie.length === cookieValue.length && timingSafeEqual(Buffer.from(cookie), Buffer.from(cookieValue))) return next();
    const query = c.req.query('token');
    if (matches(query)) {
      setCookie(c, cookieName, cookieValue, { httpOnly: true, sameSite: 'Strict', path: basePath });
      const url = new URL(c.req.url);
      url.searchParams.delete('token');
      return c.redirect(`${url.pathname}${url.search}`, 303);
    }
    c.header('WWW-Authenticate', 'Bearer realm="reflex dashboard"');
    return c.text('401 Unauthorized: the dashboard needs its token (Authorization: Bearer TOKEN, or ?token=TOKEN)\n', 401);
  };
}
