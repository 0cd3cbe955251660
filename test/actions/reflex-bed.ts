import type { ConfigInput } from '../../src/config/config.js';
import type { SimulatorOptions } from '../../src/simulator/options.js';
import { redisUrl } from '../support/redis.js';
import { startStack, type Stack } from '../support/stack.js';

/** The simulator and an in-process Reflex (all roles) on it, with rule files written for the test. */
export type ReflexBed = Stack;

/**
 * Writes `rules` (file name → source) into a fresh folder and starts the simulator (with
 * `simulator` options, e.g. a cluster mode) and Reflex on them, its event stream connected.
 */
export function startReflexBed(
  rules: Record<string, string>,
  config: Partial<ConfigInput> = {},
  simulator: Partial<SimulatorOptions> = {},
): Promise<ReflexBed> {
  return startStack({ redisUrl: redisUrl(), label: 'bed', rules, config, simulator });
}
