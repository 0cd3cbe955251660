import { Queue } from 'bullmq';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrashLoopBudget } from '../../src/remediation/crash-loop-budget.js';
import { keySpace } from '../../src/redis/key-space.js';
import { Silences } from '../../src/silences/silences.js';
import { optIn } from '../metrics/observability-bed.js';
import { redisClient } from '../support/redis.js';
import { until } from '../support/wait.js';
import { startConsoleStack, type ConsoleStack } from './console-reflex.js';
import { launchChromium, requireChromium } from './headless-chromium.js';

const readToken = `layout-read-${Math.random().toString(36).slice(2)}`;
const writeToken = `layout-write-${Math.random().toString(36).slice(2)}`;

/** The page's globals as the evaluated functions use them (the tests compile without the DOM typings). */
interface PageGlobals {
  document: {
    documentElement: { scrollWidth: number; clientWidth: number };
    querySelector(s: string): { scrollWidth: number; clientWidth: number } | null;
  };
}

/** The console's layout where issue #42 found it broken: wide rows at 1440 px, a phone. */
describe('console layout (headless Chromium)', () => {
  let stack: ConsoleStack | undefined;
  let browser: Browser;
  let actions: Queue;
  const redis = redisClient();

  beforeAll(async () => {
    requireChromium();
    stack = await startConsoleStack({
      instances: [...['web-1', 'web-2', 'web-3'].map((name) => ({ name, config: optIn })), { name: 'db-1', config: {} }],
      config: { dashboardToken: readToken, dashboardWriteToken: writeToken },
    });
    const { sim, reflex, prefix } = stack;
    const keys = keySpace(prefix);
    const target = reflex.targets[0]!;
    const ref = (instance: string) => ({ target, project: 'default', instance });
    // web-1 silenced, web-2 quarantined, web-3 in back-off (a delayed action job), db-1 stopped.
    await new Silences(redis, keys.silences).add({
      scope: { instance: 'web-1' },
      durationMs: 365 * 86_400_000,
      reason: 'the host is being replaced, CHG-4711, ask the platform team before lifting',
      createdBy: 'alice',
    });
    await new CrashLoopBudget(redis).reserve(
      { restarts: keys.restarts(ref('web-2')), quarantine: keys.quarantine(ref('web-2')) },
      'loop-web-2',
      { maxRestarts: 0, quarantineMs: 3_600_000 },
      Date.now(),
      sim.controls.identity('web-2'),
    );
    actions = new Queue(keys.actionsQueue, { connection: redis, prefix: keys.bullPrefix });
    await actions.add('start', { ...ref('web-3'), action: 'start', rule: 'restart-on-crash' }, { delay: 3_600_000 });
    sim.controls.crash('db-1');
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await actions?.close();
    await stack?.stop();
    redis.disconnect();
  });

  const open = async (width: number, height: number, phone = false): Promise<Page> => {
    const page = await browser.newPage({ viewport: { width, height }, ...(phone ? { isMobile: true, hasTouch: true } : {}) });
    await page.goto(`${stack!.url}/dashboard?token=${readToken}`);
    await page.waitForSelector('body[data-rendered=fleet]');
    return page;
  };

  it('keeps the fleet’s action buttons in view at 1440 px when rows are silenced, quarantined and in back-off', async () => {
    const page = await open(1440, 900);
    await until(
      'the three rows flagged',
      async () =>
        (await page.locator('#fleet-table .flag.silenced').count()) > 0 &&
        (await page.locator('#fleet-table .flag.quarantined').count()) > 0 &&
        (await page.locator('#fleet-table .flag.backoff').count()) > 0,
      30_000,
    );
    const widths = await page.evaluate(() => {
      const d = (globalThis as unknown as PageGlobals).document;
      const t = d.querySelector('#fleet-table')!;
      return { table: t.scrollWidth, box: t.clientWidth, page: d.documentElement.scrollWidth, view: d.documentElement.clientWidth };
    });
    expect(widths.table, 'no sideways scroll in the fleet table').toBeLessThanOrEqual(widths.box);
    expect(widths.page).toBeLessThanOrEqual(widths.view);
    const box = (await page.locator('#fleet-table').boundingBox())!;
    for (const name of ['Silence web-1', 'Release web-2 from quarantine', 'Silence web-2', 'Silence web-3', 'Heal db-1']) {
      const b = (await page.getByRole('button', { name, exact: true }).boundingBox())!;
      expect(b.x + b.width, `${name} within the table`).toBeLessThanOrEqual(box.x + box.width + 0.5);
      expect(b.x + b.width, `${name} within the window`).toBeLessThanOrEqual(1440);
    }
    await page.close();
  });

  it('puts the token field and each instance’s actions at the top on a phone', async () => {
    const page = await open(390, 844, true);
    await page.getByRole('button', { name: 'Heal db-1' }).waitFor();
    const token = (await page.locator('#write-token').boundingBox())!;
    expect(token.y + token.height, 'the token field on the first screen').toBeLessThanOrEqual(844);
    // In each instance's card, its actions come first.
    const card = page.locator('#fleet-table tr[data-key$="/db-1"]');
    const heal = (await card.getByRole('button', { name: 'Heal db-1' }).boundingBox())!;
    const name = (await card.locator('td[data-label=instance]').boundingBox())!;
    expect(heal.y).toBeLessThan(name.y);
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.close();
  });

  it('zooms out of an inverted range around the same stretch', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const later = new Date(Math.round(Date.now() / 1_000) * 1_000 - 6 * 3_600_000);
    const earlier = new Date(later.getTime() - 2 * 3_600_000);
    await page.goto(`${stack!.url}/dashboard?token=${readToken}&since=${later.toISOString()}&until=${earlier.toISOString()}`);
    await page.waitForSelector('body[data-rendered=fleet]');
    await page.locator('#zoom-out').click();
    const address = () => new URL(page.url()).searchParams;
    await until('a new range', async () => address().get('since') !== later.toISOString(), 5_000);
    const since = Date.parse(address().get('since')!);
    const until_ = Date.parse(address().get('until')!);
    expect(until_ - since).toBe(4 * 3_600_000);
    expect(since).toBe(earlier.getTime() - 3_600_000);
    // Typed inverted, the form says so instead of applying it.
    await page.selectOption('#timerange [name=since]', 'custom');
    await page.fill('#timerange [name=from]', '1h');
    await page.fill('#timerange [name=until]', '3h');
    await page.locator('#timerange button[type=submit]').click();
    await page.locator('#range-text', { hasText: 'from must be before until' }).waitFor();
    await page.close();
  });

  it('shows the audit table’s times with their age, and its summaries readable on a phone', async () => {
    const desk = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await desk.goto(`${stack!.url}/dashboard/audit?token=${readToken}`);
    expect(await desk.locator('#audit td.at').first().innerText()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\s+\((just now|\d+ (s|min|h) ago)\)$/);
    expect(await desk.locator('#silences td.at').first().innerText()).toMatch(/UTC\s+\(in 365 days\)$/);
    await desk.close();
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await phone.goto(`${stack!.url}/dashboard/audit?token=${readToken}`);
    const summaries = await phone
      .locator('#audit td.summary')
      .evaluateAll((cells) => cells.map((c) => (c as unknown as { clientWidth: number }).clientWidth));
    expect(summaries.length).toBeGreaterThan(0);
    expect(Math.min(...summaries), 'each summary as wide as the screen allows').toBeGreaterThanOrEqual(300);
    expect(await phone.evaluate(() => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await phone.close();
  });
});
