import type { RedisConnection } from '../../src/redis/connect.js';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { keySpace } from '../../src/redis/key-space.js';
import { defineSchedule, type ScheduleDefinition } from '../../src/schedules/schedule.js';
import { nextDue } from '../../src/schedules/next-due.js';
import { startScheduler, type RunningScheduler } from '../../src/schedules/scheduler.js';
import type { Clock } from '../../src/clock/clock.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { startActionRunner } from '../support/action-runner.js';
import { until } from '../support/wait.js';
import { cleanupsAfterEach } from '../support/stopped-after-each.js';

const logger = pino({ level: 'silent' });

describe('scheduler on the simulator', () => {
  const cleanups = cleanupsAfterEach();

  async function simulator(): Promise<RunningSimulator> {
    const sim = await startSimulator({ instances: 0, timings: { taskMs: 5 } });
    cleanups.push(() => sim.stop());
    for (const name of ['a1', 'a2', 'a3']) sim.controls.addInstance({ name, config: { 'user.backup': 'true' } });
    sim.controls.addInstance({ name: 'other' });
    return sim;
  }

  /** One replica: its own Redis connection and API client, the shared prefix. */
  async function replica(
    sim: RunningSimulator,
    prefix: string,
    def: ScheduleDefinition,
    clock?: Clock,
  ): Promise<{ scheduler: RunningScheduler; redis: RedisConnection; audit: AuditLog; client: InstanceClient; stop: () => Promise<void> }> {
    const redis = redisClient();
    const keys = keySpace(prefix);
    const target = `unix://${sim.socketPath}`;
    const client = new InstanceClient(parseTarget(target));
    const audit = new AuditLog(redis, keys.audit);
    const runner = startActionRunner(redis, keys, () => client);
    const scheduler = await startScheduler({
      target,
      redis,
      client,
      audit,
      keys,
      logger,
      schedules: [defineSchedule(def)],
      actions: runner.actions,
      clock,
    });
    let stopped = false;
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      await scheduler.stop();
      await runner.stop();
      await client.close();
      redis.disconnect();
    };
    cleanups.push(stop);
    return { scheduler, redis, audit, client, stop };
  }

  /** The audit log of a prefix, read over a connection of the test's own (replicas close theirs on stop). */
  function auditOf(prefix: string): AuditLog {
    const redis = redisClient();
    cleanups.push(async () => redis.disconnect());
    return new AuditLog(redis, keySpace(prefix).audit);
  }

  const snapshotEverySecond: ScheduleDefinition = {
    name: 'snap',
    every: '1s',
    scope: { filter: 'config.user.backup eq true' },
    tasks: [{ task: 'snapshot', namePattern: 'auto-%Y%m%d-%H%M%S' }],
  };

  it('runs each tick once with three replicas', async () => {
    const sim = await simulator();
    const prefix = uniquePrefix('sched3');
    const replicas = await Promise.all([1, 2, 3].map(() => replica(sim, prefix, snapshotEverySecond)));
    await until('four ticks', () => sim.controls.calls('a1', 'snapshot') >= 4, 15_000);
    await Promise.all(replicas.map((r) => r.stop()));

    const client = new InstanceClient(parseTarget(`unix://${sim.socketPath}`));
    cleanups.push(() => client.close());
    // A snapshot call answered just before its replica stopped may still be making its snapshot.
    const snapshotsMade = async () =>
      (await Promise.all(['a1', 'a2', 'a3'].map(async (n) => (await client.listSnapshots(n)).length === sim.controls.calls(n, 'snapshot')))).every(
        Boolean,
      );
    await until('every snapshot call has made its snapshot', snapshotsMade);
    const names = (await client.listSnapshots('a1')).map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    let made = 0;
    for (const n of ['a1', 'a2', 'a3']) {
      // Every snapshot call made a snapshot: no replica asked for a tick another one had taken.
      // (A tick whose earlier job on an instance still ran is missed there: counts may differ by instance.)
      expect(sim.controls.calls(n, 'snapshot')).toBe((await client.listSnapshots(n)).length);
      made += (await client.listSnapshots(n)).length;
    }
    expect(sim.controls.calls('other')).toBe(0);
    // One plan per tick and instance, whichever replica ran it.
    // A tick skipped because the previous one still runs (slow machine) has no instance; one missed on an instance whose previous job still runs made no plan there.
    const decisions = (await auditOf(prefix).read({})).filter(
      (r) => r.type === 'decision' && r.rule === 'snap' && r.instance !== undefined && r.result !== 'missed',
    );
    const perTick = new Map<string, number>();
    for (const d of decisions) perTick.set(`${d.correlationId} ${d.instance}`, (perTick.get(`${d.correlationId} ${d.instance}`) ?? 0) + 1);
    expect([...perTick.values()].every((c) => c === 1)).toBe(true);
    expect(perTick.size).toBe(made);
  }, 40_000);

  it('with several targets, each tick runs on every target and audits each under its own', async () => {
    const sims = [await simulator(), await simulator()];
    const prefix = uniquePrefix('sched-targets');
    const redis = redisClient();
    const keys = keySpace(prefix);
    const targets = sims.map((sim) => ({ target: `unix://${sim.socketPath}`, client: new InstanceClient(parseTarget(`unix://${sim.socketPath}`)) }));
    const runner = startActionRunner(redis, keys, (t) => targets.find((x) => x.target === t)!.client);
    const scheduler = await startScheduler({
      target: targets[0]!.target,
      client: targets[0]!.client,
      targets,
      redis,
      audit: new AuditLog(redis, keys.audit),
      keys,
      logger,
      schedules: [defineSchedule(snapshotEverySecond)],
      actions: runner.actions,
    });
    cleanups.push(async () => {
      await scheduler.stop();
      await runner.stop();
      for (const t of targets) await t.client.close();
      redis.disconnect();
    });
    await until('a tick on both servers', () => sims.every((sim) => sim.controls.calls('a1', 'snapshot') >= 1), 10_000);
    await scheduler.stop();
    for (const sim of sims) expect(sim.controls.calls('other')).toBe(0);
    const decisions = (await auditOf(prefix).read({})).filter((r) => r.type === 'decision' && r.instance === 'a1');
    expect(new Set(decisions.map((d) => d.target))).toEqual(new Set(targets.map((t) => t.target)));
  }, 30_000);

  it('a dry-run plans and audits but changes nothing', async () => {
    const sim = await simulator();
    const client = new InstanceClient(parseTarget(`unix://${sim.socketPath}`));
    cleanups.push(() => client.close());
    for (const name of ['s1', 's2', 's3']) await (await client.createSnapshot('a1', { name })).wait();
    await (await client.createSnapshot('a1', { name: 'gone', expiresAt: new Date(Date.now() - 60_000) })).wait();
    sim.controls.resetCalls();
    const prefix = uniquePrefix('dry');
    const r = await replica(sim, prefix, {
      name: 'dry',
      every: '1s',
      scope: { filter: 'config.user.backup eq true' },
      tasks: [{ task: 'snapshot' }, { task: 'retention', keepLast: 1, owned: 'any' }, { task: 'prune-expired' }],
      dryRun: true,
    });
    const log = auditOf(prefix);
    await until(
      'two dry-run ticks',
      async () => new Set((await log.read({})).filter((x) => x.dryRun === true && x.type === 'decision').map((x) => x.correlationId)).size >= 2,
      10_000,
    );
    await r.stop();
    expect(sim.controls.callCounts()).toEqual({});
    expect((await client.listSnapshots('a1')).map((s) => s.name).sort()).toEqual(['gone', 's1', 's2', 's3']);
    const records = await log.read({});
    const plan = records.find((x) => x.type === 'decision' && x.instance === 'a1');
    expect(plan?.summary).toMatch(
      /dry-run plan: create snapshot dry-\d{8}-\d{6} \[dry-run\]; delete snapshot s1 .*; delete snapshot gone \(retention: expired/,
    );
    expect(
      records.some(
        (x) => x.type === 'call' && x.dryRun === true && String(x.summary).startsWith('dry-run: would DELETE /1.0/instances/a1/snapshots/'),
      ),
    ).toBe(true);
  }, 30_000);

  it('catch-up: ticks missed while every replica was down for an hour run once on return, or are skipped (lateness on virtual time)', async () => {
    const sim = await simulator();
    for (const catchUp of ['one', 'skip'] as const) {
      const def: ScheduleDefinition = { ...snapshotEverySecond, name: `late-${catchUp}`, every: '2s', catchUp, catchUpGrace: '10m' };
      const prefix = uniquePrefix(`late-${catchUp}`);
      const first = await replica(sim, prefix, def);
      const log = auditOf(prefix);
      await until('the first tick', async () => (await log.read({})).some((x) => x.type === 'outcome' && x.rule === def.name), 10_000);
      await first.stop();
      // The timeline is BullMQ's, in Redis: from the pending tick on, two ticks come due with nobody running, and it keeps one job for them.
      const redis = redisClient();
      cleanups.push(async () => redis.disconnect());
      const pending = await nextDue(redis, keySpace(prefix), defineSchedule(def));
      expect(pending.from).toBe('scheduler');
      await until('two ticks due with nobody running', () => Date.now() > pending.at + 2_000, 15_000);
      const backAt = Date.now();
      // The replicas come back an hour later as far as lateness goes: far past the ten-minute grace.
      const anHourLater: Clock = { now: () => Date.now() + 3_600_000 };
      const second = await replica(sim, prefix, def, anHourLater);
      const dueAt = (x: { correlationId: string }) => Number(x.correlationId.split(':').pop());
      const records = async (type: string) => (await log.read({})).filter((x) => x.type === type && x.rule === def.name);
      const dueWhileDown = async (type: string) => new Set((await records(type)).map(dueAt).filter((due) => due >= pending.at && due < backAt));
      // A tick due after the return has been handled too: the scheduler went on past the missed ones.
      const wentOn = async (type: string) => (await records(type)).some((x) => dueAt(x) > backAt);
      if (catchUp === 'one') {
        await until(
          'the missed ticks run, and a later one',
          async () => (await dueWhileDown('outcome')).size > 0 && (await wentOn('outcome')),
          10_000,
        );
        expect((await dueWhileDown('outcome')).size).toBe(1); // one run for all the missed ticks
      } else {
        await until(
          'the missed ticks skipped, and a later one',
          async () => (await dueWhileDown('decision')).size > 0 && (await wentOn('decision')),
          10_000,
        );
        expect((await dueWhileDown('outcome')).size).toBe(0);
        expect((await records('decision')).filter((x) => dueAt(x) >= pending.at && dueAt(x) < backAt).map((x) => x.summary)).toEqual([
          expect.stringMatching(/skipped: 36\d\d s late \(catchUp: skip\)$/),
        ]);
      }
      await second.stop();
    }
  }, 60_000);
});
