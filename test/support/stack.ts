import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino, type Logger } from 'pino';
import { startReflex, type ReflexHandle } from '../../src/app/start-reflex.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { parseConfig, type ConfigInput } from '../../src/config/config.js';
import { readConfigFile } from '../../src/config/config-file.js';
import { redisFromUrl, type RedisConnection } from '../../src/redis/connect.js';
import { keySpace, type KeySpace } from '../../src/redis/key-space.js';
import type { SeedInstance } from '../../src/simulator/controls.js';
import type { SimTimings, SimulatorOptions } from '../../src/simulator/options.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { startRecordingServer, type RecordingServer } from '../notify/recording-server.js';
import { until } from './wait.js';

// No import of vitest here (nor of ./redis.ts, which injects the test run's Redis URL): the bench
// starts its stacks with this function outside a test run.

/** The bundled rules folder of the checkout. */
export const bundledRules = fileURLToPath(new URL('../../rules', import.meta.url));

/** The instance config that opts an instance in to the bundled restart rule. */
export const optIn = { 'user.reflex.autorestart': 'true' };

/** Simulated work fast enough for tests: start 50 ms, stop and stop hook 100 ms, tasks 20 ms. */
export const quickSimTimings: Partial<SimTimings> = { startMs: 50, stopMs: 100, stopHookMs: 100, taskMs: 20 };

/**
 * Reflex timings short enough for tests: the start-up resync's grace 100 ms, a lease that lapses
 * in 600 ms, three attempts per action. `reflexTimings: 'product'` leaves these at their defaults.
 */
const quickReflexTimings = { resyncGraceMs: 100, leaseTtlMs: 600, actionAttempts: 3 } satisfies Partial<ConfigInput>;

/** A relay between Reflex and the simulator's socket (e.g. the frame-tampering proxy). */
export interface Relay {
  socketPath: string;
  close(): Promise<void>;
}

export interface StackOptions {
  /** The Redis Reflex uses (tests: `redisUrl()` of test/support/redis.ts). */
  redisUrl: string;
  /** Simulator options; without `timings`, {@link quickSimTimings}. `instances` defaults to 0. */
  simulator?: Partial<SimulatorOptions>;
  /**
   * Simulators the test started itself (each with options of its own: a cluster beside a
   * standalone server), watched instead of starting any; with `targets`, one per name, in order.
   * The stack stops them with itself.
   */
  simulators?: RunningSimulator[];
  /**
   * A real daemon's target URL (a bed's `target`): Reflex watches it and no simulator starts. The
   * stack then has no `sim`, `sims` or `client` ({@link DaemonStack}): the bed is the operator.
   */
  daemon?: string;
  /** Instances added to the simulator (to each, with `targets`) before Reflex starts. */
  instances?: SeedInstance[];
  /**
   * Several servers: one simulator per name (same options), watched as named targets of one
   * deployment (`targets` in the config). Default: one simulator, watched as `target`.
   */
  targets?: string[];
  /**
   * The rules: a folder, or files (name → source) written into a fresh folder under .tmp/.
   * Default: the bundled rules.
   */
  rules?: string | Record<string, string>;
  /**
   * A config file (YAML or JSON, read as `reflex run --config` reads it) whose settings go over the
   * stack's defaults; `config` goes over it.
   */
  configFile?: string;
  /** Config over the stack's defaults; a function gets the simulator (e.g. for its member URLs). */
  config?: Partial<ConfigInput> | ((sim: RunningSimulator) => Partial<ConfigInput>);
  /** 'quick' (default): short grace, lease and attempts for tests; 'product': Reflex's defaults. */
  reflexTimings?: 'quick' | 'product';
  /** Key prefix; default a fresh one labelled `label`. */
  prefix?: string;
  /** Label of the fresh prefix (default 'stack'). */
  label?: string;
  /** Reflex's logger. Default silent, or the level in REFLEX_TEST_LOG. */
  logger?: Logger;
  /** Starts a relay on the simulator's socket and points Reflex at it. */
  relay?: (simSocket: string) => Promise<Relay>;
  /**
   * Starts a recording HTTP server and routes every alert to it as a webhook receiver (group wait
   * 100 ms, interval 300 ms, no repeats; `route` overrides those).
   */
  webhook?: boolean | { route?: Partial<Route> };
  /** `false`: starts no Reflex (the test starts its own, by `replica`). */
  reflex?: false;
  /** Waits until the first target's event stream is connected (default: yes, when this process subscribes). */
  connected?: boolean;
  /**
   * With `connected`, also waits until every target's start-up resync has read its instances
   * (default: yes). No for a start on a Redis that refuses writes: the resync cannot publish.
   */
  resynced?: boolean;
}

/** The simulator and an in-process Reflex on it; {@link startStack}. */
export interface Stack extends StackParts {
  reflex: ReflexHandle;
}

/** A stack on a real daemon (`daemon`): Reflex and what is around it, without a simulator. */
export type DaemonStack = Omit<Stack, 'sim' | 'sims' | 'client' | 'relay'>;

/** What a stack has around Reflex: the stack started with `reflex: false` (Reflex started later, by {@link StackParts.replica}). */
export interface StackParts {
  /** The (first) simulator. */
  sim: RunningSimulator;
  /** Every simulator, in the order of `targets` (one without it). */
  sims: RunningSimulator[];
  /** What Reflex watches: the simulator's socket (or the relay's), as a target URL; with `targets`, the first's. */
  target: string;
  /** Every target URL, in the order of {@link sims}. */
  targets: string[];
  prefix: string;
  keys: KeySpace;
  /** The rules folder Reflex loaded. */
  rulesDir: string;
  /** A connection to the stack's Redis (errors ignored: some tests take Redis away). */
  redis: RedisConnection;
  /** A client straight to the simulator, as an operator (or the daemon's own restart) would use it. */
  client: InstanceClient;
  /** The recording server alerts go to (with `webhook`). */
  webhook?: RecordingServer;
  relay?: Relay;
  /** The config the stack started Reflex with, before parsing (for a replica or a restart). */
  config: ConfigInput;
  /**
   * Another Reflex on the same simulator, Redis and prefix (a replica), stopped with the stack
   * unless the test stopped it first (its `stop` runs once).
   */
  replica(overrides?: Partial<ConfigInput>, logger?: Logger): Promise<ReflexHandle>;
  /** Stops every replica, Reflex, the relay, the webhook server and the simulator. */
  stop(): Promise<void>;
}

type Route = NonNullable<ConfigInput['notifications']>['route'];

let webhooks = 0;

/**
 * The one way tests and benches start Reflex in-process, on the simulator (or simulators the test
 * started, or a real daemon): the simulator (its options and timings), a fresh key prefix on the
 * given Redis, and `startReflex` with a config built from the stack's defaults (no periodic
 * resync, no HTTP server unless `config` gives it a port, test timings), the config file's
 * settings and `config` over them.
 */
export async function startStack(options: StackOptions & { daemon: string }): Promise<DaemonStack>;
export async function startStack(options: StackOptions & { reflex: false }): Promise<StackParts>;
export async function startStack(options: StackOptions): Promise<Stack>;
export async function startStack(options: StackOptions): Promise<Stack | StackParts | DaemonStack> {
  if (
    options.daemon &&
    (options.simulators || options.simulator || options.instances || options.targets || options.relay || typeof options.config === 'function')
  )
    throw new Error('a stack on a real daemon has no simulator: no simulators, simulator, instances, targets, relay or config function');
  const sims = options.daemon
    ? []
    : (options.simulators ??
      (await Promise.all(
        (options.targets ?? ['']).map(() =>
          startSimulator({ instances: 0, ...options.simulator, timings: options.simulator?.timings ?? quickSimTimings }),
        ),
      )));
  const sim = sims[0];
  for (const s of sims) for (const instance of options.instances ?? []) s.controls.addInstance(instance);
  const relay = options.relay && sim ? await options.relay(sim.socketPath!) : undefined;
  const targets = options.daemon ? [options.daemon] : sims.map((s, i) => `unix://${(i === 0 && relay?.socketPath) || s.socketPath}`);
  const target = targets[0]!;
  const prefix = options.prefix ?? `${options.label ?? 'stack'}-${randomUUID().slice(0, 8)}`;
  const rulesDir = typeof options.rules === 'object' ? writeRules(options.rules) : (options.rules ?? bundledRules);
  const webhook = options.webhook ? await startRecordingServer() : undefined;
  const logger = options.logger ?? pino({ level: process.env.REFLEX_TEST_LOG ?? 'silent' });
  const config: ConfigInput = {
    ...(options.targets ? { targets: options.targets.map((name, i) => ({ name, target: targets[i]! })) } : { target }),
    redisUrl: options.redisUrl,
    rulesDir,
    prefix,
    resyncIntervalMs: 0,
    logLevel: 'silent',
    httpPort: 0,
    // From the sources the start's type-check reads all of src/ (8 s of CPU at each test file's
    // first start, a minute on the loaded CI); the check has tests of its own (test/rules) and runs
    // in every test that starts `reflex run`. A test can turn it on through `config`.
    typecheckRules: false,
    // No history store unless a test asks for one: a store holds the audit stream's trimming back until it ships.
    history: { store: 'none' },
    ...(options.reflexTimings === 'product' ? {} : quickReflexTimings),
    ...(webhook ? webhookConfig(webhook.url, typeof options.webhook === 'object' ? options.webhook.route : undefined) : {}),
    ...(options.configFile ? readConfigFile(options.configFile) : {}),
    ...(typeof options.config === 'function' ? options.config(sim!) : options.config),
  };
  const replicas: ReflexHandle[] = [];
  const redis = redisFromUrl(options.redisUrl);
  redis.on('error', () => {});
  const client = sim && new InstanceClient(parseTarget(`unix://${sim.socketPath}`));
  const stop = async () => {
    for (const r of replicas.splice(0).reverse()) await r.stop();
    await client?.close();
    await relay?.close();
    await webhook?.close();
    for (const s of sims) await s.stop();
    redis.disconnect();
  };
  // On a real daemon there is neither (the DaemonStack type leaves them out).
  const stack: StackParts = {
    sim: sim!,
    sims,
    target,
    targets,
    prefix,
    keys: keySpace(prefix),
    rulesDir,
    redis,
    client: client!,
    webhook,
    relay,
    config,
    async replica(overrides = {}, replicaLogger = logger) {
      const r = await startReflex(parseConfig({ ...config, ...overrides }), replicaLogger);
      // A test may stop a replica itself (a killed or stopped replica is what it is about); the stack's stop then leaves it be.
      const stopReflex = r.stop.bind(r);
      let stopped: Promise<void> | undefined;
      r.stop = () => (stopped ??= stopReflex());
      replicas.push(r);
      return r;
    },
    stop,
  };
  if (options.reflex === false) return stack;
  try {
    const reflex = await stack.replica();
    if ((options.connected ?? true) && reflex.readers.length > 0) {
      await until('the event stream', () => reflex.subscriber?.connected === true, 15_000);
      // The start-up resync reads every instance: a change a test makes before that read is its
      // baseline, not a transition (an operator's stop would be recorded as 'unchanged').
      if (options.resynced ?? true)
        await until('the start-up resync of every target', () => reflex.readers.every((r) => r.resyncedAt !== undefined), 15_000);
    }
    return { ...stack, reflex };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Writes rule files (name → source) into a fresh folder under .tmp/ and returns it. */
export function writeRules(files: Record<string, string>): string {
  mkdirSync(resolve('.tmp'), { recursive: true });
  const dir = mkdtempSync(join(resolve('.tmp'), 'rules-'));
  for (const [file, source] of Object.entries(files)) writeFileSync(join(dir, file), source);
  return dir;
}

/** Every alert to one webhook receiver at `url` (through per-stack env variables, as an operator would configure it). */
function webhookConfig(url: string, route: Partial<Route> = {}): Partial<ConfigInput> {
  const n = ++webhooks;
  process.env[`REFLEX_TEST_HOOK_URL_${n}`] = url;
  // A Standard Webhooks secret: whsec_ and the base64 of 32 bytes.
  process.env[`REFLEX_TEST_HOOK_KEY_${n}`] = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  return {
    notifications: {
      receivers: [{ kind: 'webhook', name: 'hook', urlEnv: `REFLEX_TEST_HOOK_URL_${n}`, secretEnv: `REFLEX_TEST_HOOK_KEY_${n}`, backoffMs: 100 }],
      route: { receiver: 'hook', groupBy: ['kind', 'project'], groupWaitMs: 100, groupIntervalMs: 300, repeatIntervalMs: 3_600_000, ...route },
    },
  };
}
