import type { Logger } from 'pino';
import type { Alerts } from '../alerts/alerts.js';
import type { Metrics } from '../metrics/metrics.js';
import type { AlertInput } from '../alerts/alert.js';
import type { AlertKind } from '../alerts/catalogue.js';
import type { RedisConnection } from '../redis/connect.js';
import type { WriteProbe } from '../redis/write-probe.js';
import { writeRefusalOf, type WriteRefusal } from '../redis/write-refusal.js';
import { formatBytes, memoryLevel, readRedisMemory, type MemoryLevel, type RedisMemory } from './redis-memory.js';
import { readStructures, type RetentionPlan } from './structures.js';

/** The kind of the alert raised while Redis is close to `maxmemory`. */
export const redisMemoryHighKind = 'redis.memory-high' satisfies AlertKind;
/** The kind of the alert raised while Redis refuses writes for another reason than memory (a read-only replica, MISCONF). */
export const redisWritesRefusedKind = 'redis.writes-refused' satisfies AlertKind;

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
  /**
   * The write probe: while it finds writes refused, the alert goes through the fallback path
   * (`raiseDirect`), since the durable one writes to Redis. Without it, only the memory level counts.
   */
  writes?: Pick<WriteProbe, 'state' | 'check'>;
  /** Raises `redis.memory-high` and `redis.writes-refused` and resolves them, directly while Redis refuses writes. */
  alerts: Pick<Alerts, 'raise' | 'resolve' | 'raiseDirect' | 'recordDirect' | 'notifying'>;
  logger: Logger;
}

/** A running watch: `check()` runs one round now, after any in progress (tests, a change of the write probe); `stop()` ends it. */
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
 * The critical alert of a Redis that refuses writes: what stopped, and what to do. It starts when
 * Redis last took a write (`lastTakenAt`, the same for every replica): each replica sends its own
 * copy, and the same start gives the copies the same message id, which receivers de-duplicate.
 */
function refusedAlert(memory: RedisMemory, refusal: WriteRefusal, lastTakenAt = Date.now()): AlertInput {
  const stopped =
    'automation has stopped: no event is queued, no action runs, nothing is audited (the subscriber holds events in memory and retries); this alert resolves when writes are taken again';
  const base = {
    target: 'redis',
    project: '',
    instance: 'redis',
    severity: 'critical',
    correlationId: `redis-writes:${lastTakenAt}`,
    startsAt: new Date(lastTakenAt).toISOString(),
    status: 'firing',
  } as const;
  if (refusal === 'oom')
    return {
      ...base,
      kind: redisMemoryHighKind,
      summary: `Redis is full and refuses writes (OOM: ${formatBytes(memory.usedBytes)} used, maxmemory ${formatBytes(memory.maxBytes)}): ${stopped}. Raise maxmemory (redis-cli config set maxmemory) or free memory, then lower the retention bounds`,
    };
  const why =
    refusal === 'readonly'
      ? 'READONLY: Reflex is connected to a read-only replica; point redisUrl at the primary'
      : 'MISCONF: its last RDB save failed and stop-writes-on-bgsave-error is on; fix the save (disk space, the dir; redis-cli info persistence)';
  return { ...base, kind: redisWritesRefusedKind, summary: `Redis refuses writes (${why}): ${stopped}` };
}

/**
 * Every `intervalMs`: trims the archive and rejected streams to their count, age and byte bounds,
 * samples each structure's size and Redis's memory into the metrics, and raises
 * `redis.memory-high` when `used_memory` reaches `alertRatio` of `maxmemory` (critical from 95 %),
 * resolved when it drops below: before writes fail (with `noeviction`, a full Redis refuses them).
 * While the write probe finds writes refused, the alert is critical (`redis.memory-high` when
 * full, `redis.writes-refused` for a read-only replica or MISCONF), says automation has stopped,
 * and goes by the fallback path straight to the receivers, as does its resolution once writes are
 * taken again; both are audited then. A round that fails is logged and retried at the next.
 */
export function startRedisWatch(opts: RedisWatchOptions): RedisWatch {
  const { redis, logger, metrics } = opts;
  for (const s of opts.plan.streams) {
    if (s.maxLength) metrics?.structureBudgetEntries.set({ structure: s.structure }, s.maxLength);
    if (s.maxBytes) metrics?.structureBudgetBytes.set({ structure: s.structure }, s.maxBytes);
  }
  for (const q of opts.plan.queues) metrics?.structureBudgetEntries.set({ structure: `queue:${q.name}` }, q.maxEntries);

  // The alert this process sent by the fallback path while Redis refused writes, and to whom.
  let direct: { input: AlertInput; to: string[] } | undefined;

  const refusedNow = (): WriteRefusal | undefined => {
    const s = opts.writes?.state;
    return s?.writable === false ? s.refusal : undefined;
  };

  const alertOn = async (memory: RedisMemory) => {
    const refusal = refusedNow();
    if (refusal) return alertRefused(memory, refusal);
    if (direct) await endRefused(memory);
    const level = memoryLevel(memory, opts.alertRatio);
    // Nothing to write while all is well and was: a full Redis is when writes fail.
    let refusedByLevel: WriteRefusal | undefined;
    const old = await swapLevel(redis, opts.levelKey, level).catch((err: unknown) => {
      refusedByLevel = writeRefusalOf(err);
      logger.warn({ err }, 'could not record the Redis memory level');
      return undefined;
    });
    // Refused here first: the probe confirms at once, and the alert takes the fallback path.
    if (refusedByLevel && opts.writes) {
      const s = await opts.writes.check();
      if (s.writable === false && s.refusal) return alertRefused(memory, s.refusal);
    }
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

  /**
   * Writes are refused: automation has stopped. Sent once by the fallback path (nothing can be
   * audited or queued), again when the reason changes; a send no receiver took is tried again at the
   * next round or probe change.
   */
  const alertRefused = async (memory: RedisMemory, refusal: WriteRefusal) => {
    const input = refusedAlert(memory, refusal, opts.writes?.state.lastTakenAt);
    if (direct?.input.kind === input.kind) return;
    if (direct) await endRefused(memory, `superseded: ${input.summary}`);
    logger.error({ usedBytes: memory.usedBytes, maxBytes: memory.maxBytes, refusal }, input.summary);
    const to = await opts.alerts.raiseDirect(input);
    if (to.length || !opts.alerts.notifying) direct = { input, to };
  };

  /**
   * Writes are taken again (or refused for another reason, `why`): the resolution goes the way the
   * alert went, then both are audited.
   */
  const endRefused = async (memory: RedisMemory, why?: string) => {
    const sent = direct!;
    direct = undefined;
    const summary =
      why ??
      `Redis takes writes again: automation resumed (events held meanwhile are queued now); it uses ${formatBytes(memory.usedBytes)}${memory.maxBytes > 0 ? ` of ${formatBytes(memory.maxBytes)} maxmemory` : ' (no maxmemory)'}`;
    logger.info({ usedBytes: memory.usedBytes, maxBytes: memory.maxBytes }, summary);
    const resolved: AlertInput = { ...sent.input, status: 'resolved', endsAt: new Date().toISOString(), summary };
    const to = await opts.alerts.raiseDirect(resolved);
    await opts.alerts
      .recordDirect(sent.input, sent.to)
      .catch((err: unknown) => logger.warn({ err }, 'could not audit the alert sent while Redis refused writes'));
    await opts.alerts
      .recordDirect(resolved, to)
      .catch((err: unknown) => logger.warn({ err }, 'could not audit the alert sent while Redis refused writes'));
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

  // One round at a time, whoever asks (the interval, a caller of check()): two at once would both
  // see no alert sent and send it twice.
  let running: Promise<void> = Promise.resolve();
  const queued = () => {
    const r = running.then(check);
    running = r.catch(() => undefined);
    return r;
  };
  const round = () => void queued().catch((err: unknown) => logger.warn({ err }, 'Redis retention round failed; retrying at the next'));
  const timer = setInterval(round, opts.intervalMs ?? 30_000);
  timer.unref();
  round();
  return {
    check: queued,
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
