import { Cluster, type Redis } from 'ioredis';
import { clusterReady, type RedisConnection } from './connect.js';

/**
 * Every key matching a SCAN pattern, on a single Redis, a Sentinel master or a Redis Cluster.
 * SCAN walks one node's keys only, so on a Cluster every master is scanned in turn (replicas hold
 * copies). Keys created or deleted during the walk may or may not be seen, as with SCAN itself.
 */
export async function* scanKeys(redis: RedisConnection, pattern: string, count = 500): AsyncGenerator<string> {
  await clusterReady(redis);
  const nodes: Redis[] = redis instanceof Cluster ? redis.nodes('master') : [redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', count);
      cursor = next;
      yield* found;
    } while (cursor !== '0');
  }
}
