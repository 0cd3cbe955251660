import { Job } from 'bullmq';
import { emittedEventId } from '../../src/actions/emit-action.js';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { keySpace } from '../../src/redis/key-space.js';
import { runTick } from '../../src/schedules/tick-runner.js';
import { planFor } from '../../src/schedules/schedule-plan.js';
import { SnapshotLedger, type JobReport } from '../../src/schedules/snapshot-ledger.js';
import { recordingAlerts } from '../alerts/recording-alerts.js';
import { defineSchedule, type Schedule } from '../../src/schedules/schedule.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { startActionRunner } from '../support/action-runner.js';
import { backupEvery } from '../support/schedule-bed.js';
import { cleanupsAfterEach } from '../support/stopped-after-each.js';
import { until } from '../support/wait.js';

const logger = pino({ level: 'silent' });
const hour = 3_600_000;

/**
 * Ticks driven by hand with a fake clock (the due time names the snapshot; `now` ages them), their
 * jobs run by a real action executor against the simulator, one tick after the other.
 */
async function bed(cleanups: (() => Promise<unknown>)[], instances: string[]) {
  const sim: RunningSimulator = await startSimulator({ instances: 0, timings: { taskMs: 5 } });
  cleanups.push(() => sim.stop());
  for (const name of instances) sim.controls.addInstance({ name, config: { 'user.backup': 'true' } });
  const redis = redisClient();
  cleanups.push(async () => redis.disconnect());
  const keys = keySpace(uniquePrefix('hk-own'));
  const target = `unix://${sim.socketPath}`;
  const client = new InstanceClient(parseTarget(target));
  cleanups.push(() => client.close());
  const audit = new AuditLog(redis, keys.audit);
  const metrics = new Metrics({ processMetrics: false });
  const { alerts, raised: gaveUp } = recordingAlerts(audit);
  const { actions, events, stop } = startActionRunner(redis, keys, () => client, { metrics, alerts });
  cleanups.push(stop);
  const { alerts: tickAlerting, raised: tickAlerts } = recordingAlerts(audit);
  const idle = () =>
    until('the housekeeping jobs finished', async () =>
      Object.values(await actions.getJobCounts('waiting', 'active', 'delayed', 'prioritized')).every((n) => n === 0),
    );
  /** Runs the tick due at `tickAt` and waits for its jobs to end. */
  const tick = async (schedule: Schedule, tickAt: number, now = tickAt) => {
    const report = await runTick(
      schedule,
      { client, audit, logger, target, actions, redis, keys, metrics, alerts: tickAlerting },
      { tickAt, correlationId: `schedule:${schedule.name}:${tickAt}`, now: () => now },
    );
    await idle();
    return report;
  };
  const snapshots = async (name: string) => (await client.listSnapshots(name)).map((s) => s.name).sort();
  const counted = async (result: string) => (await metrics.housekeepingSnapshots.get()).values.find((v) => v.labels.result === result)?.value ?? 0;
  return { sim, redis, keys, target, client, tick, snapshots, counted, gaveUp, tickAlerts, metrics, events };
}

describe('snapshots Reflex owns, and failures that are loud', () => {
  const cleanups = cleanupsAfterEach();

  it('the hourly Europe/Paris example across the 2026-10-25 change: 25 distinct snapshots for that day', async () => {
    const b = await bed(cleanups, ['paris']);
    const schedule = defineSchedule({
      name: 'hourly-backup',
      cron: '0 * * * *',
      tz: 'Europe/Paris',
      tasks: [
        { task: 'snapshot', namePattern: 'auto-%Y%m%d-%H%M' },
        { task: 'retention', keepLast: 100 },
      ],
    });
    const midnight = Date.UTC(2026, 9, 24, 22); // 00:00 in Paris (CEST), 2026-10-25
    for (let i = 0; i < 25; i++) await b.tick(schedule, midnight + i * hour);
    const names = await b.snapshots('paris');
    expect(names).toHaveLength(25);
    expect(names.every((n) => n.startsWith('auto-20261025-'))).toBe(true);
    // 00:00Z and 01:00Z are both 02:00 in Paris: the second one gets a suffix instead of being skipped.
    expect(names).toContain('auto-20261025-0200');
    expect(names).toContain('auto-20261025-0200-2');
    expect(b.sim.controls.calls('paris', 'snapshot')).toBe(25);
  }, 60_000);

  it('a snapshot that fails twice raises one alert and moves the failure metric; the next tick makes it', async () => {
    const b = await bed(cleanups, ['f1', 'ok1']);
    const schedule = defineSchedule({
      name: 'twice',
      every: '1h',
      attempts: 2,
      tasks: [
        { task: 'snapshot', namePattern: 'tw-%Y%m%d-%H%M' },
        { task: 'retention', keepLast: 3 },
      ],
    });
    const t0 = Date.UTC(2026, 0, 10, 10);
    b.sim.controls.failNext('f1', 2, 'pool busy');
    await b.tick(schedule, t0);
    expect(b.sim.controls.calls('f1', 'snapshot'), 'retried by the retry policy').toBe(2);
    // The give-up is recorded by the worker's 'failed' listener, after the job left the queue.
    await until('the give-up of f1', () => b.gaveUp.some((a) => a.instance === 'f1'), 5_000);
    expect(b.gaveUp.filter((a) => a.instance === 'f1')).toHaveLength(1);
    expect(b.gaveUp[0]!.summary).toMatch(/housekeeping on f1 gave up after 2 attempt\(s\)/);
    expect(await b.snapshots('f1')).toEqual([]);
    await b.tick(schedule, t0 + hour);
    expect(await b.counted('failed')).toBe(1);
    expect(await b.counted('made')).toBe(1);
    expect(await b.snapshots('f1')).toEqual(['tw-20260110-1100']);
    await b.tick(schedule, t0 + 2 * hour);
    expect(await b.counted('made')).toBe(3);
    expect(b.gaveUp, 'one alert for the one failure').toHaveLength(1);
  }, 60_000);

  it('retention deletes only what the ledger proves; with the ledger lost it deletes nothing and alerts once, resolved when the ledger proves a snapshot again', async () => {
    const b = await bed(cleanups, ['r1']);
    const schedule = defineSchedule(backupEvery('keep2', '1h', 'k-%Y%m%d-%H%M', 2));
    const t0 = Date.UTC(2026, 0, 10, 10);
    b.sim.controls.addInstance({ name: 'unused' });
    // A snapshot made by hand with a name the schedule could have made: never Reflex's.
    await b.client.createSnapshot('r1', { name: 'k-20260101-0000' }).then((op) => op.wait());
    for (let i = 0; i < 4; i++) await b.tick(schedule, t0 + i * hour);
    expect(await b.snapshots('r1')).toEqual(['k-20260101-0000', 'k-20260110-1200', 'k-20260110-1300']);
    expect(await b.counted('pruned')).toBe(1);
    await b.tick(schedule, t0 + 4 * hour);
    expect(await b.counted('pruned')).toBe(2);

    await b.redis.del(b.keys.schedules.ledger({ target: b.target, project: 'default', instance: 'r1' }));
    await b.tick(schedule, t0 + 5 * hour);
    expect(await b.snapshots('r1')).toEqual(['k-20260101-0000', 'k-20260110-1300', 'k-20260110-1400', 'k-20260110-1500']);
    // Raised at the first tick (the hand-made one, no record at all), resolved when the ledger proved the schedule's first snapshot, raised again now.
    const ownership = () => b.tickAlerts.filter((a) => a.kind === 'snapshot.ownership-unknown').map((a) => a.status ?? 'firing');
    expect(ownership()).toEqual(['firing', 'resolved', 'firing']);
    expect(b.tickAlerts.filter((a) => a.kind === 'snapshot.ownership-unknown').at(-1)!.summary).toMatch(/no record proves Reflex made them/);
    // The next tick proves its own snapshot again and prunes only that one's elders it made since.
    await b.tick(schedule, t0 + 6 * hour);
    await b.tick(schedule, t0 + 7 * hour);
    expect(await b.snapshots('r1')).toEqual(['k-20260101-0000', 'k-20260110-1300', 'k-20260110-1400', 'k-20260110-1600', 'k-20260110-1700']);
    expect(ownership(), 'resolved once the ledger proves a snapshot again').toEqual(['firing', 'resolved', 'firing', 'resolved']);
  }, 60_000);

  it('an instance whose newest snapshot is older than staleAfter raises one alert, resolved once a snapshot is made', async () => {
    const b = await bed(cleanups, ['s1']);
    expect(defineSchedule({ name: 'x', every: '1h', tasks: [{ task: 'snapshot' }] }).staleAfterMs, 'default: twice the interval').toBe(2 * hour);
    // The daemon stamps snapshots with the real clock; a tick reads their age on its own (`now`), moved ahead here.
    const schedule = defineSchedule({
      name: 'fresh',
      every: '1h',
      attempts: 1,
      staleAfter: 1500,
      tasks: [{ task: 'snapshot', namePattern: 'f-%Y%m%d-%H%M%S%L' }],
    });
    const tick = (aheadMs = 0) => b.tick(schedule, Date.now(), Date.now() + aheadMs);
    await tick();
    await tick();
    const age = (await b.metrics.housekeepingNewestAge.get()).values.find((v) => v.labels.instance === 's1');
    expect(age?.value).toBeGreaterThanOrEqual(0);
    expect(age?.value).toBeLessThan(1.5);
    b.sim.controls.failNext('s1', 100, 'disk full');
    await tick(1600);
    await tick(1600);
    const stale = b.tickAlerts.filter((a) => a.kind === 'snapshot.stale');
    expect(stale.map((a) => a.status ?? 'firing')).toEqual(['firing']);
    expect(stale[0]!.summary).toMatch(/s1: its newest snapshot from fresh was made .*, more than 1500ms ago \(staleAfter\)/);
    b.sim.controls.clearFaults('s1');
    await tick();
    await tick();
    expect(b.tickAlerts.filter((a) => a.kind === 'snapshot.stale').map((a) => a.status ?? 'firing')).toEqual(['firing', 'resolved']);
  }, 60_000);

  it("publishes the schedule's before and after events around each instance's steps, once per tick", async () => {
    const b = await bed(cleanups, ['e1']);
    const schedule = defineSchedule({
      name: 'hooked',
      every: '1h',
      events: { before: 'backup.before', after: 'backup.after' },
      tasks: [{ task: 'snapshot', namePattern: 'e-%Y%m%d-%H%M' }],
    });
    const t0 = Date.UTC(2026, 0, 10, 10);
    await b.tick(schedule, t0);
    const published = async (name: string) =>
      (await Job.fromId(b.events, `emit-${emittedEventId('hooked', name, `schedule:hooked:${t0}|default/e1`)}`))?.data as
        { event: { kind: string; name: string; instance: string; payload: Record<string, unknown> } } | undefined;
    const before = await published('backup.before');
    const after = await published('backup.after');
    expect(before?.event).toMatchObject({
      kind: 'rule.event',
      name: 'backup.before',
      instance: 'e1',
      payload: { schedule: 'hooked', steps: ['create snapshot e-20260110-1000'] },
    });
    expect(after?.event).toMatchObject({
      kind: 'rule.event',
      name: 'backup.after',
      instance: 'e1',
      payload: { schedule: 'hooked', result: 'done', done: 1, failed: [] },
    });
  }, 30_000);

  it("keeps a snapshot Reflex made when its job ends while the next tick plans: the job's state is read before the listing", async () => {
    const { client, redis, keys, target } = await bed(cleanups, ['c1']);
    const schedule = defineSchedule(backupEvery('racing', '2s', 'race-%H%M%S', 2));
    const ref = { target, project: 'default', instance: 'c1' };
    const ledger = new SnapshotLedger(redis, keys.schedules);
    const tickAt = Date.parse('2026-11-27T02:31:36Z');
    await ledger.apply(ref, new Map([['race-023136', { schedule: 'racing', tickAt, claimedAt: tickAt, jobId: 'made-late' }]]), []);
    const [inst] = await client.listInstances({ recursion: 1 });
    // The job making the claimed snapshot ends at the moment the plan asks how it ended.
    const jobState = async (jobId: string): Promise<JobReport> => {
      if (jobId !== 'made-late') return { state: 'unknown' };
      await (await client.createSnapshot('c1', { name: 'race-023136' })).wait();
      return { state: 'done' };
    };
    const planned = await planFor(schedule, client, { ...inst!, project: 'default' }, new Map(), tickAt + 2_000, () => tickAt + 2_000, {
      ledger,
      target,
      jobState,
    });
    expect(planned.snapshots.map((s) => s.name)).toContain('race-023136');
    expect([...planned.settlement!.owned.keys()]).toEqual(['race-023136']);
    expect(planned.settlement!.forget).toEqual([]);
  }, 30_000);
});
