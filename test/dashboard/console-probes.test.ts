import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinProbeHealth, type HealthRow } from '../../src/http/console/fleet-health.js';
import type { FleetPage } from '../../src/http/console/fleet-view.js';
import type { InstanceTimeline } from '../../src/http/console/instance-timeline.js';
import { freePort } from '../support/free-port.js';
import { redisUrl } from '../support/redis.js';
import { startStack, type Stack } from '../support/stack.js';
import { until } from '../support/wait.js';
import { launchChromium } from './headless-chromium.js';

const token = `console-probes-${Math.random().toString(36).slice(2)}`;

/** An instance probed by its own config keys: `check-web` every 300 ms, unhealthy after 2 failures. */
const probed = (name: string) => ({
  name,
  status: 'Running' as const,
  config: { 'user.reflex.probe.exec': 'check-web', 'user.reflex.probe.period': '300ms', 'user.reflex.probe.failure-threshold': '2' },
});

describe('console: the health column and the probe history of an instance (Chromium)', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${stack.reflex.http!.url}/dashboard/console${path}`, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as T;
  };
  const healthCell = (name: string) => page.locator(`#fleet-table tr[data-key$="/${name}"] td[data-label=health]`);

  beforeAll(async () => {
    // A rule that never matches: nothing remediates, the probe alone moves the health.
    stack = await startStack({
      redisUrl: redisUrl(),
      instances: [probed('web1'), { name: 'plain', status: 'Running' }],
      rules: {
        'noop.ts': `import { defineRule } from 'reflex-lxd';\nexport default defineRule({ name: 'noop', on: { kind: 'rule.event', name: ['never'] }, actions: [{ action: 'notify' }] });\n`,
      },
      config: { httpPort: await freePort(), dashboardToken: token },
    });
    stack.sim.controls.scriptCommand({ command: 'check-web', outcomes: [{ exitCode: 0, stdout: 'ok\n' }] });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('shows healthy, then unhealthy with the transition and its output on the timeline, then healthy again', async () => {
    await page.goto(`${stack.reflex.http!.url}/dashboard?token=${token}`);
    await page.waitForSelector('body[data-rendered=fleet]');
    // The first success concludes healthy (no transition); an instance no probe covers shows none.
    await page.waitForSelector('#fleet-table tr[data-key$="/web1"] [data-health=healthy]', { timeout: 30_000 });
    expect(await healthCell('plain').textContent()).toBe('—');
    expect(await healthCell('web1').locator('[data-health]').getAttribute('title')).toBe('config: healthy');

    // The service hangs: two failures in a row make it unhealthy, and the live update shows it.
    stack.sim.controls.scriptCommand({ command: 'check-web', outcomes: [{ exitCode: 1, stderr: 'connection refused\n' }] });
    await page.waitForSelector('#fleet-table tr[data-key$="/web1"] [data-health=unhealthy]', { timeout: 30_000 });
    expect(await healthCell('web1').textContent()).toContain('unhealthy');
    // Problems first: the unhealthy instance sorts before the healthy one; its count filters the fleet.
    expect(await page.locator('#fleet-table tbody tr').first().getAttribute('data-key')).toMatch(/\/web1$/);
    const unhealthy = await api<FleetPage>('/fleet?flag=unhealthy');
    expect(unhealthy.counts.unhealthy).toBe(1);
    expect(unhealthy.rows.map((r) => r.name)).toEqual(['web1']);
    expect((await api<FleetPage>(`/fleet?filter=${encodeURIComponent('health eq unhealthy')}`)).rows.map((r) => r.name)).toEqual(['web1']);
    expect((await api<FleetPage>(`/fleet?filter=${encodeURIComponent('health eq none')}`)).rows.map((r) => r.name)).toEqual(['plain']);

    // Its timeline: the transition with the probe's output, and the probe's state now.
    await page.locator('#fleet-table a[data-timeline=web1]').click();
    const unhealthyMark = page.locator('#timeline-body li[data-mark=health][data-health=unhealthy]');
    await unhealthyMark.waitFor({ timeout: 30_000 });
    expect(await unhealthyMark.textContent()).toMatch(
      /probe config: (unknown|healthy) → unhealthy after 2 exec checks in a row[\s\S]*connection refused/,
    );
    const state = page.locator('#timeline-body tr[data-probe=config]');
    await until('the probe state on the timeline says unhealthy', async () => (await state.getAttribute('data-health')) === 'unhealthy', 30_000);
    expect(await state.textContent()).toMatch(/failures in a row[\s\S]*connection refused/);

    // The service is back: healthy in the column, the way back on the timeline.
    stack.sim.controls.scriptCommand({ command: 'check-web', outcomes: [{ exitCode: 0, stdout: 'ok\n' }] });
    await page.waitForSelector('#fleet-table tr[data-key$="/web1"] [data-health=healthy]', { timeout: 30_000 });
    const healthyMark = page.locator('#timeline-body li[data-mark=health][data-health=healthy]');
    await healthyMark.waitFor({ timeout: 30_000 });
    expect(await healthyMark.textContent()).toMatch(/probe config: unhealthy → healthy after 1 exec check in a row/);
    const timeline = await api<InstanceTimeline>('/timeline?instance=web1');
    expect(timeline.marks.filter((m) => m.kind === 'health').map((m) => m.health)).toEqual(['unhealthy', 'healthy']);
    expect(timeline.probes).toMatchObject([{ probe: 'config', instance: 'web1', health: 'healthy' }]);
  }, 120_000);
});

describe('console: whose probe state a fleet row shows', () => {
  type Row = HealthRow;
  const row = (name: string, statusCode = 103): Row => ({
    key: `t|default/${name}`,
    target: 't',
    project: 'default',
    name,
    statusCode,
    health: 'none',
  });
  const state = (instance: string, identity: string, health: 'healthy' | 'unhealthy' | 'unknown', probe = 'web') =>
    ({ target: 't', project: 'default', identity, instance, probe, health, failures: 0, successes: 1 }) as const;

  it("shows the worst of its probes, not a predecessor's of the same name, follows a rename by uuid, and says unknown while it is not Running", () => {
    const rows = new Map([row('web1'), row('web2'), row('renamed'), row('stopped', 102), row('bare')].map((r) => [r.key, { ...r }]));
    const uuids = new Map([
      ['t|default/web1', 'uuid-web1'],
      ['t|default/web2', 'uuid-web2'],
      ['t|default/renamed', 'uuid-old-name'],
      ['t|default/stopped', 'uuid-stopped'],
    ]);
    const states = joinProbeHealth(rows, uuids, [
      state('web1', 'uuid-web1', 'healthy'),
      state('web1', 'uuid-web1', 'unhealthy', 'db'),
      // The instance that bore the name before web2: not web2's.
      state('web2', 'uuid-gone', 'unhealthy'),
      // Last checked under its former name.
      state('before-rename', 'uuid-old-name', 'unhealthy'),
      state('stopped', 'uuid-stopped', 'unhealthy'),
    ]);
    const health = Object.fromEntries([...rows.values()].map((r) => [r.name, r.health]));
    expect(health).toEqual({ web1: 'unhealthy', web2: 'none', renamed: 'unhealthy', stopped: 'unknown', bare: 'none' });
    expect(rows.get('t|default/web1')!.probes).toEqual([
      { probe: 'web', health: 'healthy' },
      { probe: 'db', health: 'unhealthy' },
    ]);
    expect(states.get('t|default/renamed')!.map((s) => s.instance)).toEqual(['before-rename']);
    expect(states.has('t|default/web2')).toBe(false);
  });
});
