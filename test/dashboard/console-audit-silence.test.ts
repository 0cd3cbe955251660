import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { hashUserToken } from '../../src/http/dashboard-users.js';
import { keySpace } from '../../src/redis/key-space.js';
import { Silences } from '../../src/silences/silences.js';
import { optIn } from '../metrics/observability-bed.js';
import { redisClient } from '../support/redis.js';
import { until } from '../support/wait.js';
import { startConsoleStack, type ConsoleStack } from './console-reflex.js';
import { launchChromium, requireChromium } from './headless-chromium.js';

const readToken = `audit-page-read-${Math.random().toString(36).slice(2)}`;
const writeToken = `audit-page-write-${Math.random().toString(36).slice(2)}`;
const aliceToken = `alice-${Math.random().toString(36).slice(2)}`;

/**
 * The audit page's silence form (issue #42 item 2): one Enter added a 365-day silence of
 * everything with reason "x", audited under a typed name. Now nothing is written before a
 * confirmation that says back the scope and the reason, a silence of everything needs a reason in
 * words, and the records name the user whose token sent it, adding and ending alike.
 */
describe('the audit page cannot silence everything by accident (headless Chromium)', () => {
  let stack: ConsoleStack | undefined;
  let browser: Browser;
  let page: Page;
  let silences: Silences;
  let audit: AuditLog;
  const redis = redisClient();

  beforeAll(async () => {
    requireChromium();
    const dir = mkdtempSync(join('.tmp', 'audit-silence-'));
    const usersFile = join(dir, 'users');
    writeFileSync(usersFile, `alice operator ${await hashUserToken(aliceToken)}\n`);
    stack = await startConsoleStack({
      instances: ['web-1', 'web-2'].map((name) => ({ name, config: optIn })),
      config: { dashboardToken: readToken, dashboardWriteToken: writeToken, dashboardUsersFile: usersFile },
    });
    silences = new Silences(redis, keySpace(stack.prefix).silences);
    audit = new AuditLog(redis, keySpace(stack.prefix).audit);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${stack.url}/dashboard/audit?token=${readToken}`);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    redis.disconnect();
  });

  const form = () => page.locator('#silence-form');
  const dialog = () => page.getByRole('dialog');

  it('asks first when Enter is pressed in the form, saying back the scope (everything) and the reason; Cancel adds nothing', async () => {
    expect(await form().locator('[name=createdBy]').count()).toBe(0);
    await page.fill('#write-token', aliceToken);
    await form().locator('[name=all]').check();
    await form().locator('[name=duration]').fill('365d');
    await form().locator('[name=reason]').fill('x');
    await form().locator('[name=reason]').press('Enter');
    await dialog().waitFor();
    const text = await dialog().innerText();
    expect(text).toContain('Silence everything for 365d?');
    expect(text).toContain('EVERYTHING (every instance of every target)');
    expect(text).toContain('Reason: x');
    // Enter again lands on Cancel, which has the focus.
    await page.keyboard.press('Enter');
    await dialog().waitFor({ state: 'hidden' });
    expect(await silences.list()).toEqual([]);
  });

  it('refuses a silence of everything whose reason is not in words, even confirmed', async () => {
    await form().locator('[name=reason]').press('Enter');
    await dialog().getByRole('button', { name: 'Silence everything' }).click();
    await page.locator('#silence-result', { hasText: 'refused (400)' }).waitFor();
    expect(await page.locator('#silence-result').innerText()).toMatch(/everything needs a reason of at least 3 words/);
    expect(await silences.list()).toEqual([]);
  });

  it("records the silence and its end under the user whose token sent them, never a typed name or 'dashboard'", async () => {
    await form().locator('[name=reason]').fill('kernel upgrade of every host, CHG-1234');
    await form().locator('[name=reason]').press('Enter');
    await dialog().getByRole('button', { name: 'Silence everything' }).click();
    await page.locator('#silence-result', { hasText: '✔ silence' }).waitFor();
    const [added] = await silences.list();
    expect(added!.createdBy).toBe('alice');
    // The page reloads with the silence listed, its end a button that asks first too.
    await page.getByRole('button', { name: 'End silence of everything' }).waitFor();
    await page.fill('#write-token', aliceToken);
    await page.getByRole('button', { name: 'End silence of everything' }).click();
    await dialog().getByRole('button', { name: 'End silence of everything' }).click();
    await until('silence ended', async () => (await silences.list()).length === 0, 10_000);
    // The end is audited right after the silence is removed: wait for its record, not for the removal.
    const records = await until(
      'the end audited',
      async () => {
        const found = (await audit.read({})).filter((r) => /^silence /.test(r.summary));
        return found.length >= 2 && found;
      },
      10_000,
    );
    expect(records.map((r) => r.summary)).toEqual([
      expect.stringMatching(/added from the dashboard by alice /),
      expect.stringMatching(/removed from the dashboard by alice$/),
    ]);
  });
});
