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
