import { Cluster } from 'ioredis';
import type { RedisConnection } from './connect.js';

/**
 * The values of many keys, in order (null where absent). One MGET on a single Redis or Sentinel
 * master; on a Cluster, where MGET needs all its keys in one slot, one GET each, sent together.
 */
export async function getMany(redis: RedisConnection, keys: readonly string[]): Promise<(string | null)[]> {
  if (keys.length === 0) return [];
  if (redis instanceof Cluster) return Promise.all(keys.map((k) => redis.get(k)));
  return redis.mget(...keys);
}

/**
 * Sets many keys to `value` for `ttlMs`: one pipeline (one write) on a single Redis or Sentinel
 * master; on a Cluster, where one pipeline's keys must live on one node, one SET each, sent together.
 */
export async function setMany(redis: RedisConnection, keys: readonly string[], value: string, ttlMs: number): Promise<void> {
  if (keys.length === 0) return;
  if (redis instanceof Cluster) {
    await Promise.all(keys.map((k) => redis.set(k, value, 'PX', ttlMs)));
    return;
  }
  const pipeline = redis.pipeline();
  for (const k of keys) pipeline.set(k, value, 'PX', ttlMs);
  const failed = (await pipeline.exec())?.find(([err]) => err)?.[0];
  if (failed) throw failed;
}
