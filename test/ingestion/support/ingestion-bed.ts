import type { Logger } from 'pino';
import type { ReflexHandle } from '../../../src/app/start-reflex.js';
import type { ConfigInput } from '../../../src/config/config.js';
import { EventArchive } from '../../../src/events/event-archive.js';
import type { SimulatorOptions } from '../../../src/simulator/options.js';
import { redisClient, redisUrl } from '../../support/redis.js';
import { settled } from '../../support/settled.js';
import { optIn, startStack, type Stack, type StackParts } from '../../support/stack.js';
import { until } from '../../support/wait.js';
import { startEventProxy, type EventProxy } from './event-proxy.js';

export { optIn };

/** The simulator, optionally the tampering proxy, and Reflex (all roles, bundled rules) in-process. */
export interface IngestionBed extends Stack {
  proxy?: EventProxy;
  /** Published instance.status events of an instance, as "from→to intent[ synthetic]". */
  trail(name: string): Promise<string[]>;
  /** Polls {@link trail} until it has `count` entries, then until the pipeline is at rest (an extra would show). */
  waitTrail(name: string, count: number, timeoutMs?: number): Promise<string[]>;
}

/** Simulated work of the ingestion tests: a stop hook of 100 ms, start 30 ms, stop 60 ms. */
export const ingestionTimings = { stopHookMs: 100, startMs: 30, stopMs: 60 };

export async function startIngestionBed(
  opts: { sim?: Partial<SimulatorOptions>; proxy?: boolean; config?: Partial<ConfigInput>; url?: string; logger?: Logger } = {},
): Promise<IngestionBed> {
  let proxy: EventProxy | undefined;
  const url = opts.url ?? redisUrl();
  const stack = await startStack({
    redisUrl: url,
    label: 'ing',
    simulator: { timings: ingestionTimings, ...opts.sim },
    relay: opts.proxy ? async (socket) => (proxy = await startEventProxy(socket)) : undefined,
    reflexTimings: 'product',
    config: { resyncGraceMs: 300, leaseTtlMs: 1_000, ...opts.config },
    connected: false,
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
  const trail = async (name: string) => (await publishedStatus(stack, { instance: name })).map(transition);
  return {
    ...stack,
    proxy,
    trail,
    async waitTrail(name, count, timeoutMs = 15_000) {
      let seen: string[] = [];
      await until(`${count} published transitions of ${name}`, async () => (seen = await trail(name)).length >= count, timeoutMs, 100).catch(
        async (err: Error) => {
          // What was published, and every status event of the instance the archive holds with its outcome (stale, duplicate): the why of a miss.
          const archived = (await new EventArchive({ redis: stack.redis, key: stack.keys.archive }).read({ kind: 'instance.status' }))
            .filter((a) => a.event.kind === 'instance.status' && a.event.instance === name)
            .map((a) => `${transition(a.event as StatusEvent)} ${a.outcome}`);
          throw new Error(`${err.message}; published: ${JSON.stringify(seen)}; archived: ${JSON.stringify(archived)}`, { cause: err });
        },
      );
      // The tests compare the whole trail: an extra (a duplicate, a wrong synthetic one) is in the
      // events queue until it is published, so the trail is read once the queues stay empty.
      await settled(url, stack.prefix);
      return trail(name);
    },
  };
}

type StatusEvent = Extract<Awaited<ReturnType<EventArchive['read']>>[number]['event'], { kind: 'instance.status' }>;

/**
 * The instance.status events the stack published (processed or corrected), oldest first; `match`
 * narrows them to an instance, a target or a new status.
 */
export async function publishedStatus(
  stack: Pick<StackParts, 'redis' | 'keys'>,
  match: { instance?: string; target?: string; to?: number } = {},
): Promise<StatusEvent[]> {
  return (await new EventArchive({ redis: stack.redis, key: stack.keys.archive }).read({ kind: 'instance.status' }))
    .filter((a) => a.outcome === 'processed' || a.outcome === 'corrected')
    .map((a) => a.event)
    .filter((e): e is StatusEvent => e.kind === 'instance.status')
    .filter(
      (e) =>
        (match.instance === undefined || e.instance === match.instance) &&
        (match.target === undefined || e.target === match.target) &&
        (match.to === undefined || e.to === match.to),
    );
}

/** How many resyncs of a reason (`gap`: on connecting and on taking a lease over) a Reflex has run. */
export async function resyncCount(reflex: Pick<ReflexHandle, 'metrics'>, reason = 'gap'): Promise<number> {
  return (await reflex.metrics.resyncs.get()).values.filter((v) => v.labels.reason === reason).reduce((n, v) => n + v.value, 0);
}

/** A published status event as "from→to intent[ synthetic]". */
export const transition = (e: StatusEvent): string => `${e.from ?? '?'}→${e.to} ${e.intent}${e.synthetic ? ' synthetic' : ''}`;

/**
 * Reflex's own timings and the bundled rules (not type-checked) on the simulator, one opted-in
 * instance `web-1` Running, and every alert sent to a recording webhook receiver (`stack.webhook`);
 * its keys are deleted when it stops.
 */
export async function startWebOneStack(label: string, config: Partial<ConfigInput> = {}, sim: Partial<SimulatorOptions> = {}): Promise<Stack> {
  const stack = await startStack({
    redisUrl: redisUrl(),
    label,
    simulator: { timings: { stopHookMs: 100 }, ...sim },
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
