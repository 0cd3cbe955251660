import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog, type StoredAuditRecord } from '../../src/audit/audit-log.js';
import type { RedisConnection } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { Approvals } from '../../src/remediation/approvals.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { until } from '../support/wait.js';
import { startConsoleStack, writeUsersFile, type ConsoleStack } from './console-reflex.js';
import { launchChromium } from './headless-chromium.js';

const secret = (name: string) => `${name}-${Math.random().toString(36).slice(2)}`;
const tokens = { alice: secret('alice'), bob: secret('bob'), vera: secret('vera') };

/** A rule whose start of a crashed instance waits for the approval of `role` (instances with user.approval = role). */
const rule = (role: 'operator' | 'admin') => `import { StatusCode, defineRule } from 'reflex-lxd';
export default defineRule({
  name: 'start-with-${role}',
  on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] },
  scope: { filter: 'config.user.approval eq ${role}' },
  actions: [{ action: 'start' }],
  approval: { role: '${role}', timeout: '10m' },
});
`;

/**
 * Approvals in the console (issue #42): the panel shows the requests waiting and the recently
 * decided, live for everyone watching; an operator approves with an armed confirmation and the
 * instance is started, audited as the signed-in user (origin console); a user below the rule's
 * role sees no buttons and is refused 403 (audited) by a direct request; the alert's signed link
 * opens the console on the approval after the sign-in, and a tampered one is refused. A viewer
 * sees no triage buttons either.
 */
describe('approvals in the console (headless Chromium against a running Reflex on the simulator)', () => {
  let stack: ConsoleStack | undefined;
  let browser: Browser;
  let alice: Page;
  let bob: Page;
  let vera: Page;
  let redis: RedisConnection;
  let audit: AuditLog;
  let approvals: Approvals;
  let prefix: string;

  const approvalRecords = async (instance: string) => (await audit.read({ instance })).filter((r) => r.type === 'approval') as StoredAuditRecord[];
  const requested = async (instance: string, after = 0): Promise<string> => {
    const r = await until(
      `the approval of ${instance} requested`,
      async () => (await approvalRecords(instance)).filter((x) => x.result === 'requested').slice(after)[0],
      20_000,
    );
    return String(r.approval);
  };
  const item = (page: Page, id: string) => page.locator(`#approvals li[data-approval-id="${id}"]`);
  const signIn = async (token: string) => {
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    await page.goto(`${stack!.url}/dashboard?token=${token}`);
    await page.waitForSelector('body[data-rendered=fleet]');
    await page.locator('#live', { hasText: 'live' }).waitFor();
    return page;
  };
  const decideDirectly = (token: string, id: string, verdict: 'approved' | 'denied') =>
    fetch(`${stack!.url}/dashboard/console/approvals/${id}/decide`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, origin: stack!.url, 'content-type': 'application/json' },
      body: JSON.stringify({ verdict }),
    });

  beforeAll(async () => {
    prefix = uniquePrefix('console-approvals');
    const usersFile = await writeUsersFile({ alice: ['operator', tokens.alice], bob: ['admin', tokens.bob], vera: ['viewer', tokens.vera] });
    stack = await startConsoleStack({
      instances: [
        { name: 'web-1', config: { 'user.approval': 'operator' } },
        { name: 'db-1', config: { 'user.approval': 'admin' } },
      ],
      rules: { 'start-with-operator.ts': rule('operator'), 'start-with-admin.ts': rule('admin') },
      prefix,
      config: { dashboardUsersFile: usersFile },
    });
    redis = redisClient();
    const keys = keySpace(prefix);
    audit = new AuditLog(redis, keys.audit);
    approvals = new Approvals({ redis, keys: keys.approvals, audit });
    browser = await launchChromium();
    [alice, bob, vera] = [await signIn(tokens.alice), await signIn(tokens.bob), await signIn(tokens.vera)];
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    redis?.disconnect();
  });

  it(
    'an operator approves from the panel: the instance is started, audited as alice (console), and bob sees it decided live',
    { timeout: 60_000 },
    async () => {
      stack!.sim.controls.crash('web-1');
      const id = await requested('web-1');
      await item(alice, id).waitFor({ timeout: 10_000 });
      await alice.locator('#fleet-table tr[data-key$="/web-1"][data-status=Stopped]').waitFor({ timeout: 10_000 });
      expect(stack!.sim.controls.calls('web-1', 'start'), 'held: nothing started yet').toBe(0);
      expect(await item(bob, id).getAttribute('data-status', { timeout: 10_000 })).toBe('pending');
      const panel = await item(alice, id).innerText();
      expect(panel).toMatch(/start of web-1/);
      expect(panel).toMatch(/rule start-with-operator/);
      expect(panel).toMatch(/needs an operator or an admin; asked /);
      expect(panel).toMatch(/times out .* \(in (9|10) min\)/);
      await item(alice, id).getByRole('button', { name: 'Approve start of web-1' }).click();
      const dialog = alice.getByRole('dialog', { name: 'Approve start of web-1?' });
      await dialog.locator('#approval-reason').fill('db team says go');
      await dialog.getByRole('button', { name: 'Approve start of web-1' }).click();
      await alice.locator('#action-result', { hasText: 'approved by alice' }).waitFor();
      // Bob did nothing: his page moves it to the decided from the live feed.
      await bob
        .locator(`#approvals-decided li[data-approval-id="${id}"][data-status=approved]`, { hasText: 'by alice (console)' })
        .waitFor({ timeout: 10_000 });
      expect(await bob.locator(`#approvals-waiting li[data-approval-id="${id}"]`).count()).toBe(0);
      await until('the simulator asked to start web-1', () => stack!.sim.controls.calls('web-1', 'start') === 1 || undefined, 15_000);
      await alice.locator('#fleet-table tr[data-key$="/web-1"][data-status=Running]').waitFor({ timeout: 15_000 });
      const decided = (await approvalRecords('web-1')).find((r) => r.result === 'approved');
      expect(decided).toMatchObject({ approval: id, actor: 'alice', origin: 'console' });
      expect(decided?.summary).toMatch(/db team says go/);
      expect((await audit.read({ instance: 'web-1' })).find((r) => r.type === 'action')).toMatchObject({ approval: id });
    },
  );

  it('shows a viewer no buttons (approvals and triage), and refuses her direct request 403, audited as refused', { timeout: 60_000 }, async () => {
    stack!.sim.controls.crash('db-1');
    const id = await requested('db-1');
    await item(vera, id).waitFor({ timeout: 10_000 });
    expect(await vera.locator('#approvals button[data-decide]').count()).toBe(0);
    // The incident of web-1's crash is on her page without triage buttons; alice's has them.
    const incident = (page: Page) => page.locator('#incident-list li.incident[data-instance="web-1"]').first();
    await incident(alice).getByRole('button', { name: 'Acknowledge the incident of web-1' }).waitFor({ timeout: 10_000 });
    await incident(vera).waitFor();
    expect(await incident(vera).locator('button[data-triage]').count()).toBe(0);
    const res = await decideDirectly(tokens.vera, id, 'approved');
    expect(res.status).toBe(403);
    expect(((await res.json()) as { code: string }).code).toBe('APPROVAL_FORBIDDEN');
    expect((await approvalRecords('db-1')).find((r) => r.result === 'refused')).toMatchObject({ approval: id, actor: 'vera', origin: 'console' });
    expect((await approvals.get(id))?.status).toBe('pending');
  });

  it(
    'refuses an admin-only request to an operator (no buttons, 403 audited); the admin denies it and nothing is done',
    { timeout: 60_000 },
    async () => {
      const id = String((await approvalRecords('db-1')).find((r) => r.result === 'requested')!.approval);
      await item(alice, id).waitFor({ timeout: 10_000 });
      expect(await item(alice, id).locator('button[data-decide]').count()).toBe(0);
      expect(await item(alice, id).innerText()).toMatch(/needs an admin/);
      const res = await decideDirectly(tokens.alice, id, 'approved');
      expect(res.status).toBe(403);
      expect((await approvalRecords('db-1')).filter((r) => r.result === 'refused').map((r) => r.actor)).toEqual(['vera', 'alice']);
      await item(bob, id).getByRole('button', { name: 'Deny start of db-1' }).click();
      await bob.getByRole('dialog', { name: 'Deny start of db-1?' }).getByRole('button', { name: 'Deny start of db-1' }).click();
      await bob.locator('#action-result', { hasText: 'denied by bob' }).waitFor();
      await alice.locator(`#approvals-decided li[data-approval-id="${id}"][data-status=denied]`, { hasText: 'by bob' }).waitFor({ timeout: 10_000 });
      // Too late: the request is decided; a second decision is refused 409 with why, and the page says so.
      const late = await decideDirectly(tokens.bob, id, 'approved');
      expect(late.status).toBe(409);
      expect(((await late.json()) as { error: string }).error).toMatch(/it was denied already; nothing was done/);
      expect((await approvalRecords('db-1')).find((r) => r.result === 'denied')).toMatchObject({ actor: 'bob', origin: 'console' });
      expect(await bob.locator('#fleet-table tr[data-key$="/db-1"]').getAttribute('data-status')).toBe('Stopped');
      expect(stack!.sim.controls.calls('db-1', 'start')).toBe(0);
    },
  );

  it('shows a decision that came too late with its reason (409)', { timeout: 60_000 }, async () => {
    stack!.sim.controls.crash('web-1');
    const id = await requested('web-1', 1);
    await item(bob, id).getByRole('button', { name: 'Approve start of web-1' }).waitFor({ timeout: 10_000 });
    // Bob's page stops following; alice denies meanwhile; bob's approval, sent from what he still sees, is too late.
    await bob.getByRole('button', { name: 'Pause live updates' }).click();
    expect((await decideDirectly(tokens.alice, id, 'denied')).status).toBe(200);
    await item(bob, id).getByRole('button', { name: 'Approve start of web-1' }).click();
    await bob.getByRole('dialog', { name: 'Approve start of web-1?' }).getByRole('button', { name: 'Approve start of web-1' }).click();
    await bob.locator('#action-result', { hasText: 'refused (409)' }).waitFor();
    expect(await bob.locator('#action-result').innerText()).toMatch(/it was denied already/);
    await bob.getByRole('button', { name: /Resume live updates/ }).click();
  });

  it(
    'opens the signed link after the sign-in on that approval with its buttons; a tampered or missing signature gets 403',
    { timeout: 60_000 },
    async () => {
      const id = String((await approvalRecords('db-1')).find((r) => r.result === 'requested')!.approval);
      // A fresh request on web-1 (running again first, then crashed).
      const before = (await approvalRecords('web-1')).filter((r) => r.result === 'requested').length;
      await heal('web-1');
      stack!.sim.controls.crash('web-1');
      const pending = await requested('web-1', before);
      const link = await approvals.links.link(pending);
      expect(link).toMatch(new RegExp(`^/dashboard/approvals/${pending}\\?sig=[A-Za-z0-9_-]{32}$`));
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${stack!.url}${link}`);
      expect(new URL(page.url()).pathname).toBe('/dashboard/login');
      await page.getByLabel('name').fill('alice');
      await page.getByLabel('password').fill(tokens.alice);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForSelector('body[data-rendered=fleet]');
      expect(new URL(page.url()).searchParams.get('approval')).toBe(pending);
      const focused = page.locator(`#approvals li.focused[data-approval-id="${pending}"]`);
      await focused.waitFor({ timeout: 10_000 });
      await focused.getByRole('button', { name: 'Approve start of web-1' }).click();
      await page.getByRole('dialog', { name: 'Approve start of web-1?' }).getByRole('button', { name: 'Approve start of web-1' }).click();
      await page.locator('#action-result', { hasText: 'approved by alice' }).waitFor();
      // The link of another approval, its signature altered, or none: refused, and nothing about it shown.
      const sig = new URL(link, stack!.url).searchParams.get('sig')!;
      const tampered = `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`;
      for (const path of [`/dashboard/approvals/${pending}?sig=${tampered}`, `/dashboard/approvals/${id}?sig=${sig}`, `/dashboard/approvals/${id}`]) {
        const res = await page.goto(`${stack!.url}${path}`);
        expect(res?.status(), path).toBe(403);
        const text = await page.locator('body').innerText();
        expect(text).toMatch(/This link is not valid/);
        expect(text).not.toMatch(/web-1|db-1|start-with/);
      }
      await context.close();
    },
  );

  /** Starts `name` as an operator would, through the console's heal (audited as alice). */
  async function heal(name: string): Promise<void> {
    const res = await fetch(`${stack!.url}/dashboard/console/heal`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.alice}`, origin: stack!.url, 'content-type': 'application/json' },
      body: JSON.stringify({ target: stack!.target, project: 'default', instance: name }),
    });
    expect(res.status).toBe(202);
    await alice.locator(`#fleet-table tr[data-key$="/${name}"][data-status=Running]`).waitFor({ timeout: 15_000 });
  }
});
