import { parseConfig, type Config, type ConfigInput } from '../../src/config/config.js';
import type { RunningSimulator } from '../../src/simulator/simulator.js';
import { redisUrl } from './redis.js';

/**
 * The config of an in-process Reflex watching the simulator `sim` with the keys of `prefix`: the
 * test run's Redis, no periodic resync, an HTTP port of the system's choosing, silent, no history store; `over` on top
 * (the rules folder, timings, receivers).
 */
export function simReflexConfig(sim: RunningSimulator, prefix: string, over: Partial<ConfigInput>): Config {
  return parseConfig({
    target: `unix://${sim.socketPath}`,
    redisUrl: redisUrl(),
    prefix,
    resyncIntervalMs: 0,
    httpPort: 0,
    logLevel: 'silent',
    history: { store: 'none' },
    ...over,
  });
}
