import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { optIn } from '../metrics/observability-bed.js';
import { until } from '../support/wait.js';
import { startConsoleStack, type ConsoleStack } from './console-reflex.js';
import { launchChromium, requireChromium } from './headless-chromium.js';

const readToken = `loop-trail-read-${Math.random().toString(36).slice(2)}`;

/** The page's globals as the evaluated functions use them (the tests compile without the DOM typings). */
type Marked = { __opened?: boolean };

/** Issue #42 item 6: an open crash-loop trail closed at the loop's next crash. */
describe('an open crash-loop trail (headless Chromium)', () => {
  let stack: ConsoleStack | undefined;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    requireChromium();
    // The bundled rule's back-off between the loop's restarts, read when the rules load: short, so the loop crashes again in seconds.
    const backoff = process.env.REFLEX_CRASHLOOP_BACKOFF_MS;
    process.env.REFLEX_CRASHLOOP_BACKOFF_MS = '500';
    stack = await startConsoleStack({
      instances: [{ name: 'loop-1', config: optIn }],
      config: { dashboardToken: readToken },
    }).finally(() => {
      if (backoff === undefined) delete process.env.REFLEX_CRASHLOOP_BACKOFF_MS;
      else process.env.REFLEX_CRASHLOOP_BACKOFF_MS = backoff;
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${stack.url}/dashboard?token=${readToken}`);
    await page.waitForSelector('body[data-rendered=fleet]');
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  /** Crashes loop-1 and waits until Reflex has started it again. */
  const crashAndHeal = async () => {
    const sim = stack!.sim;
    sim.controls.crash('loop-1');
    await until('loop-1 stopped', async () => sim.controls.statusCode('loop-1') !== 103, 10_000, 20);
    await until('loop-1 started again', async () => sim.controls.statusCode('loop-1') === 103, 60_000, 100);
  };
  const loop = () => page.locator('li.incident.crash-loop[data-instance="loop-1"]');
  const count = async () => Number(/crash loop: (\d+) incidents/.exec(await loop().locator('.kind').innerText())?.[1] ?? 0);

  it('stays open, the same entry, when the loop crashes again, and shows the newest crash’s records', async () => {
    await crashAndHeal();
    await crashAndHeal();
    await loop().waitFor({ timeout: 20_000 });
    const before = await count();
    const button = loop().getByRole('button', { name: /^Audit trail of loop-1/ });
    await button.click();
    await loop().locator('.trail tbody tr').first().waitFor({ timeout: 10_000 });
    await loop().evaluate((el) => ((el as unknown as Marked).__opened = true));

    await crashAndHeal();
    await until('the loop counts the new crash', async () => (await count()) > before, 20_000, 100);
    expect(await loop().count()).toBe(1);
    expect(await loop().evaluate((el) => (el as unknown as Marked).__opened === true), 'the same entry').toBe(true);
    expect(await button.getAttribute('aria-expanded')).toBe('true');
    expect(await loop().locator('.trail').isVisible()).toBe(true);
    // The open trail follows the loop to its newest crash.
    const newest = (await loop().getAttribute('data-correlation'))!;
    await until(
      'the trail of the newest crash',
      async () =>
        (await loop().locator('.trail tbody tr').count()) > 0 && (await page.request.get(`${stack!.url}/dashboard/console/trail?id=${newest}`)).ok(),
      10_000,
    );
  });
});
