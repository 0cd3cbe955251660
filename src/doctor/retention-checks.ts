import type { Config } from '../config/config.js';
import { connectRedis, type RedisConnection } from '../redis/connect.js';
import { keySpace } from '../redis/key-space.js';
import type { StructureReading } from '../redis/stream-retention.js';
import { formatBytes, memoryLevel, readRedisMemory, type RedisMemory } from '../retention/redis-memory.js';
import { readStructures, retentionPlan } from '../retention/structures.js';
import type { DoctorCheck } from './doctor-check.js';

const count = (n: number) => n.toLocaleString('en-US');

/** One structure's line: entries and bytes against its bounds; over a bound is a warning (the next retention round trims it). */
export function structureCheck(r: StructureReading): DoctorCheck {
  const entries = `${count(r.entries)} entries${r.maxEntries ? ` of ${count(r.maxEntries)}` : ''}`;
  const bytes = r.bytes === undefined ? 'size not reported' : `${formatBytes(r.bytes)}${r.maxBytes ? ` of ${formatBytes(r.maxBytes)}` : ''}`;
  const over =
    (r.maxEntries !== undefined && r.entries > r.maxEntries * 1.05) || (r.maxBytes !== undefined && r.bytes !== undefined && r.bytes > r.maxBytes);
  return {
    name: 'retention',
    ok: true,
    detail: `${r.structure}: ${entries}, ${bytes}${over ? ' (over its bound: trimmed by the next retention round of a running Reflex)' : ''}`,
    ...(over
      ? {
          warning: true,
          fix: 'a running reflex trims it within retentionCheckMs; if it stays over, check that a reflex process runs with this configuration',
        }
      : {}),
  };
}

/** The memory line: used against `maxmemory`; no limit, or close to it, is a warning. */
export function memoryCheck(m: RedisMemory, alertRatio: number): DoctorCheck {
  if (m.maxBytes <= 0) {
    return {
      name: 'redis-memory',
      ok: true,
      warning: true,
      detail: `used ${formatBytes(m.usedBytes)}, maxmemory 0 (no limit): Redis grows until the host runs out of memory, and the memory alert (redis.memory-high) cannot fire`,
      fix: 'set a limit above the budget of docs/operations.md (Redis memory budget): redis-cli CONFIG SET maxmemory 1gb, and in redis.conf: maxmemory 1gb',
    };
  }
  const level = memoryLevel(m, alertRatio);
  const detail = `used ${formatBytes(m.usedBytes)} of maxmemory ${formatBytes(m.maxBytes)} (${((m.usedBytes / m.maxBytes) * 100).toFixed(1)} %; alert from ${Math.round(alertRatio * 100)} %)`;
  if (level === 'ok') return { name: 'redis-memory', ok: true, detail };
  return {
    name: 'redis-memory',
    ok: level !== 'critical',
    warning: true,
    detail,
    fix: 'lower the retention bounds (auditMaxRecords, archiveMaxBytes, jobsKeepCompletedMs…) or raise maxmemory',
  };
}

/**
 * Redis memory against `maxmemory`, and each structure Reflex keeps (audit, archive and rejected
 * streams, queue history, keys with a TTL) against its configured bounds. Reads only: the doctor
 * trims nothing.
 */
export async function checkRetention(config: Config): Promise<DoctorCheck[]> {
  let redis: RedisConnection;
  try {
    redis = await connectRedis(config.redisUrl, { timeoutMs: 3_000 });
  } catch {
    return []; // the redis check already says it is unreachable
  }
  try {
    const memory = await readRedisMemory(redis);
    const { readings } = await readStructures(redis, retentionPlan(config, keySpace(config.prefix)));
    return [memoryCheck(memory, config.redisMemoryAlertRatio), ...readings.map(structureCheck)];
  } catch (err) {
    return [
      {
        name: 'retention',
        ok: true,
        warning: true,
        detail: `sizes not read: ${(err as Error).message}`,
        fix: 'give this Redis user INFO, MEMORY, XLEN and ZCARD',
      },
    ];
  } finally {
    redis.disconnect();
  }
}
