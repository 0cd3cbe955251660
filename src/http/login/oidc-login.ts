import { readFileSync } from 'node:fs';
import type { Context, Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import * as oidc from 'openid-client';
import type { Logger } from 'pino';
import type { AuditLog } from '../../audit/audit-log.js';
import { ReflexError } from '../../errors/reflex-error.js';
import type { RedisConnection } from '../../redis/connect.js';
import { isHttps, sourceOf } from '../dashboard-auth.js';
import type { DashboardRole } from '../dashboard-users.js';
import type { ConsoleSessions } from './console-sessions.js';
import type { LoginGuard } from './login-guard.js';
import { loginPathOf, safeNext, signIn } from './login-routes.js';
import { renderLogin } from './login-page.js';

/** The identity provider (OpenID Connect), as configured (`dashboardOidc`, docs/console-access.md). */
export interface OidcSettings {
  /** The issuer; its `/.well-known/openid-configuration` is read at the first sign-in. */
  issuer: string;
  clientId: string;
  /** The client's secret (read from `clientSecretEnv` or `clientSecretFile`); none: a public client (PKCE only). */
  clientSecret?: string;
  /** The address the provider sends the browser back to; default `<this server>/dashboard/login/oidc/callback`. */
  redirectUrl?: string;
  /** The button's words: "Sign in with NAME". */
  name: string;
  scopes: string;
  /** The claim naming the user (audited as the actor). */
  nameClaim: string;
  /** The claim holding the user's groups or roles (a list or one string). */
  roleClaim: string;
  /** Which values of the role claim make which role; the highest wins. None: refused. */
  roles: Record<DashboardRole, string[]>;
  /** Allow an `http://` issuer (a provider on this host, tests). */
  allowHttp: boolean;
}

/** The client secret named by the config (env or file); undefined when neither is given. */
export function readClientSecret(s: { clientSecretEnv?: string; clientSecretFile?: string }, env = process.env): string | undefined {
  if (s.clientSecretEnv) {
    const v = env[s.clientSecretEnv];
    if (!v) throw new ReflexError('CONFIG_INVALID', `dashboardOidc.clientSecretEnv: the environment variable ${s.clientSecretEnv} is not set`);
    return v;
  }
  if (s.clientSecretFile) {
    try {
      return readFileSync(s.clientSecretFile, 'utf8').trim();
    } catch (err) {
      throw new ReflexError('CONFIG_INVALID', `dashboardOidc.clientSecretFile: cannot read ${s.clientSecretFile}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  return undefined;
}

/** The role a user's claim values give: the highest role any value maps to. */
export function roleOf(values: unknown, roles: OidcSettings['roles']): DashboardRole | undefined {
  const given = new Set((Array.isArray(values) ? values : values === undefined || values === null ? [] : [values]).map(String));
  for (const role of ['admin', 'operator', 'viewer'] as const) if (roles[role].some((v) => given.has(v))) return role;
  return undefined;
}

/** What the OIDC routes use. */
export interface OidcOptions {
  base: string;
  settings: OidcSettings;
  sessions: ConsoleSessions;
  guard?: LoginGuard;
  audit: AuditLog;
  redis: RedisConnection;
  prefix: string;
  logger?: Logger;
}

/** How long a sign-in at the provider may take, from the button to the callback. */
const flowTtlMs = 10 * 60_000;
const flowCookie = 'reflex_oidc';

/** The address of the sign-in button under `base`. */
export const oidcStartPathOf = (base: string) => `${loginPathOf(base)}/oidc`;

/**
 * Sign-in at an identity provider (OpenID Connect, authorization code with PKCE, by
 * openid-client): `GET /dashboard/login/oidc` sends the browser to the provider with a fresh
 * state, nonce and code challenge (kept in Redis for 10 min, bound to the browser by a cookie);
 * `GET /dashboard/login/oidc/callback` checks the state, trades the code (with the verifier) for
 * tokens, checks the ID token (issuer, audience, nonce, signature), maps the role claim to a role
 * and opens a session. A user without a role is refused (403), counted as a failed sign-in.
 */
export function registerOidc(app: Hono, o: OidcOptions): void {
  const start = oidcStartPathOf(o.base);
  const callback = `${start}/callback`;
  const s = o.settings;
  let discovered: Promise<oidc.Configuration> | undefined;
  const config = () => {
    discovered ??= oidc
      .discovery(new URL(s.issuer), s.clientId, s.clientSecret, s.clientSecret ? undefined : oidc.None(), {
        execute: s.allowHttp ? [oidc.allowInsecureRequests] : [],
        timeout: 10,
      })
      .catch((err: unknown) => {
        discovered = undefined;
        throw err;
      });
    return discovered;
  };
  const redirectUri = (c: Context) => s.redirectUrl ?? `${isHttps(c) ? 'https' : 'http'}://${c.req.header('host')}${callback}`;
  const flowKey = (state: string) => `${o.prefix}:console:oidc-flow:${state}`;
  const problem = (c: Context, status: 403 | 502, text: string) => {
    c.header('Cache-Control', 'no-store');
    return c.html(
      renderLogin({ action: loginPathOf(o.base), next: o.base, passwords: false, oidc: { href: start, name: s.name }, problem: text }),
      status,
    );
  };

  app.get(start, async (c) => {
    let cfg: oidc.Configuration;
    try {
      cfg = await config();
    } catch (err) {
      o.logger?.error({ err, issuer: s.issuer }, 'dashboard: the identity provider cannot be read');
      return problem(c, 502, `The identity provider does not answer (${s.issuer}): ${(err as Error).message}`);
    }
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    await o.redis.set(flowKey(state), JSON.stringify({ verifier, nonce, next: safeNext(o.base, c.req.query('next')) }), 'PX', flowTtlMs);
    // Lax: the provider's redirect back is a navigation from another site, which a Strict cookie would miss.
    setCookie(c, flowCookie, state, { httpOnly: true, sameSite: 'Lax', secure: isHttps(c), maxAge: flowTtlMs / 1000, path: start });
    const url = oidc.buildAuthorizationUrl(cfg, {
      redirect_uri: redirectUri(c),
      scope: s.scopes,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return c.redirect(url.href, 303);
  });

  app.get(callback, async (c) => {
    const state = getCookie(c, flowCookie);
    deleteCookie(c, flowCookie, { path: start });
    const text = state ? await o.redis.getdel(flowKey(state)) : null;
    if (!state || !text || c.req.query('state') !== state)
      return problem(c, 403, 'This sign-in was not started here, or took longer than 10 minutes: sign in again');
    const flow = JSON.parse(text) as { verifier: string; nonce: string; next: string };
    const source = sourceOf(c);
    let name: string;
    let role: DashboardRole | undefined;
    try {
      const cfg = await config();
      const here = new URL(redirectUri(c));
      here.search = new URL(c.req.url).search;
      const tokens = await oidc.authorizationCodeGrant(cfg, here, {
        pkceCodeVerifier: flow.verifier,
        expectedState: state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
      let claims: Record<string, unknown> = { ...tokens.claims()! };
      if (claims[s.nameClaim] === undefined || claims[s.roleClaim] === undefined)
        claims = { ...claims, ...(await oidc.fetchUserInfo(cfg, tokens.access_token, String(claims.sub))) };
      name = String(claims[s.nameClaim] ?? claims.sub).slice(0, 100);
      role = roleOf(claims[s.roleClaim], s.roles);
    } catch (err) {
      o.logger?.warn({ err }, 'dashboard: a sign-in at the identity provider failed');
      await o.guard?.failed(source, 'oidc');
      return problem(c, 403, `The identity provider's answer is refused: ${(err as Error).message}`);
    }
    if (!role) {
      await o.guard?.failed(source, 'oidc', name);
      return problem(c, 403, `${name} has no role in the console (the claim ${s.roleClaim} names none of its groups): ask an admin`);
    }
    await signIn(c, o, { name, role }, 'oidc');
    // A page, not a redirect: the next request then starts on this site, so the Strict session cookie goes with it.
    c.header('Cache-Control', 'no-store');
    const next = flow.next.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
    return c.html(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${next}"><title>Signed in</title></head><body><p>Signed in as ${name.replace(/[&<>"']/g, '')} (${role}). <a href="${next}">Open the console</a></p></body></html>`,
    );
  });
}
