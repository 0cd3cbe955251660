import type { RedisConnection } from './connect.js';

/** The bounds of one Redis stream: by count, by age (stream id time) and by the memory it uses. */
export interface StreamLimits {
  /** What metrics, logs and `reflex doctor` call it (`archive`, `rejected`, `audit`). */
  structure: string;
  key: string;
  /** Entries kept at most; undefined or 0: no count bound here. */
  maxLength?: number;
  /** Entries older than this are dropped; undefined or 0: no age bound here. */
  maxAgeMs?: number;
  /** Bytes of Redis memory it may use; undefined: no byte bound. */
  maxBytes?: number;
  /**
   * Whether {@link enforceStream} trims it. False for a stream trimmed elsewhere (the audit chain
   * trims itself, and must not drop records a history store has not shipped): measured only.
   */
  trim: boolean;
}

/** One structure's size at one moment. */
export interface StructureReading {
  structure: string;
  entries: number;
  /** Redis's estimate (`MEMORY USAGE … SAMPLES`); undefined when it would not say. */
  bytes?: number;
  /** Its bounds, as configured (absent: none). */
  maxEntries?: number;
  maxBytes?: number;
}

/** Stream nodes `MEMORY USAGE` looks at: its cost is this, not the stream's length. */
const SAMPLES = 8;

/** A byte bound trims to this share of it, so a stream over its budget is not trimmed on every check. */
export const BYTES_TRIM_TO = 0.9;

/**
 * The memory a key uses, as Redis estimates it from a few samples (a stream: `SAMPLES` of its
 * nodes, extrapolated): cheap enough to run on a timer whatever the stream's length.
 */
export async function keyBytes(redis: RedisConnection, key: string): Promise<number | undefined> {
  const n = (await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', SAMPLES)) as number | null;
  return n ?? undefined;
}

/** Entries and estimated bytes of a stream. */
export async function measureStream(
  redis: RedisConnection,
  s: Pick<StreamLimits, 'structure' | 'key' | 'maxLength' | 'maxBytes'>,
): Promise<StructureReading> {
  const [entries, bytes] = await Promise.all([redis.xlen(s.key), keyBytes(redis, s.key).catch(() => undefined)]);
  return {
    structure: s.structure,
    entries,
    bytes: entries === 0 ? 0 : bytes,
    ...(s.maxLength ? { maxEntries: s.maxLength } : {}),
    ...(s.maxBytes ? { maxBytes: s.maxBytes } : {}),
  };
}

/**
 * Trims a stream to its bounds, exactly (the append paths trim by count and age approximately, a
 * whole stream node at a time; this runs on a timer and also cuts what they leave). The byte bound
 * cannot be a trim argument: when the sampled size is over it, the stream is cut by count to the
 * share of entries that fits in {@link BYTES_TRIM_TO} of the bound, oldest first (entries of a
 * stream are about the same size on average; the next check corrects an estimate that was off).
 * Answers the stream's size afterwards and how many entries went.
 */
export async function enforceStream(redis: RedisConnection, s: StreamLimits, now = Date.now()): Promise<StructureReading & { trimmed: number }> {
  let trimmed = 0;
  if (s.trim && s.maxLength) trimmed += (await redis.xtrim(s.key, 'MAXLEN', s.maxLength)) as number;
  if (s.trim && s.maxAgeMs) trimmed += (await redis.xtrim(s.key, 'MINID', `${Math.max(0, now - s.maxAgeMs)}-0`)) as number;
  let reading = await measureStream(redis, s);
  if (s.trim && s.maxBytes && reading.bytes !== undefined && reading.bytes > s.maxBytes && reading.entries > 0) {
    const keep = Math.floor((reading.entries * BYTES_TRIM_TO * s.maxBytes) / reading.bytes);
    trimmed += (await redis.xtrim(s.key, 'MAXLEN', keep)) as number;
    reading = await measureStream(redis, s);
  }
  return { ...reading, trimmed };
}
