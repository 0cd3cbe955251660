import { pino } from 'pino';
import { startReflex, type ReflexHandle } from '../../../src/app/start-reflex.js';
import { InstanceClient } from '../../../src/client/client.js';
import { parseTarget } from '../../../src/client/target.js';
import { parseConfig, type ConfigInput } from '../../../src/config/config.js';
import { EventArchive } from '../../../src/events/event-archive.js';
import { keySpace, type KeySpace } from '../../../src/redis/key-space.js';
import { startSimulator } from '../../../src/simulator/simulator.js';
import type { SimulatorOptions } from '../../../src/simulator/options.js';
import { redisUrl, uniquePrefix } from '../../support/redis.js';
import { startEventProxy, type EventProxy } from './event-proxy.js';
import { redisFromUrl, type RedisConnection } from '../../../src/redis/connect.js';

type Sim = Awaited<ReturnType<typeof startSimulator>>;

/** The simulator, optionally the tampering proxy, and Reflex (all roles, bundled rules) in-process. */
export interface IngestionBed {
  sim: Sim;
  proxy?: EventProxy;
  reflex: ReflexHandle;
  redis: RedisConnection;
  keys: KeySpace;
  prefix: string;
  /** A client straight to the simulator (the "user"). */
  user: InstanceClient;
  /** Published instance.status events of an instance, as "from→to intent[ synthetic]". */
  trail(name: string): Promise<string[]>;
  /** Polls {@link trail} until it has `count` entries (and a little longer, to catch extras). */
  waitTrail(name: string, count: number, timeoutMs?: number): Promise<string[]>;
  stop(): Promise<void>;
}

export const optIn = { 'user.reflex.autorestart': 'true' };

export async function startIngestionBed(opts: { sim?: Partial<SimulatorOptions>; proxy?: boolean; config?: Partial<ConfigInput>; url?: string } = {}): Promise<IngestionBed> {
  const sim = await startSimulator({ instances: 0, timings: { stopHookMs: 100, startMs: 30, stopMs: 60 }, ...opts.sim } as SimulatorOptions);
  const proxy = opts.proxy ? await startEventProxy(sim.socketPath!) : undefined;
  const prefix = uniquePrefix('ing');
  const keys = keySpace(prefix);
  const url = opts.url ?? redisUrl();
  const config = parseConfig({
    target: `unix://${proxy?.socketPath ?? sim.socketPath}`,
    redisUrl: url,
    rulesDir: 'rules',
    prefix,
    resyncIntervalMs: 0,
    resyncGraceMs: 300,
    leaseTtlMs: 1_000,
    logLevel: 'silent',
    httpPort: 0,
    ...opts.config,
  });
  const reflex = await startReflex(config, pino({ level: process.env.REFLEX_TEST_LOG ?? 'silent' }));
  const redis = redisFromUrl(url);
  redis.on('error', () => {}); // outages are part of some tests
  const archive = new EventArchive({ redis, key: keys.archive });
  const trail = async (name: string) =>
    (await archive.read({ kind: 'instance.status' }))
      .filter((a) => (a.outcome === 'processed' || a.outcome === 'corrected') && 'instance' in a.event && a.event.instance === name)
      .map(({ event: e }) => (e.kind === 'instance.status' ? `${e.from ?? '?'}→${e.to} ${e.intent}${e.synthetic ? ' synthetic' : ''}` : ''));
  const bed: IngestionBed = {
    sim,
    proxy,
    reflex,
    redis,
    keys,
    prefix,
    user: new InstanceClient(parseTarget(`unix://${sim.socketPath}`)),
    trail,
    async waitTrail(name, count, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      let t = await trail(name);
      while (t.length < count && Date.now() < until) {
        await sleep(100);
        t = await trail(name);
      }
      await sleep(1_000);
      return trail(name);
    },
    async stop() {
      await reflex.stop();
      await bed.user.close();
      await proxy?.close();
      await sim.stop();
      redis.disconnect();
    },
  };
  return bed;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `cond` holds. */
export async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what} not reached within ${timeoutMs} ms`);
    await sleep(50);
  }
}
