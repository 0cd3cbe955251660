import { until } from '../support/wait.js';
import { launchChromium } from './headless-chromium.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReflexHandle } from '../../src/app/start-reflex.js';
import { startConsoleStack, type ConsoleStack } from './console-reflex.js';
import type { FleetPage } from '../../src/http/console/fleet-view.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { optIn } from '../metrics/observability-bed.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { CrashLoopBudget } from '../../src/remediation/crash-loop-budget.js';
import { keySpace } from '../../src/redis/key-space.js';
import { redisClient, uniquePrefix } from '../support/redis.js';

const token = `console-fleet-${Math.random().toString(36).slice(2)}`;
const members = ['m1', 'm2'];

describe('console fleet across two targets, one of them a cluster', () => {
  let stack: ConsoleStack | undefined;
  /** The standalone server (the cluster's simulator is the other target). */
  let single: RunningSimulator;
  let reflex: ReflexHandle;
  let url: string;
  let browser: Browser | undefined;
  const prefix = uniquePrefix('console-fleet');
  const redis = redisClient();
  const fleet = async (query = ''): Promise<FleetPage> => {
    const res = await fetch(`${url}/dashboard/console/fleet${query}`, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`fleet answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as FleetPage;
  };

  beforeAll(async () => {
    const cluster = await startSimulator({ instances: 0, cluster: { members }, projects: ['prod'] });
    for (let i = 1; i <= 120; i++)
      cluster.controls.addInstance({ name: `c-${i}`, project: i % 3 ? 'default' : 'prod', location: members[i % 2], config: optIn });
    single = await startSimulator({ instances: 0 });
    for (let i = 1; i <= 30; i++) single.controls.addInstance({ name: `s-${i}`, config: i % 2 ? optIn : {} });
    stack = await startConsoleStack({ simulators: [cluster, single], targets: ['lab', 'edge'], prefix, config: { dashboardToken: token } });
    ({ reflex, url } = stack);
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    redis.disconnect();
  });

  it('lists every instance of both targets a page at a time, with the counts of the whole fleet', async () => {
    const first = await fleet();
    expect(first.total).toBe(150);
    expect(first.rows).toHaveLength(50);
    expect(first.targets).toHaveLength(2);
    expect(first.members).toEqual(['m1', 'm2', 'none']);
    expect(first.projects).toEqual(['default', 'prod']);
    const keys = new Set<string>();
    for (let offset = 0; offset < first.total; offset += 50) for (const r of (await fleet(`?offset=${offset}`)).rows) keys.add(r.key);
    expect(keys.size).toBe(150);
  });

  it('filters by target, member, project, status and the filter language', async () => {
    const [lab, edge] = reflex.targets;
    expect((await fleet(`?target=${encodeURIComponent(edge!)}`)).matched).toBe(30);
    const m2 = await fleet('?member=m2&limit=500');
    expect(m2.matched).toBe(60);
    expect(m2.rows.every((r) => r.location === 'm2' && r.target === lab)).toBe(true);
    expect((await fleet('?project=prod')).matched).toBe(40);
    expect((await fleet(`?filter=${encodeURIComponent('location eq m1 and project eq prod')}`)).matched).toBe(20);
    expect((await fleet(`?filter=${encodeURIComponent('name eq s-.* and opt_in eq false')}`)).matched).toBe(15);

    // The daemon announces no Error with an event: the console shows it from the daemon's list
    // (read again at most every 15 s), before a resync tells Reflex.
    single.controls.setError('s-7');
    const errors = await until(
      's-7 in Error on the console',
      async () => {
        const page = await fleet('?status=Error');
        return page.matched > 0 && page;
      },
      30_000,
      200,
    );
    expect(errors.rows[0]).toMatchObject({ name: 's-7', status: 'Error', statusCode: 112, location: 'none', statusFrom: 'list' });
    expect(errors.counts.error).toBe(1);
    // Problems sort first.
    expect((await fleet()).rows[0]!.name).toBe('s-7');
    const bad = await fetch(`${url}/dashboard/console/fleet?filter=${encodeURIComponent('name eq')}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^filter: /);
  });

  it('puts one page of rows in the page, not the fleet, and pages on with the keyboard', async () => {
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${url}/dashboard?token=${token}`);
    await page.waitForSelector('body[data-rendered=fleet]');
    expect(await page.locator('#fleet-table tbody tr').count()).toBe(50);
    expect(await page.locator('#page-info').innerText()).toBe('rows 1–50 of 150 matching (150 in the fleet)');
    await page.locator('#next').focus();
    await page.keyboard.press('Enter');
    await page.locator('#page-info', { hasText: 'rows 51–100' }).waitFor();
    // With two targets the rows say which one.
    expect(await page.locator('#fleet-table th', { hasText: 'target' }).count()).toBe(1);
  });

  it('shows a quarantine on the instance it was imposed on, not on a new instance under that name', async () => {
    const edge = reflex.targets[1]!;
    const keys = keySpace(prefix);
    const budget = new CrashLoopBudget(redis);
    const client = new InstanceClient(parseTarget(`unix://${single.socketPath}`));
    const uuid = (await client.getInstance('s-3')).value.config['volatile.uuid']!;
    await client.close();
    for (const [name, holder] of [
      ['s-3', uuid],
      ['s-5', 'the-instance-s-5-was-before-it-was-re-created'],
    ] as const) {
      const ref = { target: edge, project: 'default', instance: name };
      await budget.reserve(
        { restarts: keys.restarts(ref), quarantine: keys.quarantine(ref) },
        `loop-${name}`,
        { maxRestarts: 0 },
        Date.now(),
        holder,
      );
    }
    const held = await until(
      'a quarantined instance on the console',
      async () => {
        const page = await fleet('?flag=quarantined');
        return page.matched > 0 && page;
      },
      30_000,
      200,
    );
    expect(held.rows.map((r) => r.name)).toEqual(['s-3']);
  });
});
