import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { ReflexHandle } from '../../src/app/start-reflex.js';
import { startConsoleStack, type ConsoleStack } from './console-reflex.js';
import type { RedisConnection } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import type { RunningSimulator } from '../../src/simulator/simulator.js';
import { optIn } from '../metrics/observability-bed.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { until } from '../support/wait.js';

const chromiumPath = process.env.REFLEX_CHROMIUM ?? '/usr/bin/chromium';
const readToken = `trust-read-${Math.random().toString(36).slice(2)}`;
const writeToken = `trust-write-${Math.random().toString(36).slice(2)}`;
const shots = 'docs/screenshots';

/** The page's globals as the evaluated functions use them (the tests compile without the DOM typings). */
interface PageGlobals {
  document: {
    activeElement: { marked?: string; getAttribute(name: string): string | null } | null;
    documentElement: { scrollWidth: number };
  };
}

/**
 * What an on-call operator relies on at 3 a.m.: nothing fires without a confirmation naming the
 * instance, nothing moves under the pointer, a live update keeps what is open and focused, every
 * time says its date, year and distance, and every panel says when its data is stale or failed.
 */
describe('a console an operator can trust (headless Chromium against a running Reflex on the simulator)', () => {
  let stack: ConsoleStack | undefined;
  let sim: RunningSimulator;
  let reflex: ReflexHandle | undefined;
  let url: string;
  let browser: Browser;
  let page: Page;
  let redis: RedisConnection;
  let audit: AuditLog;

  beforeAll(async () => {
    if (!existsSync(chromiumPath)) throw new Error(`no Chromium at ${chromiumPath}: apt-get install chromium (CI does), or set REFLEX_CHROMIUM`);
    const prefix = uniquePrefix('console-trust');
    stack = await startConsoleStack({
      simulator: { timings: { startMs: 300, stopMs: 100, stopHookMs: 100, crashLoopUptimeMs: 300 } },
      instances: [
        ...['web-1', 'web-2', 'loop-1'].map((name) => ({ name, config: optIn })),
        ...['inst-00042', 'inst-00420', 'batch-1'].map((name) => ({ name, config: {} })),
      ],
      prefix,
      config: { actionAttempts: 2, dashboardToken: readToken, dashboardWriteToken: writeToken },
    });
    ({ sim, reflex, url } = stack);
    redis = redisClient();
    audit = new AuditLog(redis, keySpace(prefix).audit);
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${url}/dashboard?token=${readToken}`);
    await page.waitForSelector('body[data-rendered=fleet]');
    await page.locator('#live', { hasText: 'live' }).waitFor();
    await page.fill('#write-token', writeToken);
    await page.fill('#actor', 'alice');
    mkdirSync(shots, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    redis?.disconnect();
  });

  const row = (name: string) => page.locator(`#fleet-table tr[data-key$="/${name}"]`);
  const healDecisions = async (instance: string) => (await audit.read({ instance })).filter((r) => r.rule === 'heal' && r.type === 'decision');
  const shownOrder = () =>
    page.locator('#fleet-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-key')!.split('/').at(-1)));

  it('asks before a heal, naming the instance and what will happen; Cancel does nothing', async () => {
    await page.getByRole('button', { name: 'Heal batch-1', exact: true }).waitFor({ state: 'detached' }); // Running: no heal offered
    sim.controls.crash('batch-1'); // no opt-in: stays Stopped
    const heal = page.getByRole('button', { name: 'Heal batch-1', exact: true });
    await heal.click();
    const dialog = page.getByRole('dialog', { name: 'Heal batch-1?' });
    await dialog.waitFor();
    expect(await dialog.innerText()).toMatch(/start of batch-1 \(project default on .*\), now Stopped[\s\S]*audited under your name/);
    await page.screenshot({ path: `${shots}/console-confirm.png` });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await healDecisions('batch-1')).toEqual([]);

    await heal.click();
    await dialog.getByRole('button', { name: 'Heal batch-1' }).click();
    await page.locator('#fleet-table tr[data-key$="/batch-1"][data-status=Running]').waitFor({ timeout: 10_000 });
    expect(await healDecisions('batch-1')).toEqual([expect.objectContaining({ origin: 'console', actor: 'alice' })]);
  });

  it('finds an instance by its bare name and compares numbers in the filter', async () => {
    await page.fill('#filters [name=filter]', 'inst-00042');
    await page.locator('#filters button[type=submit]').click();
    await until('only inst-00042', async () => ((await shownOrder()).join() === 'inst-00042' ? true : undefined));
    await page.fill('#filters [name=filter]', 'restarts gt 0 or name eq batch-.*');
    await page.locator('#filters button[type=submit]').click();
    await until('batch-1 alone', async () => ((await shownOrder()).join() === 'batch-1' ? true : undefined));
    await page.fill('#filters [name=filter]', '');
    await page.locator('#filters button[type=submit]').click();
    await until('all six', async () => ((await shownOrder()).length === 6 ? true : undefined));
  });

  it('keeps an open audit trail open and the focus where it was through live updates', async () => {
    sim.controls.crash('web-1');
    const item = page.locator('li.incident[data-instance="web-1"]').filter({ hasText: 'healed' }).first();
    await item.waitFor({ timeout: 15_000 });
    const trailButton = item.getByRole('button', { name: /^Audit trail of web-1/ });
    await trailButton.click();
    await item.locator('.trail tbody tr').first().waitFor();
    const silenceWeb2 = page.getByRole('button', { name: 'Silence web-2', exact: true });
    await silenceWeb2.focus();
    // A mark on the node itself (a property: a patch carries attributes over, never properties).
    await page.evaluate(() => {
      (globalThis as unknown as PageGlobals).document.activeElement!.marked = 'yes';
    });
    // A crash of web-2: its row and the incidents re-read, live.
    sim.controls.crash('web-2');
    await page.locator('li.incident[data-instance="web-2"]').filter({ hasText: 'healed' }).first().waitFor({ timeout: 15_000 });
    await page.locator('#fleet-table tr[data-key$="/web-2"][data-status=Running]').waitFor({ timeout: 10_000 });
    expect(await trailButton.getAttribute('aria-expanded')).toBe('true');
    expect(await item.locator('.trail').isVisible()).toBe(true);
    expect(await item.locator('.trail tbody tr').count()).toBeGreaterThan(0);
    // The very element focused before, not a new one with the same name.
    // The focus is still on Silence web-2 (not fallen to <body>).
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.getAttribute('aria-label'))).toBe(
      'Silence web-2',
    );
  });

  it('keeps the rows in place while the pointer is over the table, and offers the new order', async () => {
    await page.locator('#fleet-table tr[data-key$="/web-2"] td[data-label=project]').hover();
    const before = await shownOrder();
    sim.controls.crash('inst-00420'); // no opt-in: it stays down, so it sorts first
    const bar = page.locator('#changes-bar');
    await bar.waitFor({ state: 'visible', timeout: 10_000 });
    expect(await bar.innerText()).toMatch(/^\d+ changes? in the order — show$/);
    expect(await shownOrder()).toEqual(before);
    expect(await row('inst-00420').getAttribute('data-status')).toBe('Stopped'); // updated in place
    // Taken from the keyboard, the pointer left on the table: a pointer moved off it lets the next
    // live update show the new order by itself (as it should), which can hide the bar before a click lands.
    await bar.focus();
    await page.keyboard.press('Enter');
    await until('the new order', async () => ((await shownOrder())[0] === 'inst-00420' ? true : undefined));
    expect(await bar.isHidden()).toBe(true);
  });

  it('pauses live updates on request and catches up on resume', async () => {
    await page.mouse.move(5, 5);
    await page.getByRole('button', { name: 'Pause live updates' }).click();
    sim.controls.crash('inst-00042');
    const resume = page.getByRole('button', { name: /^Resume live updates \(\d+ waiting\)$/ });
    await resume.waitFor({ timeout: 10_000 });
    expect(await row('inst-00042').getAttribute('data-status')).toBe('Running');
    expect(await page.locator('#live').innerText()).toBe('⏸ paused');
    await resume.click();
    await page.locator('#fleet-table tr[data-key$="/inst-00042"][data-status=Stopped]').waitFor({ timeout: 10_000 });
  });

  it('shows a crash loop as one incident with its crashes inside', async () => {
    sim.controls.crashLoop('loop-1');
    sim.controls.crash('loop-1'); // every restart Reflex makes crashes again
    const loop = page.locator('li.incident.crash-loop[data-instance="loop-1"]');
    await loop.locator('.kind', { hasText: /crash loop: [2-9] incidents/ }).waitFor({ timeout: 20_000 });
    sim.controls.clearFaults('loop-1');
    expect(await page.locator('li.incident[data-instance="loop-1"]').count()).toBe(1);
    await loop.locator('summary').click();
    expect(await loop.locator('details.loop li').count()).toBeGreaterThanOrEqual(1);
    await page.selectOption('#range [name=kind]', 'crash-loop');
    await page.locator('#range button[type=submit]').click();
    await until('only the loop', async () =>
      (await page.locator('li.incident').evaluateAll((l) => l.map((x) => x.getAttribute('data-instance')))).join() === 'loop-1' ? true : undefined,
    );
    await page.locator('#incidents').screenshot({ path: `${shots}/console-crash-loop.png` });
    await page.selectOption('#range [name=kind]', '');
    await page.locator('#range button[type=submit]').click();
  }, 40_000);

  it('previews what a silence matches and wants a reason in words for a broad one', async () => {
    await page.fill('#silence-form [name=instance]', '');
    await page.fill('#silence-form [name=project]', 'default');
    await page.fill('#silence-form [name=duration]', '365d');
    await page.fill('#silence-form [name=reason]', 'x');
    await page.locator('#silence-preview', { hasText: 'matches 6 instances now' }).waitFor();
    await page.locator('#silence-form button[type=submit]').click();
    await page.locator('#action-result', { hasText: 'give a reason of at least 3 words' }).waitFor();
    expect(await page.locator('#confirm').isVisible()).toBe(false);
    // The server holds the same rule (a script, an old page).
    const refused = await page.evaluate(
      async (t) =>
        fetch('/dashboard/console/silences', {
          method: 'POST',
          headers: { Authorization: `Bearer ${t}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ scope: { project: 'default' }, duration: '365d', reason: 'x' }),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error: string } })),
      writeToken,
    );
    expect(refused).toEqual({ status: 400, body: { error: expect.stringMatching(/^reason: it matches 6 instances now/) } });
    expect((await audit.read({})).filter((r) => r.type === 'silence')).toEqual([]);
  });

  it('shows a silence ending next year with its year and "in 364 days"', async () => {
    await page.fill('#silence-form [name=project]', '');
    await page.fill('#silence-form [name=instance]', 'batch-1');
    await page.fill('#silence-form [name=duration]', '364d');
    await page.fill('#silence-form [name=reason]', 'decommissioned next year, ticket OPS-1');
    await page.locator('#silence-form button[type=submit]').click();
    const dialog = page.getByRole('dialog', { name: 'Silence batch-1 for 364d?' });
    await dialog.waitFor();
    expect(await dialog.innerText()).toMatch(/matches 1 instance now: default\/batch-1/);
    await dialog.getByRole('button', { name: 'Silence batch-1' }).click();
    const item = page.locator('#silence-list li', { hasText: 'decommissioned' });
    await item.waitFor();
    const until364 = new Date(Date.now() + 364 * 86_400_000);
    expect(await item.innerText()).toContain(`until ${until364.toISOString().slice(0, 10)}`);
    expect(await item.innerText()).toContain('UTC (in 364 days)');
    const end = page.getByRole('button', { name: 'End silence of instance=batch-1' });
    await end.click();
    await page.getByRole('dialog', { name: 'End the silence of instance=batch-1?' }).getByRole('button', { name: 'Cancel' }).click();
    expect(await item.count()).toBe(1);
  });

  it('writes times in the browser’s zone when asked, and remembers the choice', async () => {
    const ny = await browser.newPage({ viewport: { width: 1440, height: 900 }, timezoneId: 'America/New_York' });
    await ny.goto(`${url}/dashboard?token=${readToken}`);
    await ny.waitForSelector('body[data-rendered=fleet]');
    await ny.selectOption('#tz', 'local');
    await ny.locator('#silence-list li', { hasText: /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d E[SD]T \(in 364 days\)/ }).waitFor();
    await ny.reload();
    await ny.waitForSelector('body[data-rendered=fleet]');
    expect(await ny.inputValue('#tz')).toBe('local');
    await ny.locator('#silence-list li', { hasText: /E[SD]T/ }).waitFor();
    await ny.close();
  });

  it('says on its panel when a read fails, instead of showing an empty box', async () => {
    await page.route(/\/dashboard\/console\/incidents\?/, (r) =>
      r.fulfill({ status: 500, contentType: 'application/json', body: '{"error":"redis unavailable"}' }),
    );
    await page.route(/\/dashboard\/console\/dlq$/, (r) =>
      r.fulfill({ status: 503, contentType: 'application/json', body: '{"error":"redis unavailable"}' }),
    );
    await page.locator('#range button[type=submit]').click();
    await page.locator('#incidents-state', { hasText: 'incidents: could not read (500: redis unavailable)' }).waitFor();
    sim.controls.crash('web-1'); // an audit change re-reads the dead letters
    await page.locator('#dlq-state', { hasText: 'dead letters: could not read (503: redis unavailable)' }).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: `${shots}/console-panel-error.png` });
    await page.unroute(/\/dashboard\/console\/incidents\?/);
    await page.unroute(/\/dashboard\/console\/dlq$/);
    await page.locator('#range button[type=submit]').click();
    await page.locator('#incidents-state').waitFor({ state: 'hidden' });
  });

  it('marks every panel stale within 5 s of Reflex stopping', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true });
    await phone.goto(`${url}/dashboard?token=${readToken}`);
    await phone.waitForSelector('body[data-rendered=fleet]');
    expect(await phone.evaluate(() => (globalThis as unknown as PageGlobals).document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    // Problems first on a phone: health and incidents above the fleet.
    const top = async (sel: string) => (await phone.locator(sel).boundingBox())!.y;
    expect(await top('#health')).toBeLessThan(await top('#fleet'));
    expect(await top('#incidents')).toBeLessThan(await top('#fleet'));
    await phone.screenshot({ path: `${shots}/console-phone-problems-first.png` });
    await page.locator('#live', { hasText: 'live' }).waitFor();
    await reflex!.stop();
    reflex = undefined;
    await page.locator('#fleet-state', { hasText: /^data from \d\d:\d\d:\d\d UTC \([^)]+\): Reflex unreachable/ }).waitFor({ timeout: 5_000 });
    for (const panel of ['health', 'incidents', 'dlq', 'alerts', 'plots'])
      expect(await page.locator(`#${panel}-state`).innerText()).toMatch(/Reflex unreachable/);
    expect(await page.locator('#live').innerText()).toMatch(/unreachable/);
    await page.screenshot({ path: `${shots}/console-stale.png` });
    await phone.locator('#fleet-state', { hasText: 'Reflex unreachable' }).waitFor({ timeout: 5_000 });
    await phone.screenshot({ path: `${shots}/console-phone-stale.png` });
    await phone.close();
  });
});
