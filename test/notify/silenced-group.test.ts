import { afterEach, describe, expect, it } from 'vitest';
import type { Notifier } from '../../src/notify/notifier.js';
import { keySpace } from '../../src/redis/key-space.js';
import { Silences } from '../../src/silences/silences.js';
import { crashAlert, NotifierFixture, closeNotifier } from './notifier-fixture.js';
import { startRecordingServer, type RecordingServer } from './recording-server.js';
import { until } from '../support/wait.js';

interface Body {
  status: string;
  alerts: { instance: string; status: string }[];
}

const at = (s: number) => new Date(Date.parse('2026-03-01T10:00:00.000Z') + s * 1000).toISOString();
// A group interval well above the group wait: a firing alert held back to the interval misses the deadline below.
const timings = { groupWaitMs: 200, groupIntervalMs: 2500, repeatIntervalMs: 3_600_000 } as const;

describe('a silenced alert in a notification group', () => {
  let fx: NotifierFixture;
  let server: RecordingServer;
  afterEach(() => closeNotifier(fx, server));

  async function setup(): Promise<{ n: Notifier; silences: Silences }> {
    fx = new NotifierFixture();
    server = await startRecordingServer();
    const silences = new Silences(fx.redis, keySpace(fx.prefix).silences);
    const n = fx.webhookReplica(server.url, timings);
    return { n, silences };
  }
  const messages = () => server.requests.map((r) => (r.json as Body).alerts.map((a) => `${a.instance}:${a.status}`));
  /** Waits for a flush of the group after `since` (it schedules the next one a group interval on), so the next alert lands mid-interval. */
  async function flushedAfter(n: Notifier, since: number): Promise<void> {
    await until('a flush of the group', async () =>
      (await n.board.pendingGroups(n.mute)).some((g) => g.nextFlushAt !== undefined && Date.parse(g.nextFlushAt) >= since + timings.groupIntervalMs),
    );
  }

  /** Another instance crashes in the group, the receiver hears of it within group_wait, and of its recovery after. */
  async function crashAndHeal(n: Notifier, before: number): Promise<void> {
    const crash = await n.notify(crashAlert('web-2', { startsAt: at(10) }));
    await until(
      'web-2 firing within the group wait, not the group interval',
      () => server.requests.length === before + 1,
      timings.groupIntervalMs / 2,
    );
    await n.resolve(crash.fingerprint, { endsAt: at(11) });
    await until('web-2 resolved', () => server.requests.length === before + 2, 2 * timings.groupIntervalMs);
  }

  it('silenced before it fired: another instance of the group that crashes and heals is sent firing and resolved, the silenced one never', async () => {
    const { n, silences } = await setup();
    await silences.add({ scope: { instance: 'web-1' }, reason: 'kernel upgrade', durationMs: 60_000 });
    const t0 = Date.now();
    await n.notify(crashAlert('web-1', { startsAt: at(0) }));
    await flushedAfter(n, t0);
    await crashAndHeal(n, 0);
    expect(messages()).toEqual([['web-2:firing'], ['web-2:resolved']]);
  });

  it('silenced after its firing message: it leaves the group as the receiver sees it, and another crash and recovery are sent', async () => {
    const { n, silences } = await setup();
    await n.notify(crashAlert('web-1', { startsAt: at(0) }));
    await until('web-1 firing', () => server.requests.length === 1);
    await silences.add({ scope: { instance: 'web-1' }, reason: 'kernel upgrade', durationMs: 60_000 });
    const t1 = Date.now();
    await flushedAfter(n, t1);
    await crashAndHeal(n, 1);
    expect(messages()).toEqual([['web-1:firing'], ['web-2:firing'], ['web-2:resolved']]);
  });
});
