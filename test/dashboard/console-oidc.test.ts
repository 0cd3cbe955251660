import { createServer, type Server } from 'node:http';
import Provider from 'oidc-provider';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { freePort, startObservabilityBed, type ObservabilityBed } from '../metrics/observability-bed.js';
import { launchChromium } from './headless-chromium.js';

const clientSecret = `oidc-secret-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`;
/** The provider's accounts: their groups (the role claim). */
const groups: Record<string, string[]> = { dana: ['staff', 'reflex-operators'], erin: ['reflex-viewers'], frank: ['staff'] };

/**
 * Sign-in at a real OpenID Connect provider (the npm oidc-provider, started here on a free port):
 * the authorization code flow with PKCE in Chromium, the ID token checked by openid-client, the
 * role taken from the groups claim; a user with no mapped group is refused.
 */
describe('console sign-in with OpenID Connect', () => {
  let provider: Server;
  let bed: ObservabilityBed;
  let browser: Browser;
  let audit: AuditLog;
  let issuer: string;
  const seen: string[] = [];

  beforeAll(async () => {
    const [opPort, httpPort] = [await freePort(), await freePort()];
    issuer = `http://127.0.0.1:${opPort}`;
    const op = new Provider(issuer, {
      clients: [
        {
          client_id: 'reflex-console',
          client_secret: clientSecret,
          redirect_uris: [`http://127.0.0.1:${httpPort}/dashboard/login/oidc/callback`],
          response_types: ['code'],
          grant_types: ['authorization_code'],
        },
      ],
      pkce: { required: () => true },
      scopes: ['openid', 'profile', 'groups'],
      claims: { openid: ['sub'], profile: ['preferred_username'], groups: ['groups'] },
      findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id, preferred_username: id, groups: groups[id] ?? [] }) }),
      cookies: { keys: ['a-test-key-for-the-provider-cookies'] },
      features: { devInteractions: { enabled: true } },
    });
    provider = createServer(op.callback());
    await new Promise<void>((resolve) => provider.listen(opPort, '127.0.0.1', resolve));
    process.env.REFLEX_TEST_OIDC_SECRET = clientSecret;
    bed = await startObservabilityBed({
      rulesDir: 'rules',
      instances: [{ name: 'web-1', optIn: false }],
      config: {
        httpPort,
        dashboardOidc: {
          issuer,
          clientId: 'reflex-console',
          clientSecretEnv: 'REFLEX_TEST_OIDC_SECRET',
          name: 'Test IdP',
          scopes: 'openid profile groups',
          roles: { operator: ['reflex-operators'], viewer: ['reflex-viewers'] },
          allowHttp: true,
        },
      },
    });
    audit = new AuditLog(bed.redis, bed.keys.audit);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await bed?.stop();
    await new Promise((resolve) => provider?.close(resolve));
    delete process.env.REFLEX_TEST_OIDC_SECRET;
  });

  /** A fresh browser that signs in as `user` at the provider, from the console's login page. */
  const signIn = async (user: string): Promise<{ context: BrowserContext; page: Page }> => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    // Nothing leaves this host (the provider's dev pages import a web font).
    await context.route('**/*', (route) => (/^https?:\/\/127\.0\.0\.1[:/]/.test(route.request().url()) ? route.continue() : route.abort()));
    const page = await context.newPage();
    page.on('request', (r) => seen.push(r.url()));
    await page.goto(`${bed.url}/dashboard`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await page.waitForURL((u) => u.href.startsWith(issuer));
    await page.locator('input[name=login]').fill(user);
    await page.locator('input[name=password]').fill('any password: the provider’s dev sign-in takes any');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    return { context, page };
  };

  it('signs in through the provider (authorization code + PKCE) and acts as the user, audited under their name', async () => {
    const { context, page } = await signIn('dana');
    await page.waitForSelector('body[data-rendered=fleet]');
    expect(await page.locator('#signed-in').innerText()).toMatch(/Signed in as dana \(operator\)/);
    const authorize = new URL(seen.find((u) => u.startsWith(`${issuer}/auth?`))!);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get('state')).toBeTruthy();
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    const session = (await context.cookies()).find((c) => c.name === 'reflex_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/dashboard' });
    bed.sim.controls.crash('web-1');
    await page.locator('#fleet-table tr[data-key$="/web-1"][data-status=Stopped]').waitFor({ timeout: 10_000 });
    await page.getByRole('button', { name: 'Heal web-1', exact: true }).click();
    await page.getByRole('dialog', { name: 'Heal web-1?' }).getByRole('button', { name: 'Heal web-1' }).click();
    await page.locator('#action-result', { hasText: 'heal queued' }).waitFor();
    const records = await audit.read({});
    expect(records.filter((r) => r.rule === 'heal' && r.type === 'decision')).toEqual([
      expect.objectContaining({ origin: 'console', actor: 'dana' }),
    ]);
    expect(records.find((r) => r.type === 'access' && r.result === 'signed-in')).toMatchObject({ actor: 'dana', via: 'oidc', role: 'operator' });
    await context.close();
  });

  it('maps the groups claim to a role (a viewer reads, cannot act) and refuses a user with no mapped group', async () => {
    const erin = await signIn('erin');
    await erin.page.waitForSelector('body[data-rendered=fleet]');
    expect(await erin.page.locator('#signed-in').innerText()).toMatch(/Signed in as erin \(viewer\)/);
    const refused = await erin.page.evaluate(async () => {
      const r = await fetch('/dashboard/console/dlq/retry', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: '1' }),
      });
      return { status: r.status, text: await r.text() };
    });
    expect(refused).toEqual({ status: 403, text: expect.stringMatching(/erin is a viewer/) });
    await erin.context.close();

    const frank = await signIn('frank');
    await frank.page.getByRole('alert').filter({ hasText: 'frank has no role in the console' }).waitFor();
    expect(new URL(frank.page.url()).pathname).toBe('/dashboard/login/oidc/callback');
    expect((await frank.context.cookies()).find((c) => c.name === 'reflex_session')).toBeUndefined();
    await frank.context.close();
    // Only the provider's own dev pages asked for anything elsewhere (a web font, refused by the route above).
    expect(
      seen.filter((u) => !/^(https?:\/\/127\.0\.0\.1[:/]|data:|about:)/.test(u)).every((u) => u.startsWith('https://fonts.googleapis.com/')),
    ).toBe(true);
  });
});
