import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeUsersFile } from './console-reflex.js';
import { startObservabilityBed, type ObservabilityBed } from '../metrics/observability-bed.js';
import { launchChromium } from './headless-chromium.js';

const readToken = `framing-read-${Math.random().toString(36).slice(2)}`;
const aliceToken = `alice-${Math.random().toString(36).slice(2)}`;

/** No page may frame the console (clickjacking): every dashboard response says so, and Chromium obeys. */
describe('console anti-framing', () => {
  let bed: ObservabilityBed;
  let browser: Browser;

  beforeAll(async () => {
    const usersFile = await writeUsersFile({ alice: ['operator', aliceToken] });
    bed = await startObservabilityBed({
      rulesDir: 'rules',
      instances: [{ name: 'web-1', optIn: false }],
      config: { dashboardToken: readToken, dashboardUsersFile: usersFile },
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await bed?.stop();
  });

  it("answers frame-ancestors 'none' and X-Frame-Options DENY on every console response, refusals included", async () => {
    const auth = { authorization: `Bearer ${aliceToken}` };
    const cases: [string, RequestInit, number][] = [
      ['/dashboard', { headers: auth }, 200],
      ['/dashboard', {}, 401],
      ['/dashboard/login', {}, 200],
      ['/dashboard/audit', { headers: auth }, 200],
      ['/dashboard/queues', { headers: auth }, 200],
      ['/dashboard/queues/api/queues', { headers: auth }, 200],
      ['/dashboard/console/fleet', { headers: auth }, 200],
      ['/dashboard/console/heal', { method: 'POST', headers: { ...auth, origin: 'http://evil.example' } }, 403],
    ];
    for (const [path, init, status] of cases) {
      const res = await fetch(`${bed.url}${path}`, { ...init, redirect: 'manual' });
      expect(res.status, path).toBe(status);
      expect(res.headers.get('content-security-policy'), path).toMatch(/frame-ancestors 'none'/);
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
    }
  });

  it('shows nothing of the console or its login page inside a frame of another page', async () => {
    const page = await browser.newPage();
    // Signed in first, so a frame would otherwise show the whole console.
    await page.goto(`${bed.url}/dashboard?token=${aliceToken}`);
    await page.waitForSelector('body[data-rendered=fleet]');
    // A page of the same site (its cookie goes with the frames' requests): even it may not frame the console.
    await page.goto(`${bed.url}/healthz`);
    // Each frame's load event fires for what it ended up showing, the browser's refusal included.
    const loaded = 'let n=0; function one(){ document.body.dataset.loaded = String(++n); }';
    await page.setContent(
      `<script>${loaded}</script><iframe id="a" onload="one()" src="${bed.url}/dashboard"></iframe><iframe id="b" onload="one()" src="${bed.url}/dashboard/login"></iframe>`,
    );
    await page.waitForSelector('body[data-loaded="2"]', { state: 'attached' });
    const frames = page.frames().filter((f) => f !== page.mainFrame());
    expect(frames.length).toBe(2);
    for (const f of frames) {
      const shown = await f
        .evaluate(() => (globalThis as { document?: { body?: { innerText: string } } }).document?.body?.innerText ?? '')
        .catch(() => '');
      expect(shown).not.toMatch(/Reflex console|Sign in|Fleet/);
    }
    await page.close();
  });
});
