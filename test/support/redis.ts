import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { inject } from 'vitest';

/** The URL of the test run's Redis (private server or REDIS_URL). */
export function redisUrl(): string {
  return inject('redisUrl');
}

/** A key prefix no other test uses, so tests share one Redis without seeing each other's queues. */
export function uniquePrefix(label = 't'): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

export function redisClient(): Redis {
  return new Redis(redisUrl(), { maxRetriesPerRequest: null });
}
