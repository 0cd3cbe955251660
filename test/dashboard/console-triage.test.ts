import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Triage } from '../../src/alerts/triage.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { RedisConnection } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { reflexInProcess } from '../cli/in-process.js';
import { testWebhookSecret } from '../notify/notifier-fixture.js';
import { startRecordingServer, type RecordingServer } from '../notify/recording-server.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { until } from '../support/wait.js';
import { startConsoleStack, writeUsersFile, type ConsoleStack } from './console-reflex.js';
import { launchChromium } from './headless-chromium.js';

const secret = (name: string) => `${name}-${Math.random().toString(36).slice(2)}`;
const tokens = { alice: secret('alice'), bob: secret('bob'), vera: secret('vera') };

interface SentAlert {
  fingerprint: string;
  kind: string;
  status: string;
  instance: string;
  correlationId: string;
  triage?: Triage;
}

/**
 * Triage (issue #42 item 8): an operator acknowledges, assigns and annotates an incident in the
 * console or with `reflex incident`; each step is audited with the user, shown live to the others
 * watching, and sent to the receivers as an update of the incident's firing alert (same
 * fingerprint, still firing). A viewer cannot triage.
 */
describe('triage of an incident (headless Chromium against a running Reflex on the simulator)', () => {
  let stack: ConsoleStack | undefined;
  let hook: RecordingServer;
  let browser: Browser;
  let alice: Page;
  let bob: Page;
  let vera: Page;
  let redis: RedisConnection;
  let audit: AuditLog;
  let prefix: string;
  let fired: SentAlert;

  const sent = () => hook.requests.flatMap((r) => (r.json as { alerts: SentAlert[] }).alerts);
  const triageRecords = async () => (await audit.read({ type: 'triage' })) as (Record<string, unknown> & { summary: string })[];
  const incident = (page: Page) => page.locator('#incident-list li.incident[data-instance="web-1"]');
  const signIn = async (token: string) => {
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    await page.goto(`${stack!.url}/dashboard?token=${token}`);
    await page.waitForSelector('body[data-rendered=fleet]');
    await page.locator('#live', { hasText: 'live' }).waitFor();
    return page;
  };

  beforeAll(async () => {
    hook = await startRecordingServer();
    prefix = uniquePrefix('console-triage');
    process.env.REFLEX_TEST_HOOK_SECRET = testWebhookSecret;
    const usersFile = await writeUsersFile({ alice: ['operator', tokens.alice], bob: ['admin', tokens.bob], vera: ['viewer', tokens.vera] });
    stack = await startConsoleStack({
      instances: [{ name: 'web-1', config: {} }],
      prefix,
      config: {
        dashboardUsersFile: usersFile,
        notifications: {
          receivers: [{ kind: 'webhook', name: 'hook', url: hook.url, secretEnv: 'REFLEX_TEST_HOOK_SECRET' }],
          route: { receiver: 'hook', groupWaitMs: 100, groupIntervalMs: 300 },
        },
      },
    });
    redis = redisClient();
    audit = new AuditLog(redis, keySpace(prefix).audit);
    browser = await launchChromium();
    [alice, bob, vera] = [await signIn(tokens.alice), await signIn(tokens.bob), await signIn(tokens.vera)];
    // web-1 has not opted in: its crash is an incident no rule acts on, and its alert fires until it runs again.
    stack.sim.controls.crash('web-1');
    fired = await until('the crash alert sent', () => sent().find((a) => a.kind === 'instance.crashed' && a.status === 'firing'), 20_000);
    await incident(alice).waitFor({ timeout: 15_000 });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await hook?.close();
    redis?.disconnect();
  });

  /** The updates of the crash alert the receiver got after its first message: same alert, still firing. */
  const updates = () => sent().filter((a) => a.fingerprint === fired.fingerprint && a.triage);

  it('acknowledges in the console: audited as alice, shown live on bob’s page, sent to the receiver as an update', { timeout: 60_000 }, async () => {
    await incident(alice).getByRole('button', { name: 'Acknowledge the incident of web-1' }).click();
    await alice.getByRole('dialog', { name: 'Acknowledge the incident of web-1?' }).getByRole('button', { name: 'Acknowledge web-1' }).click();
    await alice.locator('#action-result', { hasText: 'alice acknowledged' }).waitFor();
    // Bob did nothing: his page shows it from the live feed.
    await incident(bob).locator('.triage', { hasText: 'acknowledged by alice' }).waitFor({ timeout: 10_000 });
    expect(await incident(bob).getByRole('button', { name: 'Acknowledge the incident of web-1' }).count(), 'acknowledged once').toBe(0);
    const [record] = await triageRecords();
    expect(record).toMatchObject({ correlationId: fired.correlationId, actor: 'alice', origin: 'console', triage: 'ack', instance: 'web-1' });
    const update = await until('the update sent', () => updates()[0], 15_000);
    expect(update).toMatchObject({ status: 'firing', kind: 'instance.crashed', correlationId: fired.correlationId });
    expect(update.triage?.acknowledged?.by).toBe('alice');
    expect(
      sent().filter((a) => a.kind === 'instance.crashed' && !a.triage),
      'no new alert: one firing message before the update',
    ).toHaveLength(1);
  });

  it('assigns to a user of the users file and adds a note, each confirmed, audited and sent', { timeout: 60_000 }, async () => {
    await incident(alice).getByRole('button', { name: 'Assign the incident of web-1' }).click();
    const assign = alice.getByRole('dialog', { name: 'Assign the incident of web-1?' });
    await assign.locator('#triage-input').fill('nobody');
    await assign.getByRole('button', { name: 'Assign web-1' }).click();
    await alice.locator('#action-result', { hasText: 'refused (400)' }).waitFor();
    await incident(alice).getByRole('button', { name: 'Assign the incident of web-1' }).click();
    await assign.locator('#triage-input').fill('bob');
    await assign.getByRole('button', { name: 'Assign web-1' }).click();
    await alice.locator('#action-result', { hasText: 'assigned it to bob' }).waitFor();
    await incident(alice).getByRole('button', { name: 'Add a note to the incident of web-1' }).click();
    const note = alice.getByRole('dialog', { name: 'Add a note to the incident of web-1?' });
    await note.locator('#triage-input').fill('kernel oops in dmesg, looking');
    await note.getByRole('button', { name: 'Add the note to web-1' }).click();
    await incident(bob).locator('.triage', { hasText: 'assigned to bob' }).waitFor({ timeout: 10_000 });
    await incident(bob).locator('.triage .notes', { hasText: 'kernel oops in dmesg, looking' }).waitFor({ timeout: 10_000 });
    expect((await triageRecords()).map((r) => [r.actor, r.triage, r.assignee ?? r.note ?? ''])).toEqual([
      ['alice', 'ack', ''],
      ['alice', 'assign', 'bob'],
      ['alice', 'note', 'kernel oops in dmesg, looking'],
    ]);
    const last = await until('the note sent', () => updates().find((a) => a.triage?.notes.length), 15_000);
    expect(last.triage).toMatchObject({ assignee: { name: 'bob', by: 'alice' }, notes: [{ by: 'alice', text: 'kernel oops in dmesg, looking' }] });
    expect(last.status).toBe('firing');
  });

  it('offers a viewer no triage buttons, refuses her direct request, and records nothing', { timeout: 30_000 }, async () => {
    const before = (await triageRecords()).length;
    await incident(vera).waitFor();
    expect(await incident(vera).locator('button[data-triage]').count(), 'a viewer sees no triage buttons (issue #42)').toBe(0);
    expect(await incident(alice).locator('button[data-triage]').count()).toBeGreaterThan(0);
    const res = await fetch(`${stack!.url}/dashboard/console/incidents/triage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.vera}`, origin: stack!.url, 'content-type': 'application/json' },
      body: JSON.stringify({ id: fired.correlationId, ack: true }),
    });
    expect(res.status).toBe(403);
    expect(await triageRecords()).toHaveLength(before);
  });

  it('triages from the CLI by the alert’s correlation id: audited as the operator, shown live, sent', { timeout: 60_000 }, async () => {
    const common = ['--redis', redisUrl(), '--prefix', prefix];
    const run = await reflexInProcess(['incident', 'note', fired.correlationId, 'host', 'rebooted', ...common], { USER: 'carol' });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(
      /^carol added a note: host rebooted \(the incident of default\/web-1, crashed at .*; from reflex incident\); 1 firing alert\(s\) updated/,
    );
    await incident(bob).locator('.triage .notes', { hasText: 'host rebooted' }).waitFor({ timeout: 10_000 });
    expect((await triageRecords()).at(-1)).toMatchObject({ actor: 'carol', origin: 'cli', triage: 'note', note: 'host rebooted' });
    const update = await until('the CLI note sent', () => updates().find((a) => a.triage?.notes.some((n) => n.by === 'carol')), 15_000);
    expect(update.triage?.notes.map((n) => n.text)).toEqual(['kernel oops in dmesg, looking', 'host rebooted']);
    const again = await reflexInProcess(['incident', 'ack', fired.correlationId, ...common], { USER: 'carol' });
    expect(again.stdout).toMatch(/already acknowledged by alice .*: nothing changed/);
    const unknown = await reflexInProcess(['incident', 'ack', 'no-such-incident', ...common]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no incident no-such-incident since/);
  });
});
