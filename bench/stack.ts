import { Queue } from 'bullmq';
import type { ConfigInput } from '../src/config/config.js';
import { duplicateConnection } from '../src/redis/connect.js';
import { startPrivateRedis, type PrivateRedis } from '../src/redis/private-redis.js';
import type { SimTimings } from '../src/simulator/options.js';
import { bundledRules, optIn, startStack, type Stack } from '../test/support/stack.js';
import { sleep, until } from '../test/support/wait.js';
import { SimProbe } from './sim-probe.js';
import { silentLogger } from './support.js';

export { optIn };
export const rulesDir = bundledRules;

/** A private Redis (AOF on, as in production), shared by Reflex and the bare-BullMQ baselines of one bench. */
export async function benchRedis(): Promise<PrivateRedis> {
  return startPrivateRedis({ appendonly: true });
}

/** The simulator plus an in-process Reflex (all roles, bundled rules) on a fresh key prefix (test/support/stack.ts), with Reflex's own timings. */
export interface BenchStack extends Stack {
  probe: SimProbe;
  eventsQueue: Queue;
}

/**
 * `role: 'subscriber'` leaves the events and actions to worker processes the bench starts itself
 * (`reflex run --role worker`); default all roles in this process. `timings` replaces the bench's
 * simulated work (start 20 ms, stop hook 5 ms); `{}` is the simulator's defaults.
 */
export async function startBenchStack(
  redisUrl: string,
  opts: { seeded?: number; optedIn?: number; timings?: Partial<SimTimings>; role?: 'all' | 'subscriber'; config?: Partial<ConfigInput> } = {},
): Promise<BenchStack> {
  const stack = await startStack({
    redisUrl,
    label: 'bench',
    rules: rulesDir,
    simulator: { instances: opts.seeded ?? 0, timings: opts.timings ?? { startMs: 20, stopHookMs: 5 } },
    instances: Array.from({ length: opts.optedIn ?? 0 }, (_, i) => ({ name: optedInName(i + 1), config: optIn })),
    reflexTimings: 'product',
    // The benches crash hundreds of instances on one server on purpose: storm control would hold them back.
    config: { stormThreshold: 0, role: opts.role ?? 'all', ...opts.config },
    logger: silentLogger,
  });
  // BullMQ does not close a connection it was given: stop() does.
  const queueConnection = duplicateConnection(stack.redis);
  const eventsQueue = new Queue(stack.keys.eventsQueue, { connection: queueConnection, prefix: stack.keys.bullPrefix });
  return {
    ...stack,
    probe: new SimProbe(stack.sim),
    eventsQueue,
    async stop() {
      await stack.stop();
      await eventsQueue.close();
      queueConnection.disconnect();
    },
  };
}

export function optedInName(i: number): string {
  return `o-${String(i).padStart(5, '0')}`;
}

/** Resolves once the events queue has nothing waiting or active, twice in a row `quietMs` apart. */
export async function eventsIdle(queue: Queue, timeoutMs: number, quietMs = 200): Promise<void> {
  let quietSince = 0;
  await until(
    'the events queue to drain',
    async () => {
      const c = await queue.getJobCounts('waiting', 'active', 'prioritized', 'delayed');
      const busy = (c.waiting ?? 0) + (c.active ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0);
      if (busy > 0) return ((quietSince = 0), false);
      quietSince ||= Date.now();
      return Date.now() - quietSince >= quietMs;
    },
    timeoutMs,
    50,
  );
}

/** Waits until the start-up resync has tracked `count` instances and its events are processed. */
export async function settled(
  stack: Pick<BenchStack, 'redis' | 'keys' | 'eventsQueue'> & { reflex: { target: string } },
  count: number,
  timeoutMs = 60_000,
): Promise<void> {
  await until(`${count} instances tracked`, async () => (await stack.redis.hlen(stack.keys.state(stack.reflex.target))) >= count, timeoutMs, 100);
  await eventsIdle(stack.eventsQueue, timeoutMs);
  await sleep(100);
}
