import { afterEach, describe, expect, it } from 'vitest';
import type { ActionContext } from '../../src/actions/action.js';
import { runAction } from '../../src/actions/define-action.js';
import { builtinActions } from '../../src/actions/registry.js';
import { InstanceClient } from '../../src/client/client.js';
import type { Notifier } from '../../src/notify/notifier.js';
import { closedAfterEach, fastTimings, testWebhookSecret } from './notifier-fixture.js';
import { startRecordingServer } from './recording-server.js';
import { until } from '../support/wait.js';

describe('the notify action', () => {
  // One fixture (its own key prefix) a test: a notifier left from an earlier test, with other
  // receivers, would share the queues and take deliveries meant for this test's receiver.
  const { fixture } = closedAfterEach();
  const client = new InstanceClient({ kind: 'unix', socketPath: '/nonexistent.sock', url: 'unix:///nonexistent.sock' }, { project: 'prod' });
  const records: unknown[] = [];
  let notifier: Notifier | undefined;
  const ctx = (params: Record<string, unknown>, dryRun = false): ActionContext => ({
    ...(notifier ? { notifier } : {}),
    client,
    instance: 'web-1',
    params,
    dryRun,
    clientNoting: () => client,
    audit: async (r) => void records.push(r),
  });
  afterEach(async () => {
    notifier = undefined;
  });

  it('is in the registry', () => {
    expect(builtinActions.get('notify').name).toBe('notify');
  });

  it('sends an alert about the instance to the named receiver, with severity and summary', async () => {
    const routed = await startRecordingServer();
    const named = await startRecordingServer();
    notifier = fixture().replica({
      receivers: [
        { kind: 'webhook', name: 'routed', url: routed.url, secretEnv: 'S' },
        { kind: 'webhook', name: 'oncall', url: named.url, secretEnv: 'S' },
      ],
      env: { S: testWebhookSecret },
      route: { receiver: 'routed', ...fastTimings },
    });
    const outcome = await runAction(
      builtinActions.get('notify'),
      ctx({ receiver: 'oncall', severity: 'critical', summary: 'disk almost full', correlationId: 'evt-42' }),
    );
    expect(outcome.result).toBe('done');
    await until('the named receiver', () => named.requests.length === 1);
    const alert = (named.requests[0]!.json as { alerts: Record<string, unknown>[] }).alerts[0];
    expect(alert).toMatchObject({
      kind: 'rule.notify',
      severity: 'critical',
      summary: 'disk almost full',
      instance: 'web-1',
      project: 'prod',
      target: 'unix:///nonexistent.sock',
      correlationId: 'evt-42',
    });
    expect(routed.requests).toHaveLength(0);
    expect(records).toEqual([expect.objectContaining({ type: 'alert', severity: 'critical' })]);
    await Promise.all([routed.close(), named.close()]);
  });

  it('with resolve: true resolves the alert it raised, so the receiver gets the resolved message; with none firing it is skipped', async () => {
    const rec = await startRecordingServer();
    notifier = fixture().replica({
      receivers: [{ kind: 'webhook', name: 'oncall', url: rec.url, secretEnv: 'S' }],
      env: { S: testWebhookSecret },
      route: { receiver: 'oncall', ...fastTimings },
    });
    const statuses = () =>
      rec.requests.flatMap((r) =>
        (r.json as { alerts: { kind: string; status: string }[] }).alerts.filter((a) => a.kind === 'disk.full').map((a) => a.status),
      );
    expect(await runAction(builtinActions.get('notify'), ctx({ kind: 'disk.full', summary: 'disk almost full' }))).toMatchObject({ result: 'done' });
    await until('the firing message', () => statuses().includes('firing'));
    expect(await runAction(builtinActions.get('notify'), ctx({ kind: 'disk.full', resolve: true, summary: 'disk has room again' }))).toMatchObject({
      result: 'done',
    });
    await until('the resolved message', () => statuses().includes('resolved'));
    expect(records.at(-1)).toMatchObject({ type: 'alert', resolved: true });
    expect(await runAction(builtinActions.get('notify'), ctx({ kind: 'disk.full', resolve: true }))).toMatchObject({ result: 'skipped' });
    await rec.close();
  });

  it('in dry-run only says what it would send', async () => {
    expect(await runAction(builtinActions.get('notify'), ctx({ summary: 'x' }, true))).toEqual({
      result: 'dry-run',
      summary: 'would notify the routed receivers (warning): x',
    });
  });

  it('rejects bad params and unknown receivers', async () => {
    notifier = fixture().replica({
      receivers: [{ kind: 'webhook', name: 'oncall', url: 'http://127.0.0.1:9/never-called', secretEnv: 'S' }],
      env: { S: testWebhookSecret },
      route: { receiver: 'oncall', ...fastTimings },
    });
    await expect(runAction(builtinActions.get('notify'), ctx({ severity: 'loud' }))).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    await expect(runAction(builtinActions.get('notify'), ctx({ receiver: 'nobody' }))).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('nobody'),
    });
  });
});
