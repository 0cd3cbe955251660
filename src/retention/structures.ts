import { Cluster } from 'ioredis';
import type { Config } from '../config/config.js';
import type { RedisConnection } from '../redis/connect.js';
import type { KeySpace } from '../redis/key-space.js';
import { enforceStream, keyBytes, measureStream, type StreamLimits, type StructureReading } from '../redis/stream-retention.js';

/** A BullMQ queue whose finished jobs are measured (`queue:<name>`). */
interface QueueStructure {
  name: string;
  prefix: string;
  /** `jobsKeepCompleted + jobsKeepFailed`. */
  maxEntries: number;
}

/** What the retention watch and `reflex doctor` measure, with each structure's bounds. */
export interface RetentionPlan {
  streams: StreamLimits[];
  queues: QueueStructure[];
}

/** The bounded structures of a deployment, from its configuration. */
export function retentionPlan(config: Config, keys: KeySpace): RetentionPlan {
  const jobs = config.jobsKeepCompleted + config.jobsKeepFailed;
  return {
    streams: [
      // The audit chain trims itself on append (audit-chain.ts), and only behind what a history store shipped.
      { structure: 'audit', key: keys.audit, maxLength: config.auditMaxRecords, maxAgeMs: config.auditMaxAgeMs, trim: false },
      {
        structure: 'archive',
        key: keys.archive,
        maxLength: config.archiveMaxLength,
        maxAgeMs: config.archiveMaxAgeMs,
        maxBytes: config.archiveMaxBytes,
        trim: true,
      },
      {
        structure: 'rejected',
        key: keys.rejected,
        maxLength: config.rejectedMaxLength,
        maxAgeMs: config.rejectedMaxAgeMs,
        maxBytes: config.rejectedMaxBytes,
        trim: true,
      },
    ],
    queues: [keys.eventsQueue, keys.actionsQueue].map((name) => ({ name, prefix: keys.bullPrefix, maxEntries: jobs })),
  };
}

/** Finished (completed and failed) jobs of a queue, and their memory estimated from the newest one's. */
async function measureQueue(redis: RedisConnection, q: QueueStructure): Promise<StructureReading> {
  const base = `${q.prefix}:${q.name}`;
  const [completed, failed, newest] = await Promise.all([
    redis.zcard(`${base}:completed`),
    redis.zcard(`${base}:failed`),
    redis.zrevrange(`${base}:completed`, 0, 0),
  ]);
  const entries = completed + failed;
  const one = newest[0] === undefined ? undefined : await keyBytes(redis, `${base}:${newest[0]}`).catch(() => undefined);
  return {
    structure: `queue:${q.name}`,
    entries,
    bytes: entries === 0 ? 0 : one === undefined ? undefined : one * entries,
    maxEntries: q.maxEntries,
  };
}

/** Keys sampled to estimate the size of a key with a TTL. */
const TTL_SAMPLES = 16;

/**
 * Every key with a TTL in the database (INFO keyspace `expires`): Reflex's dedupe keys (archive
 * seen-keys, audit once-keys, done marks) and its other expiring keys; their memory is estimated
 * from a few random ones. A single Redis only: on a Cluster, INFO and RANDOMKEY see one node.
 */
async function measureTtlKeys(redis: RedisConnection): Promise<StructureReading | undefined> {
  if (redis instanceof Cluster) return undefined;
  const info = await redis.info('keyspace');
  const db = Number(redis.options.db ?? 0);
  const expires = Number(new RegExp(`^db${db}:.*\\bexpires=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  if (expires === 0) return { structure: 'ttl-keys', entries: 0, bytes: 0 };
  const sizes: number[] = [];
  for (let i = 0; i < TTL_SAMPLES; i++) {
    const key = await redis.randomkey();
    if (key === null) break;
    const [ttl, bytes] = await Promise.all([redis.pttl(key), keyBytes(redis, key).catch(() => undefined)]);
    if (ttl > 0 && bytes !== undefined) sizes.push(bytes);
  }
  const mean = sizes.length ? sizes.reduce((a, b) => a + b, 0) / sizes.length : undefined;
  return { structure: 'ttl-keys', entries: expires, bytes: mean === undefined ? undefined : Math.round(mean * expires) };
}

/**
 * Every structure's size; with `enforce`, the streams Reflex trims are first cut to their bounds
 * (`trimmed` says how many entries went, by structure). Cheap whatever the sizes: counts are O(1),
 * bytes are sampled.
 */
export async function readStructures(
  redis: RedisConnection,
  plan: RetentionPlan,
  opts: { enforce?: boolean; now?: number } = {},
): Promise<{ readings: StructureReading[]; trimmed: Map<string, number> }> {
  const trimmed = new Map<string, number>();
  const readings: StructureReading[] = [];
  for (const s of plan.streams) {
    if (opts.enforce && s.trim) {
      const r = await enforceStream(redis, s, opts.now);
      if (r.trimmed) trimmed.set(s.structure, r.trimmed);
      const { trimmed: _t, ...reading } = r;
      readings.push(reading);
    } else readings.push(await measureStream(redis, s));
  }
  for (const q of plan.queues) readings.push(await measureQueue(redis, q));
  const ttl = await measureTtlKeys(redis);
  if (ttl) readings.push(ttl);
  return { readings, trimmed };
}
