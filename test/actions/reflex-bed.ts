import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { parseConfig, type ConfigInput } from '../../src/config/config.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import type { SimulatorOptions } from '../../src/simulator/options.js';
import { startReflex, type ReflexHandle } from '../../src/app/start-reflex.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';

/** The simulator and an in-process Reflex (all roles) on it, with rule files written for the test. */
export interface ReflexBed {
  sim: RunningSimulator;
  reflex: ReflexHandle;
  /** A client of the simulator, as an operator (or the daemon's own restart) would use it. */
  client: InstanceClient;
  prefix: string;
  stop(): Promise<void>;
}

/**
 * Writes `rules` (file name → source) into a fresh folder and starts the simulator (with
 * `simulator` options, e.g. a cluster mode) and Reflex on them.
 */
export async function startReflexBed(rules: Record<string, string>, config: Partial<ConfigInput> = {}, simulator: Partial<SimulatorOptions> = {}): Promise<ReflexBed> {
  mkdirSync(resolve('.tmp'), { recursive: true });
  const rulesDir = mkdtempSync(join(resolve('.tmp'), 'rules-'));
  for (const [file, source] of Object.entries(rules)) writeFileSync(join(rulesDir, file), source);
  const sim = await startSimulator({ instances: 0, timings: { startMs: 50, stopMs: 100, stopHookMs: 100, taskMs: 20 }, ...simulator });
  const prefix = uniquePrefix('bed');
  const reflex = await startReflex(
    parseConfig({ target: `unix://${sim.socketPath}`, redisUrl: redisUrl(), rulesDir, prefix, resyncIntervalMs: 0, resyncGraceMs: 100, leaseTtlMs: 600, actionAttempts: 3, logLevel: 'silent', httpPort: 0, ...config }),
    pino({ level: 'silent' }),
  );
  const client = new InstanceClient(parseTarget(`unix://${sim.socketPath}`));
  await until('the event stream', () => reflex.subscriber?.connected === true, 15_000);
  return {
    sim,
    reflex,
    client,
    prefix,
    async stop() {
      await reflex.stop();
      await client.close();
      await sim.stop();
    },
  };
}

export async function until(what: string, cond: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}
