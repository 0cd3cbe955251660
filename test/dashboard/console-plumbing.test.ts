import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startObservabilityBed, type ObservabilityBed } from '../metrics/observability-bed.js';

const chromiumPath = process.env.REFLEX_CHROMIUM ?? '/usr/bin/chromium';
const readToken = `plumbing-read-${Math.random().toString(36).slice(2)}`;

/** The pages around the console: nothing leaves the machine (air-gapped sites), and the audit page reads on a phone and links back. */
describe('the dashboard pages work air-gapped and on a phone', () => {
  let bed: ObservabilityBed;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(chromiumPath)) throw new Error(`no Chromium at ${chromiumPath}: apt-get install chromium (CI does), or set REFLEX_CHROMIUM`);
    bed = await startObservabilityBed({ rulesDir: 'rules', instances: [{ name: 'web-1' }], config: { dashboardToken: readToken } });
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  });

  afterAll(async () => {
    await browser?.close();
    await bed?.stop();
  });

  it('sends no request off the machine from the console or the queues page', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const outside: string[] = [];
    await context.route('**/*', (route) => {
      const host = new URL(route.request().url()).hostname;
      if (host === '127.0.0.1' || host === 'localhost' || route.request().url().startsWith('data:')) return route.continue();
      outside.push(route.request().url());
      return route.abort();
    });
    const page = await context.newPage();
    await page.goto(`${bed.url}/dashboard?token=${readToken}`);
    await page.waitForSelector('body[data-rendered=fleet]');
    await page.goto(`${bed.url}/dashboard/queues`);
    await page.waitForLoadState('networkidle');
    await page
      .getByText(/actions/i)
      .first()
      .waitFor();
    await page.goto(`${bed.url}/dashboard/audit`);
    await page.waitForLoadState('networkidle');
    expect(outside).toEqual([]);
    await context.close();
  });

  it('shows the audit page at a phone’s width without sideways scrolling, with a link back to the console', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true });
    await phone.goto(`${bed.url}/dashboard/audit?token=${readToken}`);
    expect(await phone.locator('meta[name=viewport]').count()).toBe(1);
    expect(
      await phone.evaluate(
        () => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth,
      ),
    ).toBeLessThanOrEqual(390);
    await phone.screenshot({ path: 'docs/screenshots/audit-phone.png' });
    await phone.getByRole('link', { name: '← Console' }).click();
    await phone.waitForSelector('body[data-rendered=fleet]');
    expect(new URL(phone.url()).pathname).toBe('/dashboard');
    await phone.close();
  });
});
