import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { hashUserToken } from '../../src/http/dashboard-users.js';
import { startObservabilityBed, type ObservabilityBed } from '../metrics/observability-bed.js';
import { until } from '../support/wait.js';
import { launchChromium } from './headless-chromium.js';

const secret = (name: string) => `${name}-${Math.random().toString(36).slice(2)}`;
const tokens = { alice: secret('alice'), bob: secret('bob'), carol: secret('carol') };

/**
 * The users file is followed while Reflex runs, and so are the actions the console and the queues
 * page offer: a file that starts with viewers only gives a read-only console, and the operator or
 * admin added to it later finds the write buttons at the next page load, without a restart (issue
 * #42: "buttons need restart after users reload").
 */
describe('the console’s actions follow the users file (headless Chromium)', () => {
  let bed: ObservabilityBed;
  let browser: Browser;
  let audit: AuditLog;
  let usersFile: string;
  const lines: Record<string, string> = {};

  const writeUsers = (names: (keyof typeof tokens)[]) => {
    writeFileSync(`${usersFile}.new`, names.map((n) => lines[n]).join('\n') + '\n');
    renameSync(`${usersFile}.new`, usersFile);
  };
  const accepted = async (token: string) =>
    (await fetch(`${bed.url}/dashboard/console/fleet`, { headers: { authorization: `Bearer ${token}` } })).status === 200;
  const signedIn = async (token: string): Promise<Page> => {
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    await page.goto(`${bed.url}/dashboard?token=${token}`);
    await page.waitForSelector('body[data-rendered=fleet]');
    return page;
  };
  const readOnlyQueues = async (token: string) =>
    (
      (await (await fetch(`${bed.url}/dashboard/queues/api/queues`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
        queues: { readOnlyMode: boolean }[];
      }
    ).queues.map((q) => q.readOnlyMode);

  beforeAll(async () => {
    const dir = mkdtempSync(join('.tmp', 'users-reload-'));
    usersFile = join(dir, 'users');
    lines.alice = `alice operator ${await hashUserToken(tokens.alice)}`;
    lines.bob = `bob viewer ${await hashUserToken(tokens.bob)}`;
    lines.carol = `carol admin ${await hashUserToken(tokens.carol)}`;
    writeUsers(['bob']);
    bed = await startObservabilityBed({
      rulesDir: 'rules',
      instances: [{ name: 'web-1', optIn: false }],
      config: { dashboardUsersFile: usersFile },
    });
    audit = new AuditLog(bed.redis, bed.keys.audit);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await bed?.stop();
  });

  it('offers the actions to an operator added to a file of viewers, and takes them away when the last one leaves', { timeout: 60_000 }, async () => {
    const viewer = await signedIn(tokens.bob);
    expect(await viewer.locator('#operator').innerText()).toMatch(/Read-only console: nobody in the users file may act/);
    await viewer.locator('#sign-out').waitFor();
    await viewer.context().close();

    writeUsers(['bob', 'alice']);
    await until('alice in the reloaded file', () => accepted(tokens.alice));
    const page = await signedIn(tokens.alice);
    expect(await page.locator('#operator').innerText()).not.toMatch(/Read-only console/);
    bed.sim.controls.crash('web-1');
    await page.getByRole('button', { name: 'Heal web-1', exact: true }).click();
    await page.getByRole('dialog', { name: 'Heal web-1?' }).getByRole('button', { name: 'Heal web-1' }).click();
    await page.locator('#action-result', { hasText: 'heal queued' }).waitFor();
    const heals = (await audit.read({ instance: 'web-1' })).filter((r) => r.rule === 'heal' && r.type === 'decision');
    expect(heals).toEqual([expect.objectContaining({ origin: 'console', actor: 'alice' })]);
    await page.context().close();

    writeUsers(['bob']);
    await until('alice out of the reloaded file', async () => !(await accepted(tokens.alice)));
    const again = await signedIn(tokens.bob);
    expect(await again.locator('#operator').innerText()).toMatch(/Read-only console/);
    await again.context().close();
  });

  it('lets an admin added to the file change the queues, where the queues page stayed read-only', { timeout: 60_000 }, async () => {
    expect(await readOnlyQueues(tokens.bob)).toEqual([true, true]);
    writeUsers(['bob', 'carol']);
    await until('carol in the reloaded file', () => accepted(tokens.carol));
    expect(await readOnlyQueues(tokens.carol)).toEqual([false, false]);
    const events = (
      (await (await fetch(`${bed.url}/dashboard/queues/api/queues`, { headers: { authorization: `Bearer ${tokens.carol}` } })).json()) as {
        queues: { name: string }[];
      }
    ).queues
      .map((q) => q.name)
      .find((n) => /events/.test(n))!;
    const change = (verb: string) =>
      fetch(`${bed.url}/dashboard/queues/api/queues/${encodeURIComponent(events)}/${verb}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${tokens.carol}`, origin: bed.url },
      });
    expect((await change('pause')).status).toBe(200);
    expect((await change('resume')).status).toBe(200);
    expect((await audit.read({})).filter((r) => r.type === 'queue').map((r) => r.actor)).toEqual(['carol', 'carol']);
    writeUsers(['bob']);
    await until('carol out of the reloaded file', async () => !(await accepted(tokens.carol)));
    expect(await readOnlyQueues(tokens.bob)).toEqual([true, true]);
  });
});
