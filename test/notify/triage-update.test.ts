import { afterEach, describe, expect, it } from 'vitest';
import type { Alert } from '../../src/alerts/alert.js';
import { AlertUpdates } from '../../src/notify/alert-update.js';
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
});
