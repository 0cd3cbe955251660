import { setTimeout as delay } from 'node:timers/promises';
import { execFileSync } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { optIn } from '../metrics/observability-bed.js';
import { ownRedis, type OwnRedis } from '../support/own-redis.js';
import { until } from '../support/wait.js';
import { startConsoleStack, type ConsoleStack } from './console-reflex.js';
import { launchChromium, requireChromium } from './headless-chromium.js';

/** The page's globals as the evaluated function uses them (the tests compile without the DOM typings). */
interface PageGlobals {
  document: { getElementById(id: string): { dataset: Record<string, string | undefined> } | null };
}

const readToken = `redis-down-read-${Math.random().toString(36).slice(2)}`;
/** The panels that show what Reflex reads from Redis. */
const redisPanels = ['fleet', 'incidents', 'alerts', 'dlq', 'plots', 'executions'];
/** How soon the page must say so, as issue #42 asks: within 5 s of Redis failing or coming back. */
const withinMs = 5_000;

describe('console when Redis fails (headless Chromium, a redis-server of the test stopped and started again)', () => {
  let redis: OwnRedis;
  let stack: ConsoleStack | undefined;
  let browser: Browser;
  let page: Page;
  let redisPid: number;

  const panelStates = () =>
    page.evaluate((ids) => ids.map((id) => (globalThis as unknown as PageGlobals).document.getElementById(id)?.dataset.state ?? ''), redisPanels);
  /** Waits until every Redis panel is in `state`, and answers how long that took. */
  const allPanels = async (state: string, from: number) => {
    await until(`every panel ${state}`, async () => (await panelStates()).every((s) => s === state), withinMs + 2_000, 100);
    return Date.now() - from;
  };

  beforeAll(async () => {
    requireChromium();
    redis = await ownRedis();
    redisPid = Number(/process_id:(\d+)/.exec(execFileSync('redis-cli', ['-u', redis.url, 'info', 'server'], { encoding: 'utf8' }))![1]);
    stack = await startConsoleStack({
      redisUrl: redis.url,
      instances: ['web-1', 'web-2'].map((name) => ({ name, config: optIn })),
      config: { dashboardToken: readToken },
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${stack.url}/dashboard?token=${readToken}`);
    await page.waitForSelector('body[data-rendered=fleet]');
    await page.locator('#live', { hasText: '● live' }).waitFor();
    await allPanels('fresh', Date.now());
  });

  afterAll(async () => {
    if (redisPid) {
      try {
        process.kill(redisPid, 'SIGCONT');
      } catch {
        // Gone already.
      }
    }
    await browser?.close();
    await stack?.stop();
    await redis?.stop();
    redis?.remove();
  });

  it('marks every panel stale with the age of its data within 5 s of Redis hanging, bounds the reads, and recovers within 5 s', async () => {
    const stoppedAt = Date.now();
    process.kill(redisPid, 'SIGSTOP');
    const staleAfter = await allPanels('stale', stoppedAt);
    expect(staleAfter).toBeLessThanOrEqual(withinMs);
    expect(await page.locator('#live').innerText()).not.toContain('● live');
    expect(await page.locator('#live').innerText()).toContain('Redis unreachable');
    // Each panel says how old what it shows is.
    for (const id of redisPanels)
      expect(await page.locator(`#${id}-state`).innerText()).toMatch(/data from \d\d:\d\d:\d\d UTC \((\d+ s ago|a moment ago)\): Redis unreachable/);
    // The server's reads answer (503) instead of hanging while Redis does.
    for (const path of ['incidents', 'executions', 'dlq', 'timeline?instance=web-1']) {
      const asked = Date.now();
      const r = await page.request.get(`${stack!.url}/dashboard/console/${path}`, { timeout: 10_000 });
      expect(Date.now() - asked, path).toBeLessThan(4_500);
      expect(r.status(), path).toBe(503);
    }
    expect((await page.request.get(`${stack!.url}/dashboard/console/health`, { timeout: 10_000 })).status()).toBe(200);

    const contAt = Date.now();
    process.kill(redisPid, 'SIGCONT');
    expect(await allPanels('fresh', contAt)).toBeLessThanOrEqual(withinMs);
    await page.locator('#live', { hasText: '● live' }).waitFor({ timeout: withinMs });
  });

  it('does the same when Redis goes away and comes back (SIGTERM, then started again on its port)', async () => {
    const stoppedAt = Date.now();
    await redis.stop();
    expect(await allPanels('stale', stoppedAt)).toBeLessThanOrEqual(withinMs);
    expect(await page.locator('#fleet-state').innerText()).toMatch(/data from .*: Redis unreachable/);
    await redis.start();
    redisPid = Number(/process_id:(\d+)/.exec(execFileSync('redis-cli', ['-u', redis.url, 'info', 'server'], { encoding: 'utf8' }))![1]);
    const startedAt = Date.now();
    expect(await allPanels('fresh', startedAt)).toBeLessThanOrEqual(withinMs);
    await page.locator('#live', { hasText: '● live' }).waitFor({ timeout: withinMs });
  });

  it('stops, after Redis was restarted under it, within its shutdown time (an approval settle round or a worker once waited on a Redis that no longer answered)', async () => {
    await browser.close();
    const stopping = stack!.stop();
    stack = undefined;
    const stopped = await Promise.race([stopping.then(() => true), delay(20_000).then(() => false)]);
    expect(stopped, 'the stack stopped within 20 s').toBe(true);
  });
});
