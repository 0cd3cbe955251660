import { startSimulator } from '../src/simulator/simulator.js';
import {
  drained,
  FrameWitness,
  keySpace,
  lossReport,
  newPrefix,
  optIn,
  reflexRun,
  RestartableRedis,
  type ChaosOptions,
  type ScenarioResult,
} from './support.js';
import { sleep, until } from '../test/support/wait.js';

/**
 * Redis (AOF on) is stopped and started again in the middle of a stream of events and crashes.
 * The subscriber holds what it reads while Redis is away; nothing may be lost.
 */
export async function redisRestart(opts: ChaosOptions): Promise<ScenarioResult> {
  const crashes = opts.short ? 30 : 90;
  const perTick = opts.short ? 100 : 300;
  const redis = await RestartableRedis.start();
  const sim = await startSimulator({ instances: 0, timings: { startMs: 50, stopHookMs: 100 } });
  const names = Array.from({ length: crashes }, (_, i) => `r-${String(i + 1).padStart(4, '0')}`);
  for (const n of names) sim.controls.addInstance({ name: n, config: optIn });
  const prefix = newPrefix('redis');
  const keys = keySpace(prefix);
  const witness = new FrameWitness(sim);
  const proc = reflexRun(sim, redis.url, prefix, 'all');
  try {
    await witness.start();
    await proc.waitForLog('event stream connected', 90_000);
    await sleep(2_000);
    const ticks = 15;
    let downFor = 0;
    for (let t = 0; t < ticks; t++) {
      sim.controls.storm(perTick);
      for (const n of names.slice((t * crashes) / ticks, ((t + 1) * crashes) / ticks)) sim.controls.crash(n);
      if (t === 5) {
        const s = Date.now();
        await redis.down();
        sim.controls.storm(perTick); // events while Redis is away
        await sleep(1_000);
        await redis.up();
        downFor = Date.now() - s;
      }
      await sleep(400);
    }
    await until('every crashed instance Running', () => names.every((n) => sim.controls.statusCode(n) === 103), 60_000, 250);
    await drained(redis.url, keys, 60_000);
    await sleep(1_000);
    const report = await lossReport(sim, redis.url, keys, witness, names);
    return {
      did: `${(ticks + 1) * perTick} storm events and ${crashes} crashes; Redis stopped (SIGTERM) and started again on its AOF after tick 6, away ${downFor} ms`,
      ...report,
    };
  } finally {
    await proc.stop();
    await witness.stop();
    await sim.stop();
    await redis.stop();
  }
}
