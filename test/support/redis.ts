import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { redisFromUrl, type RedisConnection } from '../../src/redis/connect.js';

/** The URL of the test run's Redis (private server or REDIS_URL). */
export function redisUrl(): string {
  return inject('redisUrl');
}

/** A key prefix no other test uses, so tests share one Redis without seeing each other's queues. */
export function uniquePrefix(label = 't'): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

/** A connection to the test run's Redis, built as the product builds it (a Cluster client on a cluster). */
export function redisClient(): RedisConnection {
  return redisFromUrl(redisUrl());
}

/**
 * The flags that point a `reflex` command at a test's keys: `--target` (when given), the test
 * run's Redis and `prefix`.
 */
export function reflexArgs(prefix: string, target?: string): string[] {
  return [...(target === undefined ? [] : ['--target', target]), '--redis', redisUrl(), '--prefix', prefix];
}

/** {@link reflexArgs} of a `reflex run` with the bundled rules and no HTTP server (so that replicas can run side by side). */
export function reflexRunArgs(prefix: string, target?: string): string[] {
  return [...reflexArgs(prefix, target), '--rules', 'rules', '--http-port', '0'];
}
