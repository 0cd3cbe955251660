import type { RedisConnection } from './connect.js';

/** The id of a stream's newest entry, '0-0' when it is empty or absent: a new head says something was appended. */
export async function streamHead(redis: RedisConnection, key: string): Promise<string> {
  return (await redis.xrevrange(key, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0-0';
}
