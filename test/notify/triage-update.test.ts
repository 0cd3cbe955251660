import { afterEach, describe, expect, it } from 'vitest';
import { toAlert, type Alert } from '../../src/alerts/alert.js';
import { alertmanagerLabels, alertmanagerRequest } from '../../src/notify/alertmanager-receiver.js';
import { AlertUpdates } from '../../src/notify/alert-update.js';
import { pagerDutyDedupKey, pagerDutyRequests } from '../../src/notify/pagerduty-receiver.js';
import { reflexLines } from '../../src/notify/message-text.js';
import type { Notification } from '../../src/notify/notification.js';
import type { AlertmanagerConfig, PagerDutyConfig } from '../../src/notify/receiver-config.js';
import { keySpace } from '../../src/redis/key-space.js';
import { closeNotifier, crashAlert, NotifierFixture } from './notifier-fixture.js';
import { startRecordingServer, type RecordingServer } from './recording-server.js';
import { until } from '../support/wait.js';

/**
 * A triage step (docs/notifications.md, "Triage updates") reaches the receiver once, as an update
 * of the alert it holds, and stays on the alert: the next flushes do not send it again, and a
 * replica or a retried job raising the same firing alert again does not take it off.
 */
describe('a triage update of a firing alert', () => {
  let fx: NotifierFixture | undefined;
  let server: RecordingServer | undefined;
  afterEach(() => closeNotifier(fx, server));

  it('is sent once, as the same alert still firing, and survives the alert raised again', async () => {
    fx = new NotifierFixture();
    server = await startRecordingServer();
    const notifier = fx.webhookReplica(server.url);
    const alerts = () => server!.requests.map((r) => (r.json as { alerts: Alert[] }).alerts);
    const first = await notifier.notify(crashAlert('web-1', { outcome: undefined, actions: [] }));
    await until('the firing message', () => server!.requests.length === 1);

    const updates = new AlertUpdates(fx.redis, keySpace(fx.prefix).notify);
    const at = new Date().toISOString();
    const changed = await updates.update({ target: 'local', project: 'default', instance: 'web-1' }, (known) => ({
      triage: { acknowledged: { by: 'alice', at }, notes: [], revision: (known.triage?.revision ?? 0) + 1 },
    }));
    await updates.close();
    expect(changed.map((a) => a.fingerprint)).toEqual([first.fingerprint]);
    await until('the update', () => server!.requests.length === 2);
    const [update] = alerts()[1]!;
    expect(update).toMatchObject({
      fingerprint: first.fingerprint,
      status: 'firing',
      startsAt: first.startsAt,
      triage: { acknowledged: { by: 'alice' } },
    });

    // Raised again as a replica would: the stored alert keeps what the people on call said.
    const again = await notifier.notify(crashAlert('web-1', { outcome: undefined, actions: [] }));
    expect(again.triage?.acknowledged?.by).toBe('alice');
    await fx.quietFor(3);
    expect(server.requests, 'no repeat of the update, no new alert').toHaveLength(2);
  });

  it('reads, in every chat message and in Alertmanager, as who is on it, on the same alert', () => {
    const at = '2026-12-02T20:00:00.000Z';
    const alert = toAlert({
      ...crashAlert('web-1'),
      triage: {
        acknowledged: { by: 'alice', at },
        assignee: { name: 'bob', by: 'alice', at },
        notes: [{ by: 'carol', at, text: 'host rebooted' }],
        revision: 3,
      },
    });
    expect(reflexLines(alert).slice(-3)).toEqual([
      `Acknowledged by alice at ${at}`,
      `Assigned to bob (by alice at ${at})`,
      `Note by carol at ${at}: host rebooted`,
    ]);
    const n: Notification = { id: 'n', receiver: 'am', groupKey: 'g', groupLabels: {}, status: 'firing', alerts: [alert], repeat: false };
    const [posted] = JSON.parse(alertmanagerRequest({ firingTtlMs: 3_600_000 } as AlertmanagerConfig, 'http://am', {}, n, new Date()).body) as {
      labels: Record<string, string>;
      annotations: Record<string, string>;
    }[];
    expect(posted!.annotations).toMatchObject({ acknowledged_by: 'alice', acknowledged_at: at, assignee: 'bob', note: 'host rebooted' });
    const events = pagerDutyRequests({} as PagerDutyConfig, 'key', n).map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(events.map((e) => [e.event_action, e.dedup_key])).toEqual([
      ['trigger', pagerDutyDedupKey(alert)],
      ['acknowledge', pagerDutyDedupKey(alert)],
    ]);
    expect(posted!.labels, 'the labels of the alert Alertmanager holds: an update, not a new alert').toEqual(
      alertmanagerLabels(toAlert(crashAlert('web-1'))),
    );
  });
});
