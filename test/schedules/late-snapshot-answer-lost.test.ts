import { Job } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { defineSchedule } from '../../src/schedules/schedule.js';
import { settleLedger, type LedgerEntry } from '../../src/schedules/snapshot-ledger.js';
import { backupEvery, startScheduleBed } from '../support/schedule-bed.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';
import { until } from '../support/wait.js';

describe('a late snapshot whose answer is lost', () => {
  const stopped = stoppedAfterEach();

  it('is still the schedule’s: the daemon made it under the name the job recorded before sending, and retention prunes it', async () => {
    // Snapshots take 1.5 s: the daemon restarts while the job waits on its operation, so the job
    // never learns the outcome (its wait is cut; the operation is forgotten) though the snapshot is made.
    const bed = stopped(await startScheduleBed('hk-lost-answer', { taskMs: 1_500, instances: [{ name: 'c1', config: { 'user.backup': 'true' } }] }));
    const { sim, client, audit } = bed;
    const schedule = defineSchedule(backupEvery('la', '2s', 'la-%Y%m%d-%H%M%S-%L', 2));
    // Another tool's operation holds the first tick's job past its lateness: it names its snapshot when it takes it.
    sim.controls.hangNext('c1', 1);
    const hung = await client.createSnapshot('c1', { name: 'other-tool' });
    await bed.scheduler([schedule]);
    const records = () => audit.read({ instance: 'c1', count: 2000 });
    await until(
      'a tick missed behind the held job',
      async () => (await records()).some((r) => r.type === 'decision' && r.result === 'missed'),
      15_000,
    );
    sim.controls.clearFaults('c1');
    await client.cancelOperation(hung.id);

    const named = await until(
      'the held job names its snapshot by the time it is taken and sends it',
      async () => {
        const all = await records();
        const late = all.find((r) => r.type === 'call' && typeof r.snapshot === 'string');
        const sent =
          late && all.find((r) => r.type === 'call' && r.method === 'POST' && r.correlationId === late.correlationId && r.operationId !== undefined);
        return sent && String(late.snapshot);
      },
      15_000,
      20,
    );
    await sim.controls.restart(100);
    await until(`${named} made by the daemon`, async () => (await client.listSnapshots('c1')).some((s) => s.name === named), 10_000);

    // Newer snapshots of the schedule come; retention keeps the newest two it owns, so the lost answer's goes.
    await until(
      `${named} pruned once two newer snapshots of the schedule exist`,
      async () => {
        const names = (await client.listSnapshots('c1')).map((s) => s.name);
        return !names.includes(named) && names.filter((n) => n.startsWith('la-')).length >= 2;
      },
      30_000,
    );
    const deleted = (await records()).filter((r) => r.type === 'call' && r.method === 'DELETE' && String(r.path).includes(named));
    expect(deleted.length, 'deleted by the schedule’s retention').toBeGreaterThan(0);
  }, 90_000);

  it('is still the schedule’s when its worker stalls past its lock and the job runs again', async () => {
    const bed = stopped(await startScheduleBed('hk-stalled', { taskMs: 1_500, instances: [{ name: 'c1', config: { 'user.backup': 'true' } }] }));
    const { sim, client, audit, redis, keys, runner } = bed;
    const schedule = defineSchedule(backupEvery('ls', '2s', 'ls-%Y%m%d-%H%M%S-%L', 2));
    sim.controls.hangNext('c1', 1);
    const hung = await client.createSnapshot('c1', { name: 'other-tool' });
    await bed.scheduler([schedule]);
    const records = () => audit.read({ instance: 'c1', count: 2000 });
    await until(
      'a tick missed behind the held job',
      async () => (await records()).some((r) => r.type === 'decision' && r.result === 'missed'),
      15_000,
    );
    sim.controls.clearFaults('c1');
    await client.cancelOperation(hung.id);
    // Held from the snapshot's call on, as a stalled host holds everything: the job waits on its operation.
    const named = await until(
      'the held job names its snapshot and sends it',
      async () => {
        const all = await records();
        const late = all.find((r) => r.type === 'call' && typeof r.snapshot === 'string');
        const sent = late && all.find((r) => r.type === 'call' && r.method === 'POST' && r.correlationId === late.correlationId);
        if (sent) sim.controls.freeze();
        return sent && String(late.snapshot);
      },
      15_000,
      5,
    );
    const [job] = await runner.actions.getActive();
    expect(job, 'the late job is running').toBeDefined();
    // Its worker's lock lapses, as it does when the worker's host stalls longer than the lock: the job runs again.
    await redis.del(`${keys.bullPrefix}:${keys.actionsQueue}:${job!.id}:lock`);
    await until('the job taken again after its stall', async () => ((await Job.fromId(runner.actions, job!.id!))?.stalledCounter ?? 0) >= 1, 15_000);
    sim.controls.thaw();
    await until(
      `${named} pruned once two newer snapshots of the schedule exist`,
      async () => {
        const names = (await client.listSnapshots('c1')).map((s) => s.name);
        return !names.includes(named) && names.filter((n) => n.startsWith('ls-')).length >= 2;
      },
      30_000,
    );
  }, 90_000);

  // The settlement on its own: what the job's recorded names prove, and what they do not.
  const claim: LedgerEntry = { schedule: 'la', tickAt: 1_000, claimedAt: 1_000, jobId: 'job-1' };
  const snap = (name: string, createdAt: number) => ({ name, createdAt });

  it('a job that failed after an attempt made its late snapshot: the snapshot is the schedule’s, the planned name forgotten', () => {
    const s = settleLedger('la', new Map([['la-planned', claim]]), [snap('la-late', 5_000)], () => ({
      state: 'failed',
      named: ['la-late'],
      endedAt: 6_000,
    }));
    expect([...s.owned.keys()]).toEqual(['la-late']);
    expect(s.write.get('la-late')).toMatchObject({ jobId: 'job-1', createdAt: 5_000 });
    expect(s.forget).toEqual(['la-planned']);
    expect(s.failed).toEqual([]);
  });

  it('a recorded name is not proof of a snapshot made after the job ended, nor of one another claim holds', () => {
    const other: LedgerEntry = { schedule: 'la', tickAt: 3_000, claimedAt: 3_000, jobId: 'job-2' };
    const s = settleLedger(
      'la',
      new Map([
        ['la-planned', claim],
        ['la-taken', other],
      ]),
      [snap('la-manual', 6_000 + 61_000), snap('la-taken', 5_000)],
      (id) => (id === 'job-1' ? { state: 'done', named: ['la-manual', 'la-taken'], endedAt: 6_000 } : { state: 'pending' }),
    );
    expect(s.owned.size).toBe(0);
    expect(s.forget).toEqual(['la-planned']);
  });
});
