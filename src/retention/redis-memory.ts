import type { RedisConnection } from '../redis/connect.js';

/** How full Redis is against its `maxmemory`: `ok`, `warning` (≥ the alert ratio), `critical` (≥ 95 %, or the ratio when higher). */
export type MemoryLevel = 'ok' | 'warning' | 'critical';

/** Redis's memory at one moment (INFO memory). */
export interface RedisMemory {
  usedBytes: number;
  /** `maxmemory`; 0: no limit. */
  maxBytes: number;
  /** `maxmemory-policy`, when INFO shows it. */
  policy?: string;
}

/** The share of `maxmemory` from which the level is critical, unless the configured ratio is higher. */
export const CRITICAL_RATIO = 0.95;

/** The level of a reading against the configured alert ratio; no `maxmemory` is always `ok` (doctor warns about it). */
export function memoryLevel(m: RedisMemory, alertRatio: number): MemoryLevel {
  if (m.maxBytes <= 0) return 'ok';
  const used = m.usedBytes / m.maxBytes;
  if (used >= Math.max(CRITICAL_RATIO, alertRatio)) return 'critical';
  return used >= alertRatio ? 'warning' : 'ok';
}

/** `used_memory`, `maxmemory` and the policy, from INFO memory (one node: on a Cluster, the node the client picks). */
export async function readRedisMemory(redis: RedisConnection): Promise<RedisMemory> {
  const info = await redis.info('memory');
  const field = (name: string) => new RegExp(`^${name}:(.*?)\\r?$`, 'm').exec(info)?.[1];
  return { usedBytes: Number(field('used_memory') ?? 0), maxBytes: Number(field('maxmemory') ?? 0), policy: field('maxmemory_policy') };
}

/** One line: `120.5 MiB`. */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]}`;
}
