import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { hashUserToken } from '../../src/http/dashboard-users.js';
import { scrape, startObservabilityBed, valueOf, type ObservabilityBed } from '../metrics/observability-bed.js';
import { launchChromium } from './headless-chromium.js';

const readToken = `lockout-read-${Math.random().toString(36).slice(2)}`;
const alicePassword = `alice-pw-${Math.random().toString(36).slice(2)}`;

/**
 * Failed sign-ins are limited per user and per source address, with a lock-out that is audited,
 * logged and counted; a flood of wrong tokens is refused before it is hashed, so it cannot take the
 * process's CPU (50 wrong bearer tokens at once took 92 % of a core and doubled heal times).
 */
describe('console sign-in rate limit and lock-out', () => {
  let bed: ObservabilityBed;
  let browser: Browser;
  let audit: AuditLog;

  beforeAll(async () => {
    const dir = mkdtempSync(join('.tmp', 'users-'));
    const usersFile = join(dir, 'users');
    const aliceHash = await hashUserToken(alicePassword);
    writeFileSync(usersFile, `alice operator ${aliceHash}\nbob viewer ${await hashUserToken('bob-secret-of-some-length')}\n`);
    bed = await startObservabilityBed({
      rulesDir: 'rules',
      instances: [{ name: 'web-1', optIn: false }],
      config: {
        dashboardToken: readToken,
        dashboardUsersFile: usersFile,
        dashboardLockout: { perSource: 15, perUser: 3, windowMs: '5m', lockMs: '5m' },
      },
    });
    audit = new AuditLog(bed.redis, bed.keys.audit);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await bed?.stop();
  });

  const lockouts = async () => (await audit.read({})).filter((r) => r.type === 'access' && r.result === 'locked-out');

  it('locks a user out after 3 wrong passwords: the right one is then refused too, and the lock-out is audited and counted', async () => {
    const page = await browser.newPage();
    await page.goto(`${bed.url}/dashboard/login`);
    for (let i = 0; i < 3; i++) {
      await page.getByLabel('name').fill('alice');
      await page.getByLabel('password').fill(`guess-${i}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'Wrong name or password' }).waitFor();
    }
    await page.getByLabel('password').fill(alicePassword);
    const answer = page.waitForResponse((r) => r.url().endsWith('/dashboard/login') && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect((await answer).status()).toBe(429);
    await page
      .getByRole('alert')
      .filter({ hasText: /Too many failed sign-ins: locked out until/ })
      .waitFor();
    expect(await lockouts()).toEqual([
      expect.objectContaining({
        scope: 'user',
        actor: 'alice',
        summary: expect.stringMatching(/^user alice locked out for 5 min after 3 failed sign-ins/),
      }),
    ]);
    const samples = await scrape(bed.url);
    expect(valueOf(samples, 'reflex_dashboard_auth_failures_total', { kind: 'password' })).toBe(3);
    expect(valueOf(samples, 'reflex_dashboard_lockouts_total', { scope: 'user' })).toBe(1);
    expect(valueOf(samples, 'reflex_dashboard_auth_refused_total', { why: 'locked' })).toBeGreaterThanOrEqual(1);
    // Another user is not held by alice's lock.
    expect((await fetch(`${bed.url}/dashboard/console/fleet`, { headers: { authorization: 'Bearer bob-secret-of-some-length' } })).status).toBe(200);
    await page.close();
  });

  it('refuses 50 wrong tokens at once mostly before hashing them (CPU of a few checks, not 50), then locks the source out', async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        fetch(`${bed.url}/dashboard/console/fleet`, { headers: { authorization: `Bearer wrong-token-${i}-of-some-length` } }).then((r) => r.status),
      ),
    );
    // Each wrong token compared costs a check per user (2 here): 50 would cost 100 checks. At most 5
    // are let in at once; the rest are refused before any hashing (what that saves in CPU is a
    // benchmark's figure, not this test's: the test process's CPU also counts the bed's other work).
    expect(answers.every((s) => s === 401 || s === 429)).toBe(true);
    expect(answers.filter((s) => s === 429).length).toBeGreaterThanOrEqual(40);
    // Wrong tokens one after another: the source is locked out within its limit (15, with the 3 passwords before).
    let status = 0;
    for (let i = 0; i < 15 && status !== 429; i++)
      status = (await fetch(`${bed.url}/dashboard/console/fleet`, { headers: { authorization: `Bearer wrong-again-${i}-of-some-length` } })).status;
    expect(status).toBe(429);
    // Locked out, even the right token is refused before it is compared, with when to come back.
    const right = await fetch(`${bed.url}/dashboard/console/fleet`, { headers: { authorization: `Bearer ${readToken}` } });
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(200);
    expect(await right.text()).toMatch(/too many failed sign-ins from .*: locked out until/);
    expect((await lockouts()).map((r) => r.scope)).toEqual(['user', 'source']);
    const samples = await scrape(bed.url);
    expect(valueOf(samples, 'reflex_dashboard_lockouts_total', { scope: 'source' })).toBe(1);
    expect(valueOf(samples, 'reflex_dashboard_auth_refused_total', { why: 'busy' })).toBeGreaterThanOrEqual(40);
  });
});
