import { Queue } from 'bullmq';
import { pino } from 'pino';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import type { Probe } from '../../src/probes/probe.js';
import { ProbeRunner, type ProbeRunnerOptions } from '../../src/probes/probe-runner.js';
import { redisFromUrl } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { Silences } from '../../src/silences/silences.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { redisUrl } from '../support/redis.js';

/** An instance of the bed: a name (Running, no config) or the simulator's instance fields. */
type BedInstance = string | { name: string; config?: Record<string, string> };

/**
 * A simulator with `instances` Running and a started probe runner with `probes` on it, with what
 * it logs at warn and above in `warnings`. `cleanups` is told how to stop each part.
 * `runner()` starts another replica on the same simulator and Redis.
 */
export async function probeRunnerBed(
  cleanups: (() => Promise<unknown>)[],
  instances: BedInstance[],
  probes: Probe[] | (() => Probe[]),
  opts: Partial<ProbeRunnerOptions> = {},
  sim?: RunningSimulator,
) {
  const warnings: Record<string, unknown>[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line) as Record<string, unknown>) });
  if (!sim) {
    sim = await startSimulator({ instances: 0 });
    cleanups.push(() => sim!.stop());
  }
  for (const i of instances) sim.controls.addInstance(typeof i === 'string' ? { name: i, status: 'Running' } : { ...i, status: 'Running' });
  const target = `unix://${sim.socketPath}`;
  const client = new InstanceClient(parseTarget(target));
  cleanups.push(() => client.close());
  const redis = redisFromUrl(redisUrl());
  cleanups.push(async () => redis.disconnect());
  const keys = opts.keys ?? keySpace(`probe-bed-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`);
  const queue = new Queue(keys.eventsQueue, { connection: redisFromUrl(redisUrl()), prefix: keys.bullPrefix });
  cleanups.push(() => queue.close());
  const runnerOpts = (more: Partial<ProbeRunnerOptions> = {}): ProbeRunnerOptions => ({
    targets: [{ id: target, client }],
    redis,
    keys,
    eventsQueue: queue,
    silences: new Silences(redis, keys.silences),
    logger,
    probes: typeof probes === 'function' ? probes : () => probes,
    ...opts,
    ...more,
  });
  const runner = new ProbeRunner(runnerOpts());
  await runner.start();
  cleanups.push(() => runner.stop());
  /** Another replica on the same simulator, Redis and key space, started. */
  const replica = async (more: Partial<ProbeRunnerOptions> = {}) => {
    const r = new ProbeRunner(runnerOpts(more));
    await r.start();
    cleanups.push(() => r.stop());
    return r;
  };
  const probedInstances = async () =>
    Object.values(await redis.hgetall(keys.probes.state)).map((raw) => (JSON.parse(raw) as { instance: string }).instance);
  return { sim, target, client, redis, keys, queue, runner, replica, probedInstances, warnings, logger };
}
