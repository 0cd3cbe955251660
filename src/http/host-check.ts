import { isIP } from 'node:net';
import type { MiddlewareHandler } from 'hono';

/** Which Host headers the HTTP server answers to. */
export interface AllowedHosts {
  /** The address the server binds (`httpHost`); a name here is allowed, a wildcard address means nothing. */
  bindHost?: string;
  /** More names (`httpAllowedHosts`); `*.example.org` matches every subdomain of example.org. */
  names?: readonly string[];
}

/** The host part of a Host header, lower case, without port, brackets or a trailing dot. */
function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  const colon = h.lastIndexOf(':');
  const name = colon >= 0 && /^\d*$/.test(h.slice(colon + 1)) ? h.slice(0, colon) : h;
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/** Whether a Host header names this server: an IP literal, localhost, the bind host or an allowed name. */
export function isAllowedHost(header: string, allowed: AllowedHosts): boolean {
  const name = hostName(header);
  if (isIP(name) || name === 'localhost') return true;
  const bind = allowed.bindHost?.toLowerCase();
  if (bind && !isIP(bind) && name === bind) return true;
  return (allowed.names ?? []).some((n) => {
    const pattern = n.toLowerCase();
    return pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1 : name === pattern;
  });
}

/**
 * Refuses, with 421, a request whose Host header names another server. A page on a hostile
 * site whose name has been re-pointed at this address (DNS rebinding) then cannot read
 * /metrics, /readyz or the dashboard from a victim's browser; a scraper that uses the IP address
 * or an allowed name is unaffected. A request without a Host header (HTTP/1.0 tools) is let
 * through: a browser always sends one.
 */
export function hostCheck(allowed: AllowedHosts): MiddlewareHandler {
  return async (c, next) => {
    const header = c.req.header('host');
    if (header === undefined || isAllowedHost(header, allowed)) return next();
    const shown = JSON.stringify(header.slice(0, 100).replace(/[^\x20-\x7e]/g, '?'));
    return c.text(
      `421 Misdirected Request: this server does not answer to the host name ${shown}. Allowed: IP addresses, localhost, httpHost and the names in httpAllowedHosts (env REFLEX_HTTP_ALLOWED_HOSTS); add the name there if it is yours.\n`,
      421,
    );
  };
}
