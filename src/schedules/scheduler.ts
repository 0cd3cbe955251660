import { Queue, Worker, type Job } from '../redis/commonjs-packages.js';
import { duplicateConnection, type RedisConnection } from '../redis/connect.js';
import type { Logger } from 'pino';
import { z } from 'zod';
import { TokenLock } from '../redis/token-lock.js';
import type { Alerts } from '../alerts/alerts.js';
import type { AuditLog } from '../audit/audit-log.js';
import { systemClock, type Clock } from '../clock/clock.js';
import type { InstanceClient } from '../client/client.js';
import type { KeySpace, ScheduleKeys } from '../redis/key-space.js';
import type { Schedule } from './schedule.js';
import { workerLockOptions } from '../errors/retry-policy.js';
import { runTick, type TickReport } from './tick-runner.js';
import type { Metrics } from '../metrics/metrics.js';

/**
 * Payload of a tick job, as BullMQ's job scheduler stamps it out: which schedule, and the
 * fingerprint of the definition that created the scheduler (replicas whose copy differs say so).
 * The tick's due time is the job's `opts.prevMillis`.
 */
export const tickJobSchema = z.strictObject({ schedule: z.string(), fingerprint: z.string() });
export type TickJob = z.infer<typeof tickJobSchema>;

/** Options of {@link startScheduler}. */
export interface SchedulerOptions {
  /** The target as configured (audit records and lock keys). */
  target: string;
  redis: RedisConnection;
  client: InstanceClient;
  /** Every target a tick runs on, one after the other (a deployment with several). Default: `target` with `client`. */
  targets?: { target: string; client: InstanceClient }[];
  audit: AuditLog;
  keys: KeySpace;
  logger: Logger;
  /** The schedules to run (the rule set's: the rules folder is loaded in one place, rules/rules-folder.ts). */
  schedules: Schedule[];
  /** Ticks run at once by this replica (of different schedules; one schedule never overlaps itself). Default 2. */
  concurrency?: number;
  /** The actions queue: each instance's steps of a tick run there, through the action executor. */
  actions: Queue;
  /** Counts ticks and snapshots and tracks each instance's newest snapshot; none: not counted. */
  metrics?: Metrics;
  /** Raises and resolves housekeeping alerts (stale snapshots, lost ownership records). Default: audited only. */
  alerts?: Pick<Alerts, 'raise' | 'resolve'>;
  /**
   * The time a tick's lateness (catch-up) and its plans (snapshot freshness, expiry) are read
   * against; the ticks come due on BullMQ's job schedulers, in Redis. Default: the wall clock.
   */
  clock?: Clock;
}

/** A running scheduler. */
export interface RunningScheduler {
  /** The schedules this replica runs ticks for (as of the last reload). */
  schedules: Schedule[];
  /**
   * Runs these schedules from now on (a rules reload): the ticks taken from now on use them at
   * once (a tick of a schedule no longer declared is skipped), then the job schedulers in Redis
   * are reconciled with them as at start: added, replaced when changed, removed when gone.
   */
  reload(schedules: Schedule[]): Promise<void>;
  /** Stops taking ticks and lets the current ones finish. The job schedulers stay in Redis. */
  stop(): Promise<void>;
}

/**
 * Runs schedules with BullMQ job schedulers: one per schedule in a shared queue, so each tick is
 * one job that exactly one replica's worker takes, and the timeline lives in Redis across restarts.
 *
 * At start, under a Redis lock, the replica reconciles the job schedulers with the schedules it
 * loaded: it creates missing ones, replaces those whose definition changed (by fingerprint;
 * an unchanged one is left alone, so restarts and extra replicas do not reset its timeline),
 * and removes those no schedule declares any more.
 *
 * Catch-up: BullMQ keeps one pending job per scheduler. A tick that came due while every replica
 * was down is taken on return, once, however many were missed, and the next one is aligned to
 * the interval or cron again. `catchUp: 'one'` runs that late tick; `'skip'` drops a tick that
 * starts more than the grace after its due time.
 */
export async function startScheduler(opts: SchedulerOptions): Promise<RunningScheduler> {
  const { logger, redis, keys, audit } = opts;
  const clock = opts.clock ?? systemClock;
  const skeys = keys.schedules;
  let active = opts.schedules.filter((s) => s.enabled);
  logger.info({ schedules: active.map((s) => s.name) }, `loaded ${active.length} schedule(s)`);
  let byName = new Map(active.map((s) => [s.name, s]));

  const queueConnection = duplicateConnection(redis);
  const workerConnection = duplicateConnection(redis);
  const queue = new Queue(skeys.queue, { connection: queueConnection, prefix: keys.bullPrefix });
  queue.on('error', (err) => logger.debug({ err }, 'scheduler queue error'));
  // A Redis that refuses writes at the start (full, read-only) must not stop the replica from
  // starting (/readyz says what is wrong): the schedules are set up once it takes them.
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const setUp = async (): Promise<void> => {
    try {
      await reconcile(queue, active, redis, skeys, logger);
    } catch (err) {
      if (stopped) return;
      logger.error({ err }, 'could not set up the schedules in Redis; trying again in 5 s (no tick comes until then)');
      retry = setTimeout(() => void setUp(), 5_000);
    }
  };
  await setUp();

  // One tick of a schedule at a time; the lock lapses within seconds of its holder's death, so the next tick is not held up.
  const running = new TokenLock(redis);
  const processTick = async (job: Job): Promise<string> => {
    const data = tickJobSchema.parse(job.data);
    const schedule = byName.get(data.schedule);
    if (!schedule) {
      logger.warn({ schedule: data.schedule }, 'tick of a schedule this replica does not know (removed, or replicas run different rules)');
      return 'unknown schedule';
    }
    const dueAt = dueTime(job);
    const lateMs = clock.now() - dueAt;
    const correlationId = `schedule:${schedule.name}:${dueAt}`;
    const rec = { correlationId, target: opts.target, rule: schedule.name, schedule: schedule.name, dueAt: new Date(dueAt).toISOString() };
    if (data.fingerprint !== schedule.fingerprint)
      logger.warn({ schedule: schedule.name }, "tick created from another version of this schedule; running this replica's");
    if (lateMs > schedule.catchUpGraceMs && schedule.catchUp === 'skip') {
      logger.info({ schedule: schedule.name, lateMs }, 'missed tick skipped (catchUp: skip)');
      await audit.append({
        ...rec,
        type: 'decision',
        summary: `${schedule.name}: tick due ${rec.dueAt} skipped: ${Math.round(lateMs / 1000)} s late (catchUp: skip)`,
        lateMs,
      });
      opts.metrics?.housekeepingTicks.inc({ schedule: schedule.name, result: 'skipped' });
      return 'skipped: late';
    }
    if (await redis.exists(skeys.done(schedule.name, dueAt))) {
      opts.metrics?.housekeepingTicks.inc({ schedule: schedule.name, result: 'skipped' });
      return 'skipped: already ran';
    }
    // A tick taken over from a replica that died may find the dead one's lock for a few seconds more.
    const held = await running.acquire(skeys.running(schedule.name), 10_000, 200);
    if (!held) {
      logger.warn({ schedule: schedule.name }, 'tick skipped: the previous tick is still running');
      await audit.append({
        ...rec,
        type: 'decision',
        summary: `${schedule.name}: tick due ${rec.dueAt} skipped: the previous tick is still running`,
      });
      opts.metrics?.housekeepingTicks.inc({ schedule: schedule.name, result: 'skipped' });
      return 'skipped: overlap';
    }
    try {
      if (lateMs > schedule.catchUpGraceMs) logger.info({ schedule: schedule.name, lateMs }, 'running a missed tick (catchUp: one)');
      const report: TickReport = { plans: [], queued: 0, failed: 0, missed: 0 };
      for (const t of opts.targets ?? [{ target: opts.target, client: opts.client }]) {
        const r = await runTick(
          schedule,
          { client: t.client, audit, logger, target: t.target, actions: opts.actions, redis, keys, metrics: opts.metrics, alerts: opts.alerts },
          { tickAt: dueAt, correlationId, now: () => clock.now() },
        );
        report.plans.push(...r.plans);
        report.queued += r.queued;
        report.failed += r.failed;
        report.missed += r.missed;
      }
      const interval = schedule.everyMs ?? 3_600_000;
      await redis.set(skeys.done(schedule.name, dueAt), '1', 'PX', Math.min(86_400_000, Math.max(60_000, 3 * interval)));
      opts.metrics?.housekeepingTicks.inc({ schedule: schedule.name, result: 'ran' });
      const summary = `${report.plans.length} instance(s) planned, ${report.queued} queued, ${report.failed} failed${report.missed ? `, ${report.missed} missed (an earlier tick's job has not run yet)` : ''}`;
      logger[report.queued || report.failed || report.missed ? 'info' : 'debug']({ schedule: schedule.name, dueAt: rec.dueAt }, `tick: ${summary}`);
      return summary;
    } finally {
      await held.release();
    }
  };

  const worker = new Worker(skeys.queue, processTick, {
    connection: workerConnection,
    prefix: keys.bullPrefix,
    concurrency: opts.concurrency ?? 2,
    ...workerLockOptions,
  });
  worker.on('error', (err) => logger.error({ err }, 'scheduler worker error'));
  worker.on('failed', (job, err) => logger.error({ schedule: (job?.data as TickJob | undefined)?.schedule, err }, 'schedule tick failed'));

  return {
    get schedules() {
      return active;
    },
    async reload(next) {
      active = next.filter((s) => s.enabled);
      byName = new Map(active.map((s) => [s.name, s]));
      await reconcile(queue, active, redis, skeys, logger);
    },
    async stop() {
      stopped = true;
      clearTimeout(retry);
      await worker.close();
      await queue.close();
      queueConnection.disconnect();
      workerConnection.disconnect();
    },
  };
}

/**
 * When a tick was due. BullMQ names each job its scheduler stamps out `repeat:<id>:<due ms>`; the
 * worker does not get `prevMillis` back in the job's options, and `timestamp` is when the job was
 * made (when the previous tick started), so the id is the reliable source.
 */
export function dueTime(job: Pick<Job, 'id' | 'timestamp'>): number {
  const m = /:(\d+)$/.exec(job.id ?? '');
  return m ? Number(m[1]) : job.timestamp;
}

/** The BullMQ repeat options of a schedule. */
export function repeatOptions(s: Schedule): { every: number } | { pattern: string; tz: string } {
  return s.everyMs !== undefined ? { every: s.everyMs } : { pattern: s.cron!, tz: s.tz };
}

/** Makes the queue's job schedulers match `schedules`; one replica at a time. */
async function reconcile(queue: Queue, schedules: Schedule[], redis: RedisConnection, skeys: ScheduleKeys, logger: Logger): Promise<void> {
  // Whoever holds it does the same work; once it is done, our pass finds nothing to change.
  const held = await new TokenLock(redis).acquire(skeys.syncLock, 20_000);
  try {
    for (const s of schedules) {
      const existing = await queue.getJobScheduler(s.name);
      if ((existing?.template?.data as TickJob | undefined)?.fingerprint === s.fingerprint) continue;
      await queue.upsertJobScheduler(s.name, repeatOptions(s), {
        name: 'tick',
        data: { schedule: s.name, fingerprint: s.fingerprint } satisfies TickJob,
        opts: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 }, attempts: 1 },
      });
      logger.info({ schedule: s.name, ...repeatOptions(s) }, existing ? 'job scheduler updated' : 'job scheduler created');
    }
    const names = new Set(schedules.map((s) => s.name));
    for (const js of await queue.getJobSchedulers()) {
      if (names.has(js.key)) continue;
      await queue.removeJobScheduler(js.key);
      logger.info({ schedule: js.key }, 'job scheduler removed: no schedule declares it any more');
    }
  } finally {
    await held?.release();
  }
}
