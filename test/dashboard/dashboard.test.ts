import { launchChromium, requireChromium } from './headless-chromium.js';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keySpace } from '../../src/redis/key-space.js';
import { Silences } from '../../src/silences/silences.js';
import { startObservabilityBed, waitForMetric, type ObservabilityBed } from '../metrics/observability-bed.js';
import { redisClient } from '../support/redis.js';

const token = `dashboard-test-${Math.random().toString(36).slice(2)}`;
const screenshotPath = join('.tmp', 'dashboard.png');

/** Width and height from a PNG's IHDR chunk. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
  expect(png.subarray(12, 16).toString('ascii')).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

describe('dashboard (headless Chromium against a running Reflex)', () => {
  let bed: ObservabilityBed;
  let browser: Browser;

  beforeAll(async () => {
    requireChromium();
    bed = await startObservabilityBed({
      rulesDir: 'rules',
      instances: [{ name: 'web-1' }, { name: 'batch-1', optIn: false }],
      config: { dashboardToken: token },
    });
    const redis = redisClient();
    await new Silences(redis, keySpace(bed.prefix).silences).add({
      scope: { instance: 'db-7' },
      reason: 'kernel upgrade window',
      createdBy: 'ops@example',
      durationMs: 3_600_000,
    });
    redis.disconnect();
    await waitForMetric(bed.url, 'reflex_stream_connected', { target: bed.reflex.target }, (v) => v === 1);
    await waitForMetric(bed.url, 'reflex_gaps_resynced_total', {}, (v) => v >= 1);
    bed.sim.controls.crash('web-1');
    await waitForMetric(bed.url, 'reflex_actions_total', { action: 'start', outcome: 'done' }, (v) => v >= 1);

    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await bed?.stop();
  });

  it('refuses every dashboard address without the token, or with a wrong one (401)', async () => {
    for (const path of ['/dashboard', '/dashboard/queues', '/dashboard/queues/api/queues']) {
      expect((await fetch(`${bed.url}${path}`)).status, path).toBe(401);
      expect((await fetch(`${bed.url}${path}?token=wrong-token-of-some-length`)).status, path).toBe(401);
      expect((await fetch(`${bed.url}${path}`, { headers: { authorization: 'Bearer wrong-token-of-some-length' } })).status, path).toBe(401);
    }
    const res = await fetch(`${bed.url}/dashboard`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    // Metrics and health stay open: scrapers and probes carry no token.
    expect((await fetch(`${bed.url}/metrics`)).status).toBe(200);
  });

  it('shows the remediation in the audit trail of the crashed instance, and the current silences (the audit table, /dashboard/audit)', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const res = await page.goto(`${bed.url}/dashboard/audit?token=${token}`);
    expect(res?.status()).toBe(200);
    // The token leaves the address bar: it was traded for a cookie.
    expect(new URL(page.url()).search).toBe('');

    const web1 = page.locator('section.instance[data-instance="web-1"]');
    await expect.poll(() => web1.locator('tr.remediation').count()).toBeGreaterThanOrEqual(1);
    expect(await web1.locator('tr.remediation').first().innerText()).toMatch(/outcome\s+restart-on-crash\s+done\s+start: started \(was Stopped\)/);
    const silences = await page.locator('#silences').innerText();
    expect(silences).toContain('kernel upgrade window');
    expect(silences).toContain('instance=db-7');

    mkdirSync('.tmp', { recursive: true });
    await page.screenshot({ path: screenshotPath, fullPage: true });
    const png = readFileSync(screenshotPath);
    const { width, height } = pngSize(png);
    expect(width).toBe(1280);
    expect(height).toBeGreaterThanOrEqual(300);
    expect(png.length).toBeGreaterThan(20_000);
    await page.close();
  });

  it('serves bull-board with the events and actions queues to the same browser session', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${bed.url}/dashboard/queues?token=${token}`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/queues');
    // The UI's own API calls carry the cookie, so the queue list renders.
    await page.getByText('actions', { exact: true }).first().waitFor({ timeout: 15_000 });
    await page.getByText('events', { exact: true }).first().waitFor({ timeout: 15_000 });
    await context.close();
  });

  it('refuses the add-job POST a page sends with the dashboard cookie as text/plain (no write token: read-only), while the views still load', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${bed.url}/dashboard/queues?token=${token}`);
    await page.getByText('actions', { exact: true }).first().waitFor({ timeout: 15_000 });
    const actionsQueue = keySpace(bed.prefix).actionsQueue;
    // What a same-site page could send: a "simple" request (no preflight) that carries the cookie.
    const attempt = await page.evaluate(async (queue) => {
      const add = await fetch(`/dashboard/queues/api/queues/${encodeURIComponent(queue)}/add`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ name: 'api-call', data: { method: 'DELETE', path: '/1.0/instances/web-1' } }),
      });
      const list = await fetch('/dashboard/queues/api/queues');
      return {
        add: add.status,
        list: list.status,
        queues: ((await list.json()) as { queues: { name: string; readOnlyMode: boolean }[] }).queues.map((q) => [q.name, q.readOnlyMode]),
      };
    }, actionsQueue);
    expect(attempt.add).toBe(405);
    expect(attempt.list).toBe(200);
    expect(attempt.queues).toContainEqual([actionsQueue, true]);
    const keys = keySpace(bed.prefix);
    const connection = redisClient();
    const queue = new Queue(actionsQueue, { connection, prefix: keys.bullPrefix });
    try {
      const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized', 'active', 'completed', 'failed']);
      expect(jobs.length).toBeGreaterThan(0); // the restart of web-1 went through this queue
      expect(jobs.map((j) => j.name)).not.toContain('api-call');
    } finally {
      await queue.close();
      connection.disconnect();
    }
    await context.close();
  });

  it('is disabled, and says so, when no token is configured', async () => {
    // A replica is started with the bed's config: the token is taken out.
    const standby = await bed.replica({ role: 'subscriber', dashboardToken: undefined, dashboardWriteToken: undefined });
    const res = await fetch(`${standby.http!.url}/dashboard`);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('dashboard disabled: no token configured');
  });
});
