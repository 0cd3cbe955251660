import type { ConfigInput } from '../../../src/config/config.js';
import { EventArchive } from '../../../src/events/event-archive.js';
import type { SimulatorOptions } from '../../../src/simulator/options.js';
import { redisClient, redisUrl } from '../../support/redis.js';
import { optIn, startStack, type Stack } from '../../support/stack.js';
import { sleep, until } from '../../support/wait.js';
import { startEventProxy, type EventProxy } from './event-proxy.js';

export { optIn };

/** The simulator, optionally the tampering proxy, and Reflex (all roles, bundled rules) in-process. */
export interface IngestionBed extends Stack {
  proxy?: EventProxy;
  /** Published instance.status events of an instance, as "from→to intent[ synthetic]". */
  trail(name: string): Promise<string[]>;
  /** Polls {@link trail} until it has `count` entries (and a little longer, to catch extras). */
  waitTrail(name: string, count: number, timeoutMs?: number): Promise<string[]>;
}

/** Simulated work of the ingestion tests: a stop hook of 100 ms, start 30 ms, stop 60 ms. */
export const ingestionTimings = { stopHookMs: 100, startMs: 30, stopMs: 60 };

export async function startIngestionBed(
  opts: { sim?: Partial<SimulatorOptions>; proxy?: boolean; config?: Partial<ConfigInput>; url?: string } = {},
): Promise<IngestionBed> {
  let proxy: EventProxy | undefined;
  const stack = await startStack({
    redisUrl: opts.url ?? redisUrl(),
    label: 'ing',
    simulator: { timings: ingestionTimings, ...opts.sim },
    relay: opts.proxy ? async (socket) => (proxy = await startEventProxy(socket)) : undefined,
    reflexTimings: 'product',
    config: { resyncGraceMs: 300, leaseTtlMs: 1_000, ...opts.config },
    connected: false,
  });
  const archive = new EventArchive({ redis: stack.redis, key: stack.keys.archive });
  const trail = async (name: string) =>
    (await archive.read({ kind: 'instance.status' }))
      .filter((a) => (a.outcome === 'processed' || a.outcome === 'corrected') && 'instance' in a.event && a.event.instance === name)
      .map(({ event: e }) => (e.kind === 'instance.status' ? `${e.from ?? '?'}→${e.to} ${e.intent}${e.synthetic ? ' synthetic' : ''}` : ''));
  return {
    ...stack,
    proxy,
    trail,
    async waitTrail(name, count, timeoutMs = 15_000) {
      await until(`${count} published transitions of ${name}`, async () => (await trail(name)).length >= count, timeoutMs, 100);
      // A quiet second after the last expected transition: an extra (a duplicate, a wrong synthetic
      // one) would show up in it, and the tests compare the whole trail.
      await sleep(1_000);
      return trail(name);
    },
  };
}

/**
 * Reflex's own timings and the bundled rules (not type-checked) on the simulator, one opted-in
 * instance `web-1` Running, and every alert sent to a recording webhook receiver (`stack.webhook`);
 * its keys are deleted when it stops.
 */
export async function startWebOneStack(label: string, config: Partial<ConfigInput> = {}): Promise<Stack> {
  const stack = await startStack({
    redisUrl: redisUrl(),
    label,
    simulator: { timings: { stopHookMs: 100 } },
    instances: [{ name: 'web-1', status: 'Running', config: optIn }],
    reflexTimings: 'product',
    config: { typecheckRules: false, ...config },
    webhook: true,
  });
  return {
    ...stack,
    async stop() {
      await stack.stop();
      // Its keys go too: the size tests read how much Redis holds.
      const redis = redisClient();
      const keys = await redis.keys(`*${stack.prefix}*`);
      // One key a call: on a Redis Cluster the keys lie in different slots.
      await Promise.all(keys.map((k) => redis.del(k)));
      redis.disconnect();
    },
  };
}
