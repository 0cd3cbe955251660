import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrashLoopBudget } from '../../src/remediation/crash-loop-budget.js';
import { keySpace } from '../../src/redis/key-space.js';
import { Silences } from '../../src/silences/silences.js';
import { optIn } from '../metrics/observability-bed.js';
import { redisClient } from '../support/redis.js';
import { sleep, until } from '../support/wait.js';
import { startConsoleStack, type ConsoleStack } from './console-reflex.js';
import { launchChromium, requireChromium } from './headless-chromium.js';

const readToken = `armed-read-${Math.random().toString(36).slice(2)}`;
const writeToken = `armed-write-${Math.random().toString(36).slice(2)}`;

/** The page's globals as the evaluated function uses them (the tests compile without the DOM typings). */
interface Hit {
  document: { elementFromPoint(x: number, y: number): { id: string } | null };
}

/** Each page's buttons that open a confirmation, by their accessible names. */
const consoleOpeners = [
  { section: 'fleet', name: 'Heal db-1' },
  { section: 'fleet', name: 'Release web-3 from quarantine' },
  { section: 'dead letters', name: /^Retry .* on web-2$/ },
  { section: 'executions', name: 'Re-run start on db-1' },
  { section: 'alerts', name: 'End silence of instance=web-1' },
];
const viewports = [
  { width: 1280, height: 900 },
  { width: 1440, height: 900 },
  { width: 1920, height: 1080 },
  { width: 390, height: 844, phone: true },
];

/**
 * Issue #42 item 3: the dialog opened under the pointer and the second click of a double-click hit
 * its confirming button (Retry, Re-run at 1280/1440/1920 px; Release, Re-run on a phone). A click
 * arriving right after the dialog opened, wherever the confirming button is drawn, must not confirm.
 */
describe('a confirmation cannot be hit by the click that opened it (headless Chromium, every page and width)', () => {
  let stack: ConsoleStack | undefined;
  let browser: Browser;
  const redis = redisClient();

  beforeAll(async () => {
    requireChromium();
    stack = await startConsoleStack({
      instances: [...['web-1', 'web-2', 'web-3'].map((name) => ({ name, config: optIn })), { name: 'db-1', config: {} }],
      config: { actionAttempts: 1, dashboardToken: readToken, dashboardWriteToken: writeToken },
    });
    const { sim, reflex, url, prefix } = stack;
    const keys = keySpace(prefix);
    // A dead letter (web-2's start fails), a quarantine (web-3), a silence (web-1), db-1 stopped
    // (not opted in: Heal is offered) and an operator's start of it (Re-run is offered).
    sim.controls.failNext('web-2', 10, 'disk quota exceeded');
    sim.controls.crash('web-2');
    sim.controls.crash('db-1');
    const target = reflex.targets[0]!;
    const uuid = sim.controls.identity('web-3');
    await new CrashLoopBudget(redis).reserve(
      {
        restarts: keys.restarts({ target, project: 'default', instance: 'web-3' }),
        quarantine: keys.quarantine({ target, project: 'default', instance: 'web-3' }),
      },
      'loop-web-3',
      { maxRestarts: 0 },
      Date.now(),
      uuid,
    );
    await new Silences(redis, keys.silences).add({
      scope: { instance: 'web-1' },
      durationMs: 3_600_000,
      reason: 'disk swap on the host, CHG-42',
      createdBy: 'alice',
    });
    const headers = { authorization: `Bearer ${writeToken}`, origin: url, 'content-type': 'application/json' };
    const heal = await fetch(`${url}/dashboard/console/heal`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ target, project: 'default', instance: 'db-1', actor: 'alice' }),
    });
    expect(heal.status).toBe(202);
    await until('db-1 started by the heal', async () => sim.controls.statusCode('db-1') === 103, 20_000);
    sim.controls.crash('db-1');
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    redis.disconnect();
  });

  /**
   * Opens the dialog with `opener` and cancels it, to learn where its confirming button is drawn;
   * then clicks the opener and, 150 ms later, that place (a double-click whose second click lands on
   * the button, or a click meant for what was under the pointer). Answers whether that click
   * confirmed. Only a pair of clicks sent within 400 ms counts (a loaded machine may be slower):
   * up to 5 pairs are tried. The page's writes are held back (answered 418) so nothing changes.
   */
  async function secondClickConfirms(page: Page, opener: ReturnType<Page['getByRole']>, okName: string | RegExp): Promise<boolean> {
    await opener.scrollIntoViewIfNeeded();
    await opener.click();
    const dialog = page.locator('#confirm');
    await dialog.waitFor();
    const ok = (await dialog.getByRole('button', { name: okName }).boundingBox())!;
    const x = ok.x + ok.width / 2;
    const y = ok.y + ok.height / 2;
    // The confirming button is where the second click lands.
    expect(await page.evaluate(([px, py]) => (globalThis as unknown as Hit).document.elementFromPoint(px!, py!)?.id, [x, y])).toBe('confirm-ok');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    const at = (await opener.boundingBox())!;
    for (let attempt = 0; attempt < 5; attempt++) {
      const sent = writes;
      const t0 = Date.now();
      await page.mouse.click(at.x + at.width / 2, at.y + at.height / 2);
      // A double-click's second click comes 100 to 250 ms after the first.
      await sleep(150);
      await page.mouse.click(x, y);
      const gap = Date.now() - t0;
      await sleep(600);
      const open = await dialog.isVisible();
      const confirmed = writes > sent;
      if (process.env.DEBUG_ARMED) console.log({ okName, gap, open, confirmed });
      if (open) await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      // Neither open nor confirmed: the first click did not open it (the page moved): not a pair that counts.
      if (gap < 400 && (open || confirmed)) return confirmed;
    }
    throw new Error('no pair of clicks within 400 ms in 5 tries: the machine is too loaded to tell');
  }
  let writes = 0;
  const holdWrites = async (page: Page) =>
    page.route('**/dashboard/**', (route) => {
      if (route.request().method() === 'GET') return route.continue();
      writes++;
      return route.fulfill({ status: 418, body: '{"error":"held by the test"}', contentType: 'application/json' });
    });

  for (const vp of viewports) {
    it(`on the console at ${vp.width} px: fleet, dead letters, executions, alerts`, async () => {
      const page = await browser.newPage({
        viewport: { width: vp.width, height: vp.height },
        ...(vp.phone ? { isMobile: true, hasTouch: true } : {}),
      });
      await holdWrites(page);
      await page.goto(`${stack!.url}/dashboard?token=${readToken}`);
      await page.waitForSelector('body[data-rendered=fleet]');
      await page.fill('#write-token', writeToken);
      await page.getByRole('button', { name: 'Pause live updates' }).waitFor();
      for (const o of consoleOpeners) {
        const opener = page.getByRole('button', { name: o.name }).first();
        await opener.waitFor({ timeout: 30_000 });
      }
      // Live updates would move the buttons between the two clicks: paused, the page holds still.
      await page.getByRole('button', { name: 'Pause live updates' }).click();
      for (const o of consoleOpeners) {
        const opener = page.getByRole('button', { name: o.name }).first();
        const label = (await opener.getAttribute('aria-label'))!;
        const okName = (await opener.click(), await page.locator('#confirm-ok').innerText());
        await page.keyboard.press('Escape');
        expect(await secondClickConfirms(page, opener, okName), `${o.section}: ${label} at ${vp.width} px`).toBe(false);
      }
      await page.close();
    });
  }

  for (const vp of viewports) {
    it(`on the audit table at ${vp.width} px: adding and ending a silence`, async () => {
      const page = await browser.newPage({
        viewport: { width: vp.width, height: vp.height },
        ...(vp.phone ? { isMobile: true, hasTouch: true } : {}),
      });
      await holdWrites(page);
      await page.goto(`${stack!.url}/dashboard/audit?token=${readToken}`);
      await page.fill('#write-token', writeToken);
      await page.fill('#silence-form [name=instance]', 'web-2');
      await page.fill('#silence-form [name=duration]', '1h');
      await page.fill('#silence-form [name=reason]', 'disk swap on the host, CHG-43');
      for (const [opener, okName] of [
        [page.getByRole('button', { name: 'End silence of instance=web-1' }), 'End silence of instance=web-1'],
        [page.getByRole('button', { name: 'Add silence…' }), 'Silence instance=web-2'],
      ] as const)
        expect(await secondClickConfirms(page, opener, okName), `${okName} at ${vp.width} px`).toBe(false);
      await page.close();
    });
  }
});
