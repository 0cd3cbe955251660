import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { ReflexHandle } from '../../src/app/start-reflex.js';
import { startConsoleStack, type ConsoleStack } from './console-reflex.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import type { RedisConnection } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import type { RunningSimulator } from '../../src/simulator/simulator.js';
import { optIn } from '../metrics/observability-bed.js';
import { startRecordingServer, type RecordingServer } from '../notify/recording-server.js';
import { testWebhookSecret } from '../notify/notifier-fixture.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { until } from '../support/wait.js';
import { launchChromium } from './headless-chromium.js';

const readToken = `history-read-${Math.random().toString(36).slice(2)}`;
const writeToken = `history-write-${Math.random().toString(36).slice(2)}`;
const shots = 'docs/screenshots';

/**
 * What happened, over the time the operator picks: every execution (rule, schedule, operator) with
 * a safe re-run, a time range in the address with zoom on the plot, an instance's state over time
 * with what was done to it, why an alert fires and that it ends when the action is retried, and a
 * "since" that means the time in the current status.
 */
describe('the console shows what happened and when (headless Chromium against a running Reflex on the simulator)', () => {
  let stack: ConsoleStack | undefined;
  let sim: RunningSimulator;
  let reflex: ReflexHandle | undefined;
  let hook: RecordingServer;
  let url: string;
  let browser: Browser;
  let page: Page;
  let redis: RedisConnection;
  let audit: AuditLog;
  let prefix: string;

  beforeAll(async () => {
    hook = await startRecordingServer();
    prefix = uniquePrefix('console-history');
    process.env.REFLEX_TEST_HOOK_SECRET = testWebhookSecret;
    stack = await startConsoleStack({
      simulator: { timings: { startMs: 300, stopMs: 100, stopHookMs: 100, taskMs: 50 } },
      instances: [...['web-1', 'db-1'].map((name) => ({ name, config: optIn })), ...['batch-1', 'snap-1'].map((name) => ({ name, config: {} }))],
      prefix,
      config: {
        actionAttempts: 2,
        dashboardToken: readToken,
        dashboardWriteToken: writeToken,
        notifications: {
          receivers: [{ kind: 'webhook', name: 'hook', url: hook.url, secretEnv: 'REFLEX_TEST_HOOK_SECRET' }],
          route: { receiver: 'hook', groupWaitMs: 100, groupIntervalMs: 300 },
        },
      },
    });
    ({ sim, reflex, url } = stack);
    redis = redisClient();
    audit = new AuditLog(redis, keySpace(prefix).audit);
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${url}/dashboard?token=${readToken}`);
    await page.waitForSelector('body[data-rendered=fleet]');
    await page.locator('#live', { hasText: 'live' }).waitFor();
    await page.fill('#write-token', writeToken);
    await page.fill('#actor', 'alice');
    mkdirSync(shots, { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await hook?.close();
    redis?.disconnect();
  });

  const row = (name: string) => page.locator(`#fleet-table tr[data-key$="/${name}"]`);
  const address = () => Object.fromEntries(new URL(page.url()).searchParams);
  const healDecisions = async (instance: string) => (await audit.read({ instance })).filter((r) => r.rule === 'heal' && r.type === 'decision');

  it('keeps "since" at the start of the status through a snapshot’s pause and resume', { timeout: 60_000 }, async () => {
    const since = () => row('snap-1').locator('td[data-label=since] time').getAttribute('datetime');
    await row('snap-1').locator('td[data-label=since] time').waitFor();
    const before = await since();
    const client = new InstanceClient(parseTarget(`unix://${sim.socketPath}`));
    await (await client.createSnapshot('snap-1', { name: 'before-upgrade' })).wait();
    // The tracker has taken the pause and the resume: its entry is Running again, after a Frozen.
    await until(
      'the resume tracked',
      async () => {
        const raw = await redis.hget(keySpace(prefix).state(reflex!.target), 'default/snap-1');
        const entry = raw ? (JSON.parse(raw) as { status: number; prev?: { status: number } }) : undefined;
        return entry?.status === 103 && entry.prev?.status === 110 ? true : undefined;
      },
      30_000,
    );
    // A snapshot of the fleet is served up to a few seconds old: the one that counts began after the resume was tracked.
    const resumed = Date.now();
    await until(
      'a fleet read begun after the resume',
      async () => {
        const r = await fetch(`${url}/dashboard/console/fleet?filter=snap-1`, { headers: { authorization: `Bearer ${readToken}` } });
        const d = (await r.json()) as { at: number; rows: { statusCode: number; since?: number }[] };
        return d.at > resumed && d.rows[0]?.since !== undefined ? d.rows[0] : undefined;
      },
      30_000,
    ).then((r) => {
      expect(r.statusCode).toBe(103);
      expect(new Date(r.since!).toISOString()).toBe(before);
    });
    await page.locator('#filters button[type=submit]').click(); // a fresh read of the fleet, no older than the one above
    await row('snap-1').and(page.locator('[data-status=Running]')).waitFor();
    expect(await since()).toBe(before);
  });

  it('lists every execution — a rule’s, an operator’s — with who started it, result and duration, filterable, with a confirmed re-run', async () => {
    sim.controls.crash('web-1'); // opt-in: a rule starts it
    sim.controls.crash('batch-1'); // no opt-in: stays Stopped until an operator heals it
    await page.locator('#fleet-table tr[data-key$="/batch-1"][data-status=Stopped]').waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Heal batch-1', exact: true }).click();
    await page.getByRole('dialog', { name: 'Heal batch-1?' }).getByRole('button', { name: 'Heal batch-1' }).click();
    const ruleRun = page.locator('#exec-table tr[data-source=rule][data-result=done]').filter({ hasText: 'web-1' });
    const operatorRun = page.locator('#exec-table tr[data-source=operator][data-result=done]').filter({ hasText: 'batch-1' });
    await ruleRun.first().waitFor({ timeout: 20_000 });
    await operatorRun.first().waitFor({ timeout: 20_000 });
    expect(await operatorRun.first().innerText()).toMatch(
      /start[\s\S]*alice[\s\S]*heal[\s\S]*PUT \/1\.0\/instances\/batch-1\/state[\s\S]*done[\s\S]*\d+(\.\d)? (ms|s)/,
    );
    expect(await ruleRun.first().locator('td[data-label=by]').innerText()).toMatch(/rule\s+\S+/);

    await page.selectOption('#exec-filters [name=source]', 'operator');
    await page.locator('#exec-filters button[type=submit]').click();
    await until('operators’ executions only', async () => {
      const sources = await page.locator('#exec-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-source')));
      return sources.length > 0 && sources.every((s) => s === 'operator') ? true : undefined;
    });
    expect(address()['x-source']).toBe('operator');
    await page.locator('#executions').screenshot({ path: `${shots}/console-executions.png` });

    const rerun = operatorRun.first().getByRole('button', { name: 'Re-run start on batch-1' });
    await rerun.click();
    const dialog = page.getByRole('dialog', { name: 'Re-run start on batch-1?' });
    await dialog.waitFor();
    expect(await dialog.innerText()).toMatch(/start of batch-1 .*changes nothing/);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await healDecisions('batch-1')).toHaveLength(1);
    await rerun.click();
    await dialog.getByRole('button', { name: 'Re-run start on batch-1' }).click();
    await until('a second heal, audited under alice', async () => ((await healDecisions('batch-1')).length === 2 ? true : undefined));
    expect((await healDecisions('batch-1'))[1]).toMatchObject({ origin: 'console', actor: 'alice' });
    // No re-run for an action that is not safe to repeat, nor for a schedule's.
    expect(await page.locator('#exec-table tr:not([data-source=operator]) button[data-rerun]').count()).toBe(0);
    await page.selectOption('#exec-filters [name=source]', '');
    await page.locator('#exec-filters button[type=submit]').click();
  });

  it('shows an instance’s state over time with Reflex’s and the operator’s actions marked, from the fleet row and from the incident', async () => {
    await row('batch-1').getByRole('link', { name: 'State timeline of batch-1' }).click();
    const body = page.locator('#timeline-body');
    await body.locator('g[data-status=Stopped]').waitFor({ timeout: 10_000 });
    await body.locator('g[data-status=Running]').first().waitFor();
    await body.locator('li[data-mark=operator]', { hasText: 'alice: start → done' }).first().waitFor({ timeout: 10_000 });
    expect(address().timeline).toBe('batch-1');

    const incident = page.locator('li.incident[data-instance="web-1"]').first();
    await incident.getByRole('link', { name: 'State timeline of web-1' }).click();
    await page.locator('#timeline-h', { hasText: 'State timeline of web-1' }).waitFor();
    await body.locator('li[data-mark=incident]').first().waitFor({ timeout: 10_000 });
    await body
      .locator('li[data-mark=reflex]', { hasText: /start → done|restart → done/ })
      .first()
      .waitFor();
  });

  it('picks absolute and relative ranges, zooms on the plot by dragging, and keeps the range in the address', async () => {
    await page.fill('#timerange [name=from]', '3h');
    await page.fill('#timerange [name=until]', '2h');
    await page.locator('#timerange button[type=submit]').click();
    await page.locator('#exec-table', { hasText: 'No execution matches in this range' }).waitFor();
    await page.locator('#incident-list', { hasText: 'No incident in this range' }).waitFor();
    expect(address()).toMatchObject({ since: '3h', until: '2h' });

    await page.selectOption('#timerange [name=since]', '15m');
    await page.locator('#exec-table tbody tr').first().waitFor();
    const plot = page.locator('#zoom-plot');
    await plot.scrollIntoViewIfNeeded();
    const box = (await plot.boundingBox())!;
    // The last fifth of the quarter hour: where everything here happened.
    await page.mouse.move(box.x + box.width * 0.8, box.y + box.height * 0.4);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.9, box.y + box.height * 0.4, { steps: 5 });
    await page.mouse.move(box.x + box.width * 0.99, box.y + box.height * 0.4, { steps: 5 });
    await page.mouse.up();
    await until('an absolute range in the address', async () => (/^\d{4}-\d\d-\d\dT/.test(address().until ?? '') ? true : undefined));
    const { since, until: to } = address();
    const width = Date.parse(to!) - Date.parse(since!);
    expect(width).toBeGreaterThan(60_000);
    expect(width).toBeLessThan(5 * 60_000);
    await page.locator('#range-text', { hasText: /→/ }).waitFor();
    await page.locator('#exec-table tbody tr').first().waitFor();
    await page.locator('#timeline-body g[data-status=Stopped]').waitFor();
    await page.locator('#timeline').screenshot({ path: `${shots}/console-timeline.png` });

    // A link with the range opens the same range.
    const shared = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const link = new URL(page.url());
    link.searchParams.set('token', readToken);
    await shared.goto(link.href);
    await shared.waitForSelector('body[data-rendered=fleet]');
    expect(await shared.inputValue('#timerange [name=until]')).toBe(to);
    expect(await shared.inputValue('#timerange [name=since]')).toBe('custom');
    await shared.close();

    await page.locator('#zoom-out').click();
    await until('a wider range', async () => {
      const a = address();
      const w = (a.until ? Date.parse(a.until) : Date.now()) - (a.since && /^\d{4}/.test(a.since) ? Date.parse(a.since) : 0);
      return a.since !== since && w >= 2 * width - 2_000 ? true : undefined;
    });
    await page.selectOption('#timerange [name=since]', '24h');
    await until('the default range', async () => (address().since === undefined && address().until === undefined ? true : undefined));
  });

  it('says why an action.failed alert fires, and resolves it when the retried action succeeds', async () => {
    sim.controls.failNext('db-1', 10, 'disk quota exceeded');
    sim.controls.crash('db-1');
    const alert = page.locator('#alerts-body li[data-alert-kind="action.failed"][data-instance=db-1]');
    await alert.waitFor({ timeout: 30_000 });
    await alert.locator('summary', { hasText: 'Why is it firing?' }).click();
    expect(await alert.locator('details.why').innerText()).toMatch(/resolves when the instance is Running again or a later action on it ends done/);
    await alert.getByRole('button', { name: /Audit trail of the action.failed alert of db-1/ }).click();
    await alert.locator('.trail tbody tr[data-type=give-up]').waitFor({ timeout: 10_000 });
    await page.locator('#alerts').screenshot({ path: `${shots}/console-alert-why.png` });

    sim.controls.clearFaults('db-1');
    await page.getByRole('button', { name: /^Retry .* on db-1$/ }).click();
    await page.getByRole('dialog', { name: 'Retry the failed job on db-1?' }).getByRole('button', { name: 'Retry on db-1' }).click();
    await alert.waitFor({ state: 'detached', timeout: 30_000 });
    await until('the resolution audited', async () =>
      (await audit.read({ instance: 'db-1', type: 'alert' })).some(
        (r) => (r as { resolved?: boolean }).resolved && (r as { kind?: string }).kind === 'action.failed',
      )
        ? true
        : undefined,
    );
  });

  it('reads on a phone: executions and the timeline as cards, no sideways scroll', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await phone.goto(`${url}/dashboard?token=${readToken}&timeline=batch-1`);
    await phone.waitForSelector('body[data-rendered=fleet]');
    await phone.locator('#exec-table tbody tr').first().waitFor({ timeout: 10_000 });
    await phone.locator('#timeline-body g[data-status]').first().waitFor({ timeout: 10_000 });
    expect(
      await phone.evaluate(
        () => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth,
      ),
    ).toBeLessThanOrEqual(390);
    await phone.locator('#executions').screenshot({ path: `${shots}/console-phone-executions.png` });
    await phone.locator('#timeline').screenshot({ path: `${shots}/console-phone-timeline.png` });
    await phone.close();
  });
});
