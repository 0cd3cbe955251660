import { describe, expect, it } from 'vitest';
import { formatSnapshotName } from '../../src/schedules/housekeeping/snapshot-name.js';
import { Metrics } from '../../src/metrics/metrics.js';
import type { RunningScheduler } from '../../src/schedules/scheduler.js';
import { defineSchedule } from '../../src/schedules/schedule.js';
import { backupEvery, startScheduleBed } from '../support/schedule-bed.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';
import { until } from '../support/wait.js';

/** The time a `co-YYYYmmdd-HHMMSS` name stands for (UTC). */
function timeOfName(name: string): number {
  const m = /^co-(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})/.exec(name);
  if (!m) throw new Error(`not a schedule name: ${name}`);
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
}

describe('schedule ticks missed behind a hung operation', () => {
  const stopped = stoppedAfterEach();

  it('coalesce as sanoid does: one snapshot when the operation frees, named by the time it is taken; the missed ticks audited and counted; retention deletes no burst', async () => {
    const bed = stopped(await startScheduleBed('hk-missed', { taskMs: 20, instances: [{ name: 'c1', config: { 'user.backup': 'true' } }] }));
    const { sim, redis, keys, target, client, audit } = bed;
    const metrics = new Metrics({ processMetrics: false });
    const schedule = defineSchedule(backupEvery('co', '2s', 'co-%Y%m%d-%H%M%S', 3));
    const start = (): Promise<RunningScheduler> => bed.scheduler([schedule], { metrics });
    // Another tool's snapshot operation on c1 stays Running, as LXD kept one for 2.5 min: the tick's job waits behind it.
    sim.controls.hangNext('c1', 1);
    const hung = await client.createSnapshot('c1', { name: 'other-tool' });
    const scheduler = await start();
    const records = () => audit.read({ instance: 'c1', count: 1000 });

    const first = await until(
      "the first tick's plan",
      async () => (await records()).find((r) => r.type === 'decision' && r.result !== 'missed'),
      10_000,
    );
    const firstDue = Number(first.correlationId.split(':').pop());
    const missed = await until(
      'two ticks missed while the operation hangs',
      async () => {
        const m = (await records()).filter((r) => r.type === 'decision' && r.result === 'missed');
        return m.length >= 2 && m;
      },
      15_000,
    );
    expect(missed[0]!.summary).toContain(`the job of the tick due ${new Date(firstDue).toISOString()} has not run yet`);
    expect((await client.listSnapshots('c1')).length, 'nothing taken while the operation hangs').toBe(0);
    expect(
      (await records()).filter((r) => r.type === 'call'),
      'no call sent while it hangs',
    ).toEqual([]);

    // No more ticks, so what the release brings is on its own; then the operation frees.
    await scheduler.stop();
    const missedCount = (await records()).filter((r) => r.type === 'decision' && r.result === 'missed').length;
    const releasedAt = Date.now();
    sim.controls.clearFaults('c1');
    await client.cancelOperation(hung.id);
    await until(
      'the held job done',
      async () => (await records()).some((r) => r.type === 'outcome' && r.correlationId === first.correlationId && r.result === 'done'),
      15_000,
    );

    const snaps = await client.listSnapshots('c1');
    expect(snaps, 'exactly one snapshot for the first tick and the missed ones').toHaveLength(1);
    const name = snaps[0]!.name;
    expect(name).not.toBe(formatSnapshotName('co-%Y%m%d-%H%M%S', firstDue));
    expect(timeOfName(name)).toBeGreaterThanOrEqual(Math.floor(releasedAt / 1000) * 1000);
    expect(timeOfName(name)).toBeLessThanOrEqual(Date.now());
    expect((await records()).some((r) => r.type === 'call' && r.summary.includes(`so it is named by the time it is taken: ${name}`))).toBe(true);
    const counted = (await metrics.housekeepingSnapshots.get()).values.find((v) => v.labels.result === 'missed')?.value;
    expect(counted).toBe(missedCount);

    // The next tick takes the late snapshot for the schedule's (the ledger has it from the job) and deletes nothing.
    const stopAt = Date.now();
    await start();
    const plan = await until(
      "the next tick's plan",
      async () => (await records()).find((r) => r.type === 'decision' && r.result !== 'missed' && Number(r.correlationId.split(':').pop()) > stopAt),
      10_000,
    );
    expect(plan.summary).not.toContain('delete');
    await until('its snapshot', async () => (await client.listSnapshots('c1')).length === 2, 10_000);
    const entries = await redis.hgetall(keys.schedules.ledger({ target, project: 'default', instance: 'c1' }));
    expect(JSON.parse(entries[name]!)).toMatchObject({ schedule: 'co', tickAt: firstDue, createdAt: expect.any(Number) });
    // Nothing of unknown ownership; a hang that outlasted staleAfter (twice the interval) alerted snapshot.stale, resolved by the late snapshot.
    const alerts = (await records()).filter((r) => r.type === 'alert');
    expect(alerts.filter((r) => r.kind !== 'snapshot.stale')).toEqual([]);
    expect(alerts.map((r) => r.resolved ?? false)).toEqual(alerts.length ? [false, true] : []);
  }, 60_000);
});
