import { afterEach, describe, expect, it } from 'vitest';
import type { AlertInput } from '../../src/alerts/alert.js';
import { Alerts, type AlertNotifier } from '../../src/alerts/alerts.js';
import { ReflexError } from '../../src/errors/reflex-error.js';
import { NotifierFixture } from '../notify/notifier-fixture.js';
import { startRecordingServer, type RecordingServer } from '../notify/recording-server.js';
import { until } from '../support/wait.js';

interface Body {
  alerts: { kind: string; status: string; instance: string; summary: string }[];
}

/**
 * An alert raised once (a once-key) whose first send the notifier does not accept: the retry of
 * the failed call must raise it, not be answered "already raised".
 */
describe('an alert whose first send fails', () => {
  let fx: NotifierFixture;
  let server: RecordingServer;
  afterEach(async () => {
    await fx.close();
    await server.close();
  });

  const alert: AlertInput = {
    kind: 'housekeeping.failed',
    severity: 'warning',
    summary: 'nightly: the snapshot of web-1 failed 3 times',
    target: 'local',
    project: 'default',
    instance: 'web-1',
    correlationId: 'tick-1',
  };
  const messages = () => server.requests.map((r) => r.json as Body);

  /**
   * A real notifier sending to a recording webhook, which refuses (Redis gone for a moment) the
   * first alert it is handed with the status `refused`, and what it was handed.
   */
  async function refusingFirst(refused: 'firing' | 'resolved'): Promise<{ notifier: AlertNotifier; handed: AlertInput[] }> {
    server = await startRecordingServer();
    const real = fx.webhookReplica(server.url);
    const handed: AlertInput[] = [];
    let refuse = true;
    const notifier: AlertNotifier = {
      notify: async (input, opts) => {
        handed.push(input);
        if (refuse && (input.status ?? 'firing') === refused) {
          refuse = false;
          throw new ReflexError('REDIS_UNAVAILABLE', 'connection lost while storing the alert');
        }
        return real.notify(input, opts);
      },
      amend: (fingerprint, change) => real.amend(fingerprint, change),
    };
    return { notifier, handed };
  }

  it('is raised by the retry with the same once-key, reaches the receiver once, and is once-only from then on', async () => {
    fx = new NotifierFixture();
    const { notifier, handed } = await refusingFirst('firing');
    const alerts = new Alerts({ audit: fx.audit, notifier });
    const once = { once: 'give-up:job-7:3' };

    await expect(alerts.raise(alert, once)).rejects.toMatchObject({ code: 'REDIS_UNAVAILABLE' });
    const retried = await alerts.raise(alert, once);
    expect(retried, 'the retry raises it').toMatchObject({ kind: 'housekeeping.failed', status: 'firing' });
    expect(await alerts.raise(alert, once), 'a send accepted keeps the key: a repeat is not raised').toBeUndefined();
    expect(handed).toHaveLength(2);

    await until('the firing message', () => messages().length === 1);
    expect(messages()[0]!.alerts).toMatchObject([{ kind: 'housekeeping.failed', status: 'firing', instance: 'web-1' }]);
    const audited = (await fx.audit.read({ count: 100 })).filter((r) => r.type === 'alert');
    expect(
      audited.map((r) => r.fingerprint),
      'audited by the failed call and by its retry',
    ).toEqual([retried!.fingerprint, retried!.fingerprint]);
  });

  it('resolved once, is resolved by the retry of a failed send', async () => {
    fx = new NotifierFixture();
    const { notifier, handed } = await refusingFirst('resolved');
    const alerts = new Alerts({ audit: fx.audit, notifier });
    await alerts.raise(alert);
    await until('the firing message', () => messages().length === 1);

    const ended = { ...alert, summary: 'web-1 snapshots again' };
    await expect(alerts.resolve(ended, { once: 'resolved:tick-2' })).rejects.toMatchObject({ code: 'REDIS_UNAVAILABLE' });
    await alerts.resolve(ended, { once: 'resolved:tick-2' });
    await until('the resolved message', () => messages().length === 2);
    expect(messages()[1]!.alerts).toMatchObject([{ kind: 'housekeeping.failed', status: 'resolved', summary: 'web-1 snapshots again' }]);
    expect(handed.map((a) => a.status ?? 'firing')).toEqual(['firing', 'resolved', 'resolved']);
  });
});
