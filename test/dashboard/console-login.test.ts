import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { hashUserToken } from '../../src/http/dashboard-users.js';
import { startObservabilityBed, type ObservabilityBed } from '../metrics/observability-bed.js';
import { launchChromium } from './headless-chromium.js';

const passwords = {
  alice: `alice-pw-${Math.random().toString(36).slice(2)}`,
  bob: `bob-pw-${Math.random().toString(36).slice(2)}`,
  carol: `carol-pw-${Math.random().toString(36).slice(2)}`,
};

/**
 * The login page: a name and a password from the users file (scrypt-hashed) open a server-side
 * session in Redis, held by a strict cookie; the console then acts as that user without a token
 * typed in; sessions end by signing out, or by an admin, at once on every request.
 */
describe('console login page and sessions', () => {
  let bed: ObservabilityBed;
  let browser: Browser;
  let audit: AuditLog;

  beforeAll(async () => {
    const dir = mkdtempSync(join('.tmp', 'users-'));
    const usersFile = join(dir, 'users');
    writeFileSync(
      usersFile,
      `alice operator ${await hashUserToken(passwords.alice)}\nbob viewer ${await hashUserToken(passwords.bob)}\ncarol admin ${await hashUserToken(passwords.carol)}\n`,
    );
    bed = await startObservabilityBed({ rulesDir: 'rules', instances: [{ name: 'web-1', optIn: false }], config: { dashboardUsersFile: usersFile } });
    audit = new AuditLog(bed.redis, bed.keys.audit);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await bed?.stop();
  });

  const login = async (name: keyof typeof passwords, password: string = passwords[name]): Promise<{ context: BrowserContext; page: Page }> => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${bed.url}/dashboard`);
    await page.getByLabel('name').fill(name);
    await page.getByLabel('password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    return { context, page };
  };
  const cookieHeader = async (context: BrowserContext) => (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
  const reads = (page: Page) => page.evaluate(async () => (await fetch('/dashboard/console/fleet')).status);

  it('sends a browser without a session to the login page, refuses a wrong password, and signs in with the right one', async () => {
    const { context, page } = await login('alice', 'not-her-password');
    expect(new URL(page.url()).pathname).toBe('/dashboard/login');
    await page.getByRole('alert').filter({ hasText: 'Wrong name or password' }).waitFor();
    await page.getByLabel('password').fill(passwords.alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForSelector('body[data-rendered=fleet]');
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    expect(await page.locator('#signed-in').innerText()).toMatch(/Signed in as alice \(operator\)/);
    const session = (await context.cookies()).find((c) => c.name === 'reflex_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/dashboard', secure: false });
    expect(session.value).not.toContain(passwords.alice);
    // Kept server-side, in Redis under the deployment's prefix: the cookie's secret is not there, its hash is.
    const keys = await bed.redis.keys(`${bed.prefix}:console:session:*`);
    expect(keys.length).toBe(1);
    expect(await bed.redis.get(keys[0]!)).toMatch(/"user":"alice","role":"operator","via":"password"/);
    expect(JSON.stringify(await bed.redis.get(keys[0]!))).not.toContain(session.value);
    await context.close();
  });

  it('acts as the signed-in user without a token typed in, audited under the name; CSRF stays refused', async () => {
    const { context, page } = await login('alice');
    await page.waitForSelector('body[data-rendered=fleet]');
    bed.sim.controls.crash('web-1');
    await page.locator('#fleet-table tr[data-key$="/web-1"][data-status=Stopped]').waitFor({ timeout: 10_000 });
    await page.getByRole('button', { name: 'Heal web-1', exact: true }).click();
    await page.getByRole('dialog', { name: 'Heal web-1?' }).getByRole('button', { name: 'Heal web-1' }).click();
    await page.locator('#action-result', { hasText: 'heal queued' }).waitFor();
    const heals = (await audit.read({ instance: 'web-1' })).filter((r) => r.rule === 'heal' && r.type === 'decision');
    expect(heals).toEqual([expect.objectContaining({ origin: 'console', actor: 'alice' })]);
    // The same cookie from another site's page: refused before anything is queued.
    const cookie = await cookieHeader(context);
    for (const origin of ['http://evil.example', 'null']) {
      const forged = await fetch(`${bed.url}/dashboard/console/heal`, {
        method: 'POST',
        headers: { cookie, origin, 'content-type': 'application/json' },
        body: JSON.stringify({ target: bed.target, project: 'default', instance: 'web-1' }),
      });
      expect(forged.status, origin).toBe(403);
    }
    const form = await fetch(`${bed.url}/dashboard/console/heal`, {
      method: 'POST',
      headers: { cookie, origin: bed.url, 'content-type': 'text/plain' },
      body: JSON.stringify({ target: bed.target, project: 'default', instance: 'web-1' }),
    });
    expect(form.status).toBe(415);
    // A page elsewhere cannot sign a browser in as its own user either.
    const loginCsrf = await fetch(`${bed.url}/dashboard/login`, {
      method: 'POST',
      headers: { origin: 'http://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: `name=alice&password=${passwords.alice}`,
      redirect: 'manual',
    });
    expect(loginCsrf.status).toBe(403);
    expect(loginCsrf.headers.get('set-cookie')).toBeNull();
    await context.close();
  });

  it('ends a session by signing out, and an admin ends another user’s sessions at once', async () => {
    const bob = await login('bob');
    await bob.page.waitForSelector('body[data-rendered=fleet]');
    await bob.page.getByRole('button', { name: 'Sign out' }).click();
    await bob.page.waitForURL(/\/dashboard\/login/);
    expect(await reads(bob.page)).toBe(401);

    const alice = await login('alice');
    await alice.page.waitForSelector('body[data-rendered=fleet]');
    expect(await reads(alice.page)).toBe(200);
    // Only an admin lists or ends sessions.
    const aliceCookie = await cookieHeader(alice.context);
    expect((await fetch(`${bed.url}/dashboard/sessions`, { headers: { cookie: aliceCookie } })).status).toBe(403);
    const carol = await login('carol');
    await carol.page.waitForSelector('body[data-rendered=fleet]');
    const carolCookie = await cookieHeader(carol.context);
    const list = (await (await fetch(`${bed.url}/dashboard/sessions`, { headers: { cookie: carolCookie } })).json()) as {
      sessions: { user: string }[];
    };
    expect(list.sessions.map((s) => s.user)).toContain('alice');
    const ended = await fetch(`${bed.url}/dashboard/sessions/end`, {
      method: 'POST',
      headers: { cookie: carolCookie, origin: bed.url, 'content-type': 'application/json' },
      body: JSON.stringify({ user: 'alice' }),
    });
    expect(ended.status).toBe(200);
    expect(((await ended.json()) as { ended: number }).ended).toBeGreaterThanOrEqual(1);
    expect(await reads(alice.page)).toBe(401);
    await alice.page.reload();
    expect(new URL(alice.page.url()).pathname).toBe('/dashboard/login');
    const access = (await audit.read({})).filter((r) => r.type === 'access');
    expect(access.map((r) => r.summary)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^alice signed in \(operator\) with a password$/),
        'bob signed out',
        expect.stringMatching(/^carol ended \d+ session\(s\) of alice$/),
      ]),
    );
    await Promise.all([bob.context.close(), alice.context.close(), carol.context.close()]);
  });
});
