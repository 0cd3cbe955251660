import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { startReflex, type ReflexHandle } from '../src/app/start-reflex.js';
import { parseConfig } from '../src/config/config.js';
import { duplicateConnection, type RedisConnection } from '../src/redis/connect.js';
import { keySpace, type KeySpace } from '../src/redis/key-space.js';
import { startPrivateRedis, type PrivateRedis } from '../src/redis/private-redis.js';
import { startSimulator, type RunningSimulator } from '../src/simulator/simulator.js';
import type { SimTimings } from '../src/simulator/options.js';
import { SimProbe } from './sim-probe.js';
import { redisClient, silentLogger, sleep, until } from './support.js';

export const rulesDir = fileURLToPath(new URL('../rules', import.meta.url));
export const optIn = { 'user.reflex.autorestart': 'true' };

/** A private Redis (AOF on, as in production), shared by Reflex and the bare-BullMQ baselines of one bench. */
export async function benchRedis(): Promise<PrivateRedis> {
  return startPrivateRedis({ appendonly: true });
}

/** The simulator plus an in-process Reflex (all roles, bundled rules) on a fresh key prefix. */
export interface Stack {
  sim: RunningSimulator;
  probe: SimProbe;
  reflex: ReflexHandle;
  keys: KeySpace;
  /** The key prefix of this stack's Reflex (for worker processes joining it). */
  prefix: string;
  redis: RedisConnection;
  eventsQueue: Queue;
  target: string;
  stop(): Promise<void>;
}

/**
 * `role: 'subscriber'` leaves the events and actions to worker processes the bench starts itself
 * (`reflex run --role worker`); default all roles in this process.
 */
export async function startStack(redisUrl: string, opts: { seeded?: number; optedIn?: number; timings?: Partial<SimTimings>; role?: 'all' | 'subscriber' } = {}): Promise<Stack> {
  const sim = await startSimulator({ instances: opts.seeded ?? 0, timings: { startMs: 20, stopHookMs: 5, ...opts.timings } });
  for (let i = 1; i <= (opts.optedIn ?? 0); i++) sim.controls.addInstance({ name: optedInName(i), config: optIn });
  const probe = new SimProbe(sim);
  const prefix = `bench-${randomUUID().slice(0, 8)}`;
  const target = `unix://${sim.socketPath}`;
  // The benches crash hundreds of instances on one server on purpose: storm control would hold them back.
  const config = parseConfig({ target, redisUrl, rulesDir, prefix, resyncIntervalMs: 0, logLevel: 'silent', stormThreshold: 0, role: opts.role ?? 'all', httpPort: 0 });
  const reflex = await startReflex(config, silentLogger);
  const keys = keySpace(prefix);
  const redis = redisClient(redisUrl);
  // BullMQ does not close a connection it was given: stop() does.
  const queueConnection = duplicateConnection(redis);
  const eventsQueue = new Queue(keys.eventsQueue, { connection: queueConnection, prefix: keys.bullPrefix });
  await until('the event stream', () => reflex.subscriber?.connected === true, 15_000);
  return {
    sim,
    probe,
    reflex,
    keys,
    prefix,
    redis,
    eventsQueue,
    target,
    async stop() {
      await reflex.stop();
      await eventsQueue.close();
      queueConnection.disconnect();
      redis.disconnect();
      await sim.stop();
    },
  };
}

export function optedInName(i: number): string {
  return `o-${String(i).padStart(5, '0')}`;
}

/** Resolves once the events queue has nothing waiting or active, twice in a row `quietMs` apart. */
export async function eventsIdle(queue: Queue, timeoutMs: number, quietMs = 200): Promise<void> {
  let quietSince = 0;
  await until('the events queue to drain', async () => {
    const c = await queue.getJobCounts('waiting', 'active', 'prioritized', 'delayed');
    const busy = (c.waiting ?? 0) + (c.active ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0);
    if (busy > 0) return (quietSince = 0), false;
    quietSince ||= Date.now();
    return Date.now() - quietSince >= quietMs;
  }, timeoutMs, 50);
}

/** Waits until the start-up resync has tracked `count` instances and its events are processed. */
export async function settled(stack: Stack, count: number, timeoutMs = 60_000): Promise<void> {
  await until(`${count} instances tracked`, async () => (await stack.redis.hlen(stack.keys.state(stack.reflex.target))) >= count, timeoutMs, 100);
  await eventsIdle(stack.eventsQueue, timeoutMs);
  await sleep(100);
}
