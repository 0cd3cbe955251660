import type { ReflexProcess } from '../test/support/reflex-process.js';
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
 * A storm of events (mostly `instance-updated`, some crashes of opted-in instances) while worker
 * processes are SIGKILLed at random: one subscriber and three worker replicas, each killed worker
 * replaced at once. Nothing may be lost, no instance started twice, every crash ends in an outcome.
 */
export async function workerKills(opts: ChaosOptions): Promise<ScenarioResult> {
  const total = opts.short ? 3_000 : 10_000;
  const crashes = opts.short ? 60 : 200;
  const redis = await RestartableRedis.start();
  const sim = await startSimulator({ instances: 0, timings: { startMs: 50, stopHookMs: 100 } });
  const names = Array.from({ length: crashes }, (_, i) => `k-${String(i + 1).padStart(4, '0')}`);
  for (const n of names) sim.controls.addInstance({ name: n, config: optIn });
  const prefix = newPrefix('kills');
  const keys = keySpace(prefix);
  const witness = new FrameWitness(sim);
  const procs: ReflexProcess[] = [];
  let kills = 0;
  try {
    await witness.start();
    const subscriber = reflexRun(sim, redis.url, prefix, 'subscriber');
    procs.push(subscriber);
    await subscriber.waitForLog('event stream connected', 90_000);
    const workers = [0, 1, 2].map(() => reflexRun(sim, redis.url, prefix, 'worker'));
    procs.push(...workers);
    await Promise.all(workers.map((w) => w.waitForLog('reflex running', 90_000)));
    await sleep(2_000); // the start-up resync's grace period
    opts.log('  processes up; storming and killing');

    let killing = true;
    const killer = (async () => {
      while (killing) {
        await sleep(1_000 + Math.random() * 2_000);
        if (!killing) break;
        const i = Math.floor(Math.random() * workers.length);
        await workers[i]!.kill();
        kills++;
        workers[i] = reflexRun(sim, redis.url, prefix, 'worker');
        procs.push(workers[i]!);
      }
    })();
    // Spread the events over ~10 s: storm chunks with crashes in between.
    const ticks = 20;
    for (let t = 0; t < ticks; t++) {
      sim.controls.storm(Math.round((total - crashes) / ticks));
      for (const n of names.slice((t * crashes) / ticks, ((t + 1) * crashes) / ticks)) sim.controls.crash(n);
      await sleep(500);
    }
    await sleep(2_000);
    killing = false;
    await killer;
    opts.log(`  events emitted, ${kills} kills; waiting for remediation and the queue to drain`);
    await until('every crashed instance Running', () => names.every((n) => sim.controls.statusCode(n) === 103), 90_000, 250);
    await drained(redis.url, keys, 90_000);
    await sleep(1_000);
    const report = await lossReport(sim, redis.url, keys, witness, names);
    return {
      did: `${total} events (${crashes} crashes of opted-in instances) through 1 subscriber + 3 worker processes; ${kills} worker SIGKILLs, each replaced`,
      ...report,
    };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await witness.stop();
    await sim.stop();
    await redis.stop();
  }
}
