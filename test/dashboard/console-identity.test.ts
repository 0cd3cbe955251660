import { existsSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { hashUserToken, parseUsersFile } from '../../src/http/dashboard-users.js';
import { startObservabilityBed, type ObservabilityBed } from '../metrics/observability-bed.js';
import { until } from '../support/wait.js';
import { launchChromium, requireChromium } from './headless-chromium.js';

const chromiumPath = process.env.REFLEX_CHROMIUM ?? '/usr/bin/chromium';
const readToken = `identity-read-${Math.random().toString(36).slice(2)}`;
const writeToken = `identity-write-${Math.random().toString(36).slice(2)}`;
const aliceToken = `alice-${Math.random().toString(36).slice(2)}`;
const bobToken = `bob-${Math.random().toString(36).slice(2)}`;

/**
 * Each operator acts with a token of their own from a users file (scrypt-hashed), in a role: an
 * operator's action is audited under the name the server authenticated, never a name typed in; a
 * viewer reads and cannot act; the shared write token no longer acts unless the config says so.
 */
describe('console users with roles (a users file of hashed tokens)', () => {
  let bed: ObservabilityBed;
  let browser: Browser;
  let page: Page;
  let audit: AuditLog;

  beforeAll(async () => {
    if (!existsSync(chromiumPath)) throw new Error(`no Chromium at ${chromiumPath}: apt-get install chromium (CI does), or set REFLEX_CHROMIUM`);
    const dir = mkdtempSync(join('.tmp', 'users-'));
    const usersFile = join(dir, 'users');
    writeFileSync(usersFile, `# console users\nalice operator ${await hashUserToken(aliceToken)}\n\nbob viewer ${await hashUserToken(bobToken)}\n`);
    bed = await startObservabilityBed({
      rulesDir: 'rules',
      instances: [{ name: 'web-1', optIn: false }],
      config: { dashboardToken: readToken, dashboardWriteToken: writeToken, dashboardUsersFile: usersFile },
    });
    audit = new AuditLog(bed.redis, bed.keys.audit);
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${bed.url}/dashboard?token=${readToken}`);
    await page.waitForSelector('body[data-rendered=fleet]');
  });

  afterAll(async () => {
    await browser?.close();
    await bed?.stop();
  });

  const heals = async () => (await audit.read({ instance: 'web-1' })).filter((r) => r.rule === 'heal' && r.type === 'decision');
  const healFromPage = async (token: string) => {
    await page.fill('#write-token', token);
    await page.getByRole('button', { name: 'Heal web-1', exact: true }).click();
    await page.getByRole('dialog', { name: 'Heal web-1?' }).getByRole('button', { name: 'Heal web-1' }).click();
  };

  it('asks for your own token, not a name', async () => {
    expect(await page.locator('#operator').innerText()).toMatch(/your token/);
    expect(await page.locator('#actor').count()).toBe(0);
  });

  it('refuses a viewer’s action and records nothing', async () => {
    bed.sim.controls.crash('web-1');
    await page.locator('#fleet-table tr[data-key$="/web-1"][data-status=Stopped]').waitFor({ timeout: 10_000 });
    await healFromPage(bobToken);
    await page.locator('#action-result', { hasText: 'refused (403)' }).waitFor();
    expect(await page.locator('#action-result').innerText()).toMatch(/bob is a viewer/);
    expect(await heals()).toEqual([]);
  });

  it('refuses the shared write token once users are configured', async () => {
    const res = await fetch(`${bed.url}/dashboard/console/heal`, {
      method: 'POST',
      headers: { authorization: `Bearer ${writeToken}`, origin: bed.url, 'content-type': 'application/json' },
      body: JSON.stringify({ target: bed.target, project: 'default', instance: 'web-1', actor: 'mallory' }),
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/shared write token does not act/);
    expect(await heals()).toEqual([]);
  });

  it('audits an operator’s heal under the authenticated user, whatever name the body claims', async () => {
    await healFromPage(aliceToken);
    await page.locator('#action-result', { hasText: 'heal queued' }).waitFor();
    await page.locator('#fleet-table tr[data-key$="/web-1"][data-status=Running]').waitFor({ timeout: 10_000 });
    const res = await fetch(`${bed.url}/dashboard/console/silences`, {
      method: 'POST',
      headers: { authorization: `Bearer ${aliceToken}`, origin: bed.url, 'content-type': 'application/json' },
      body: JSON.stringify({ scope: { instance: 'web-1' }, duration: '10m', reason: 'kernel update', createdBy: 'somebody-else' }),
    });
    expect(res.status).toBe(201);
    expect(await heals()).toEqual([expect.objectContaining({ origin: 'console', actor: 'alice' })]);
    expect((await audit.read({})).find((r) => r.type === 'silence')?.summary).toMatch(/by alice/);
  });

  it('reads a users file strictly, naming the line of a mistake', async () => {
    const hash = await hashUserToken('t');
    expect(() => parseUsersFile(`carol root ${hash}`, 'users')).toThrow('users:1: role "root": viewer, operator or admin');
    expect(parseUsersFile(`carol admin ${hash}`, 'users')[0]).toMatchObject({ name: 'carol', role: 'admin' });
    expect(() => parseUsersFile(`# x\ncarol operator plaintext`, 'users')).toThrow('users:2: the token hash');
    expect(() => parseUsersFile(`carol operator ${hash}\ncarol viewer ${hash}`, 'users')).toThrow('users:2: user "carol" twice');
  });
});

/**
 * No shared token to read: each user opens the console with their own secret, in a role (viewer,
 * operator, admin), and the users file is followed while Reflex runs.
 */
describe('console users without a shared token', () => {
  let bed: ObservabilityBed;
  let browser: Browser;
  let audit: AuditLog;
  let usersFile: string;
  const carolToken = `carol-${Math.random().toString(36).slice(2)}`;
  const lines: Record<string, string> = {};

  const writeUsers = (names: string[]) => {
    // Written aside and renamed, as an editor or a deployment tool replaces a file.
    writeFileSync(`${usersFile}.new`, names.map((n) => lines[n]).join('\n') + '\n');
    renameSync(`${usersFile}.new`, usersFile);
  };

  beforeAll(async () => {
    requireChromium();
    const dir = mkdtempSync(join('.tmp', 'users-'));
    usersFile = join(dir, 'users');
    lines.alice = `alice operator ${await hashUserToken(aliceToken)}`;
    lines.bob = `bob viewer ${await hashUserToken(bobToken)}`;
    lines.carol = `carol admin ${await hashUserToken(carolToken)}`;
    writeUsers(['alice', 'bob', 'carol']);
    bed = await startObservabilityBed({
      rulesDir: 'rules',
      instances: [{ name: 'web-1', optIn: false }],
      config: { dashboardUsersFile: usersFile },
    });
    audit = new AuditLog(bed.redis, bed.keys.audit);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await bed?.stop();
  });

  const signedIn = async (token: string) => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${bed.url}/dashboard?token=${token}`);
    await page.waitForSelector('body[data-rendered=fleet]');
    return page;
  };

  it('opens the console with a user’s own token (no dashboardToken configured), and takes the token out of the address', async () => {
    const page = await signedIn(aliceToken);
    expect(page.url()).toBe(`${bed.url}/dashboard`);
    const cookies = await page.context().cookies();
    const session = cookies.find((c) => c.name === 'reflex_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/dashboard' });
    expect(JSON.stringify(cookies)).not.toContain(aliceToken);
    // The session reads the API too (the page's own calls carry it).
    expect(await page.evaluate(async () => (await fetch('/dashboard/console/fleet')).status)).toBe(200);
    await page.context().close();
  });

  it('signs a user out at their next request once the users file no longer has them, without a restart', async () => {
    const page = await signedIn(bobToken);
    const reads = () => page.evaluate(async () => (await fetch('/dashboard/console/fleet')).status);
    expect(await reads()).toBe(200);
    expect((await fetch(`${bed.url}/dashboard/console/fleet`, { headers: { authorization: `Bearer ${bobToken}` } })).status).toBe(200);
    writeUsers(['alice', 'carol']);
    await until('bob’s session to end', async () => (await reads()) === 401);
    expect((await fetch(`${bed.url}/dashboard/console/fleet`, { headers: { authorization: `Bearer ${bobToken}` } })).status).toBe(401);
    const ended = (await audit.read({})).filter((r) => r.type === 'access' && r.result === 'session-ended');
    expect(ended).toEqual([expect.objectContaining({ actor: 'bob', summary: expect.stringMatching(/no longer in the users file/) })]);
    // Put back, the same token works again.
    writeUsers(['alice', 'bob', 'carol']);
    await until(
      'bob back',
      async () => (await fetch(`${bed.url}/dashboard/console/fleet`, { headers: { authorization: `Bearer ${bobToken}` } })).status === 200,
    );
    await page.context().close();
  });

  it('lets an admin pause and resume a queue through the queues page, audited under the admin’s name; an operator is refused', async () => {
    const queues = async () =>
      (
        (await (await fetch(`${bed.url}/dashboard/queues/api/queues`, { headers: { authorization: `Bearer ${carolToken}` } })).json()) as {
          queues: { name: string; isPaused: boolean }[];
        }
      ).queues;
    const events = (await queues()).map((q) => q.name).find((n) => /events/.test(n))!;
    const paused = async () => (await queues()).find((q) => q.name === events)!.isPaused;
    expect(events).toBeTruthy();
    const page = await signedIn(carolToken);
    const put = (path: string) =>
      page.evaluate(async (p) => (await fetch(p, { method: 'PUT', headers: { 'content-type': 'application/json' } })).status, path);
    // The board the admin's page shows offers its actions (not read-only); the page's calls carry the session.
    expect(
      await page.evaluate(async () =>
        ((await (await fetch('/dashboard/queues/api/queues')).json()) as { queues: { readOnlyMode: boolean }[] }).queues.map((q) => q.readOnlyMode),
      ),
    ).toEqual([false, false]);
    expect(await put(`/dashboard/queues/api/queues/${encodeURIComponent(events)}/pause`)).toBe(200);
    expect(await paused()).toBe(true);
    expect(await put(`/dashboard/queues/api/queues/${encodeURIComponent(events)}/resume`)).toBe(200);
    const operator = await fetch(`${bed.url}/dashboard/queues/api/queues/${encodeURIComponent(events)}/pause`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${aliceToken}`, origin: bed.url },
    });
    expect(operator.status).toBe(403);
    expect(await paused()).toBe(false);
    expect(await operator.text()).toMatch(/alice is an operator: changing the queues needs an admin/);
    const changes = (await audit.read({})).filter((r) => r.type === 'queue');
    expect(changes.map((r) => [r.actor, r.summary])).toEqual([
      ['carol', `carol paused queue ${events} on the queues page`],
      ['carol', `carol resumed queue ${events} on the queues page`],
    ]);
    await page.context().close();
  });
});
