import { afterEach, describe, expect, it } from 'vitest';
import { alertFingerprint, type AlertInput } from '../../src/alerts/alert.js';
import { Alerts, type AlertNotifier } from '../../src/alerts/alerts.js';
import type { Notifier } from '../../src/notify/notifier.js';
import { NotifierFixture } from '../notify/notifier-fixture.js';
import { startRecordingServer, type RecordingServer } from '../notify/recording-server.js';
import { until } from '../support/wait.js';

interface Body {
  status: string;
  alerts: { kind: string; status: string; instance: string; summary: string }[];
}

/** Raising goes one way for every alert Reflex raises: audited, then handed to the notifier, once. */
describe('raising an alert', () => {
  let fx: NotifierFixture;
  let server: RecordingServer | undefined;
  afterEach(async () => {
    await fx.close();
    await server?.close();
    server = undefined;
  });

  const alert: AlertInput = {
    kind: 'crash-loop',
    severity: 'critical',
    summary: 'web-1 is crash-looping: 3 restarts in 10 min',
    target: 'local',
    project: 'default',
    instance: 'web-1',
    member: 'node1',
    correlationId: 'evt-1',
  };
  const auditedAlerts = async () => (await fx.audit.read({ count: 100 })).filter((r) => r.type === 'alert');
  const messages = () => server!.requests.map((r) => r.json as Body);

  /** A real notifier delivering to a recording webhook, and what it was handed. */
  async function receiving(): Promise<{ notifier: AlertNotifier; handed: AlertInput[] }> {
    server = await startRecordingServer();
    const real: Notifier = fx.webhookReplica(server.url);
    const handed: AlertInput[] = [];
    const notifier: AlertNotifier = {
      notify: (input, opts) => (handed.push(input), real.notify(input, opts)),
      amend: (fingerprint, change) => real.amend(fingerprint, change),
    };
    return { notifier, handed };
  }

  it('is audited once and notified once when two replicas and a retried job raise it with the same once-key', async () => {
    fx = new NotifierFixture();
    const { notifier, handed } = await receiving();
    const [a, b] = [new Alerts({ audit: fx.audit, notifier }), new Alerts({ audit: fx.audit, notifier })];
    const raised = await Promise.all([a, b, a].map((replica) => replica.raise(alert, { once: 'gate-alert:evt-1:heal', record: { rule: 'heal' } })));
    const stored = raised.filter((r) => r !== undefined);
    expect(stored).toHaveLength(1);
    expect(handed).toHaveLength(1);
    expect(await auditedAlerts()).toEqual([
      expect.objectContaining({
        type: 'alert',
        kind: 'crash-loop',
        severity: 'critical',
        summary: alert.summary,
        correlationId: 'evt-1',
        target: 'local',
        project: 'default',
        instance: 'web-1',
        rule: 'heal',
        fingerprint: stored[0]!.fingerprint,
      }),
    ]);
    await until('the firing message', () => messages().length === 1);
    expect(messages()[0]!.alerts).toMatchObject([{ kind: 'crash-loop', status: 'firing', instance: 'web-1' }]);
  });

  it('is audited only, and answered as built, in a process without a notifier (scheduler-only)', async () => {
    fx = new NotifierFixture();
    const alerts = new Alerts({ audit: fx.audit });
    expect(alerts.notifying).toBe(false);
    const built = await alerts.raise(alert);
    expect(built).toMatchObject({
      status: 'firing',
      fingerprint: alertFingerprint({ kind: 'crash-loop', target: 'local', project: 'default', instance: 'web-1' }),
    });
    expect(await auditedAlerts()).toEqual([expect.objectContaining({ kind: 'crash-loop', severity: 'critical', fingerprint: built!.fingerprint })]);
    expect(
      await alerts.resolveFiring('crash-loop', alert, { summary: 'running again', outcome: 'recovered' }),
      'nothing fires without a notifier',
    ).toBeUndefined();
  });

  it('resolved by its raiser is audited as resolved and clears it at the receiver that got the firing message', async () => {
    fx = new NotifierFixture();
    const { notifier } = await receiving();
    const alerts = new Alerts({ audit: fx.audit, notifier });
    await alerts.raise(alert);
    await until('the firing message', () => messages().length === 1);
    await alerts.resolve({ ...alert, summary: 'web-1 is Running again' });
    await until('the resolved message', () => messages().length === 2);
    expect(messages()[1]!.alerts).toMatchObject([{ kind: 'crash-loop', status: 'resolved', summary: 'web-1 is Running again' }]);
    expect((await auditedAlerts()).map((r) => [r.summary, r.severity, r.resolved ?? false])).toEqual([
      [alert.summary, 'critical', false],
      ['web-1 is Running again', 'info', true],
    ]);
  });

  it('resolveFiring ends a firing alert once, audited once; with none firing it audits nothing', async () => {
    fx = new NotifierFixture();
    const { notifier } = await receiving();
    const [a, b] = [new Alerts({ audit: fx.audit, notifier }), new Alerts({ audit: fx.audit, notifier })];
    await a.raise(alert);
    const why = { summary: 'web-1 is Running again', outcome: 'recovered' };
    const resolved = await Promise.all([a, b].map((replica) => replica.resolveFiring('crash-loop', alert, why)));
    expect(resolved.filter((r) => r !== undefined)).toEqual([expect.objectContaining({ status: 'resolved', outcome: 'recovered' })]);
    expect(await b.resolveFiring('crash-loop', { ...alert, instance: 'web-2' }, why)).toBeUndefined();
    expect((await auditedAlerts()).filter((r) => r.resolved)).toEqual([
      expect.objectContaining({ kind: 'crash-loop', summary: 'crash-loop resolved: web-1 is Running again', instance: 'web-1' }),
    ]);
  });
});
