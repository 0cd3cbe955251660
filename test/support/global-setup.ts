import type { TestProject } from 'vitest/node';
import { startPrivateRedis, type PrivateRedis } from '../../src/redis/private-redis.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

let redis: PrivateRedis | undefined;

/** One private redis-server for the whole test run, unless REDIS_URL points at one. */
export async function setup(project: TestProject): Promise<void> {
  const fromEnv = process.env.REDIS_URL;
  if (fromEnv) {
    project.provide('redisUrl', fromEnv);
    return;
  }
  redis = await startPrivateRedis({ appendonly: true });
  project.provide('redisUrl', redis.url);
}

export async function teardown(): Promise<void> {
  await redis?.stop();
}
