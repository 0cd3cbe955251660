import { afterAll, afterEach, beforeAll } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import type { RedisConnection } from '../../src/redis/connect.js';
import type { SimTimings } from '../../src/simulator/options.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { redisClient } from './redis.js';

/** The simulator of a test file, its target URL and a client on it. */
export interface FileSimulator {
  sim: RunningSimulator;
  target: string;
  client: InstanceClient;
}

/**
 * One simulator for a whole test file (in a describe): started before its tests with `timings` and
 * handed to `started` (which keeps it in the file's variables), stopped after them with its client
 * and the returned Redis connection. What a test pushes on `cleanups` runs after it, last first.
 */
export function fileSimulator(
  timings: Partial<SimTimings>,
  started: (s: FileSimulator) => void,
): { redis: RedisConnection; cleanups: (() => Promise<unknown>)[] } {
  const redis = redisClient();
  const cleanups: (() => Promise<unknown>)[] = [];
  let running: FileSimulator | undefined;
  beforeAll(async () => {
    const sim = await startSimulator({ instances: 0, timings });
    const target = `unix://${sim.socketPath}`;
    running = { sim, target, client: new InstanceClient(parseTarget(target)) };
    started(running);
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    await running?.client.close();
    await running?.sim.stop();
    redis.disconnect();
  });
  return { redis, cleanups };
}
