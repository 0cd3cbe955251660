import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { hashUserToken, parseUsersFile } from '../../src/http/dashboard-users.js';
import { startObservabilityBed, type ObservabilityBed } from '../metrics/observability-bed.js';

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
    expect(() => parseUsersFile(`carol admin ${hash}`, 'users')).toThrow('users:1: role "admin": viewer or operator');
    expect(() => parseUsersFile(`# x\ncarol operator plaintext`, 'users')).toThrow('users:2: the token hash');
    expect(() => parseUsersFile(`carol operator ${hash}\ncarol viewer ${hash}`, 'users')).toThrow('users:2: user "carol" twice');
  });
});
