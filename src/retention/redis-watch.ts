import type { Logger } from 'pino';
import type { Alerts } from '../alerts/alerts.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RedisConnection } from '../redis/connect.js';
import { formatBytes, memoryLevel, readRedisMemory, type MemoryLevel, type RedisMemory } from './redis-memory.js';
import { readStructures, type RetentionPlan } from './structures.js';

/** The kind of the alert raised while Redis is close to `maxmemory`. */
export const redisMemoryHighKind = 'redis.memory-high';

/** Options of {@link startRedisWatch}. */
export interface RedisWatchOptions {
  redis: RedisConnection;
  plan: RetentionPlan;
  /** Where the last level seen is kept, so that of several replicas one alerts on each change (`KeySpace.redisMemoryLevel`). */
  levelKey: string;
  /** Share of `maxmemory` from which the alert fires (`redisMemoryAlertRatio`). */
  alertRatio: number;
  /** How often. Default 30 s. */
  intervalMs?: number;
  /** Trim the streams to their bounds at each round. Default true. */
  enforce?: boolean;
  metrics?: Metrics;
  /** Raises `redis.memory-high` and resolves it. */
  alerts: Pick<Alerts, 'raise' | 'resolve'>;
  logger: Logger;
}

/** A running watch: `check()` runs one round now (tests, `reflex doctor`-like callers); `stop()` ends it. */
export interface RedisWatch {
  check(): Promise<void>;
  stop(): Promise<void>;
}

// Sets the level and answers the one it replaces, atomically (SET … GET): of several replicas that
// see the same change, exactly one sees the old level, and only that one alerts.
async function swapLevel(redis: RedisConnection, key: string, level: MemoryLevel): Promise<MemoryLevel> {
  const old = (await redis.call('SET', key, level, 'GET')) as string | null;
  return old === 'warning' || old === 'critical' ? old : 'ok';
}

/**
 * Every `intervalMs`: trims the archive and rejected streams to their count, age and byte bounds,
 * samples each structure's size and Redis's memory into the metrics, and raises
 * `redis.memory-high` when `used_memory` reaches `alertRatio` of `maxmemory` (critical from 95 %),
 * resolved when it drops below: before writes fail (with `noeviction`, a full Redis refuses them).
 * A round that fails is logged and retried at the next.
 */
export function startRedisWatch(opts: RedisWatchOptions): RedisWatch {
  const { redis, logger, metrics } = opts;
  for (const s of opts.plan.streams) {
    if (s.maxLength) metrics?.structureBudgetEntries.set({ structure: s.structure }, s.maxLength);
    if (s.maxBytes) metrics?.structureBudgetBytes.set({ structure: s.structure }, s.maxBytes);
  }
  for (const q of opts.plan.queues) metrics?.structureBudgetEntries.set({ structure: `queue:${q.name}` }, q.maxEntries);

  const alertOn = async (memory: RedisMemory) => {
    const level = memoryLevel(memory, opts.alertRatio);
    // Nothing to write while all is well and was: a full Redis is when writes fail.
    const old = await swapLevel(redis, opts.levelKey, level).catch((err: unknown) => {
      logger.warn({ err }, 'could not record the Redis memory level');
      return undefined;
    });
    if (old === undefined || old === level) return;
    const share = `${((memory.usedBytes / memory.maxBytes) * 100).toFixed(1)} %`;
    const base = { kind: redisMemoryHighKind, target: 'redis', project: '', instance: 'redis', correlationId: `redis-memory:${Date.now()}` } as const;
    if (level === 'ok') {
      const summary = `Redis memory back under ${Math.round(opts.alertRatio * 100)} % of maxmemory: ${formatBytes(memory.usedBytes)} of ${formatBytes(memory.maxBytes)}`;
      logger.info({ usedBytes: memory.usedBytes, maxBytes: memory.maxBytes }, summary);
      await opts.alerts.resolve({ ...base, severity: old === 'critical' ? 'critical' : 'warning', summary });
      return;
    }
    const summary = `Redis uses ${share} of maxmemory (${formatBytes(memory.usedBytes)} of ${formatBytes(memory.maxBytes)}): with noeviction, writes (events, jobs, audit) fail when it is full; lower the retention bounds or raise maxmemory`;
    logger[level === 'critical' ? 'error' : 'warn']({ usedBytes: memory.usedBytes, maxBytes: memory.maxBytes }, summary);
    await opts.alerts.raise({ ...base, severity: level, summary });
  };

  const check = async () => {
    const memory = await readRedisMemory(redis);
    metrics?.redisMemoryUsed.set(memory.usedBytes);
    metrics?.redisMemoryMax.set(memory.maxBytes);
    // The alert first: trimming and sampling are what a nearly full Redis may refuse.
    await alertOn(memory);
    const { readings, trimmed } = await readStructures(redis, opts.plan, { enforce: opts.enforce ?? true });
    for (const r of readings) {
      metrics?.structureEntries.set({ structure: r.structure }, r.entries);
      if (r.bytes !== undefined) metrics?.structureBytes.set({ structure: r.structure }, r.bytes);
    }
    for (const [structure, n] of trimmed) {
      metrics?.structureTrimmed.inc({ structure }, n);
      logger.debug({ structure, trimmed: n }, 'stream trimmed to its bounds');
    }
  };

  let running: Promise<void> = Promise.resolve();
  const round = () =>
    (running = running.then(() => check().catch((err: unknown) => logger.warn({ err }, 'Redis retention round failed; retrying at the next'))));
  const timer = setInterval(round, opts.intervalMs ?? 30_000);
  timer.unref();
  void round();
  return {
    check: async () => {
      await running;
      await check();
    },
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
