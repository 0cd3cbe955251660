import { startSimulator } from '../src/simulator/simulator.js';
import type { ReflexProcess } from '../test/support/reflex-process.js';
import { startRedisSentinel } from '../test/support/redis-topology.js';
import { drained, FrameWitness, keySpace, lossReport, newPrefix, optIn, reflexRun, sleep, until, type ChaosOptions, type ScenarioResult } from './support.js';

/**
 * On a real Sentinel set-up (a master, a replica, three sentinels), a storm of events with crashes
 * of opted-in instances through one subscriber and two worker processes; mid-storm the master is
 * SIGKILLed, the sentinels promote the replica, and every Reflex process follows it (ioredis asks
 * the sentinels). Nothing may be lost, no instance started twice, every crash healed.
 */
export async function sentinelFailover(opts: ChaosOptions): Promise<ScenarioResult> {
  const total = opts.short ? 3_000 : 10_000;
  const crashes = opts.short ? 60 : 200;
  const sentinel = await startRedisSentinel();
  const sim = await startSimulator({ instances: 0, timings: { startMs: 50, stopHookMs: 100 } });
  const names = Array.from({ length: crashes }, (_, i) => `s-${String(i + 1).padStart(4, '0')}`);
  for (const n of names) sim.controls.addInstance({ name: n, config: optIn });
  const prefix = newPrefix('sentinel');
  const keys = keySpace(prefix);
  const witness = new FrameWitness(sim);
  const procs: ReflexProcess[] = [];
  try {
    await witness.start();
    const subscriber = reflexRun(sim, sentinel.url, prefix, 'subscriber');
    procs.push(subscriber);
    await subscriber.waitForLog('event stream connected', 60_000);
    const workers = [0, 1].map(() => reflexRun(sim, sentinel.url, prefix, 'worker'));
    procs.push(...workers);
    await Promise.all(workers.map((w) => w.waitForLog('reflex running', 60_000)));
    await sleep(2_000); // the start-up resync's grace period
    opts.log(`  processes up on master ${sentinel.masterPort} (replica ${sentinel.replicaPort}); storming`);

    const ticks = 20;
    let failover: Promise<{ port: number; ms: number }> | undefined;
    let victim = 0;
    for (let t = 0; t < ticks; t++) {
      sim.controls.storm(Math.round((total - crashes) / ticks));
      for (const n of names.slice((t * crashes) / ticks, ((t + 1) * crashes) / ticks)) sim.controls.crash(n);
      if (t === 8) {
        const killedAt = Date.now();
        victim = await sentinel.killMaster();
        opts.log(`  tick ${t + 1}: SIGKILLed the master at port ${victim}`);
        failover = sentinel.waitForFailover(victim, 60_000).then((port) => ({ port, ms: Date.now() - killedAt }));
      }
      await sleep(500);
    }
    const promoted = await failover!;
    opts.log(`  the sentinels promoted the replica at port ${promoted.port} ${promoted.ms} ms after the kill; waiting for remediation and the queues to drain`);
    await until('every crashed instance Running', () => names.every((n) => sim.controls.statusCode(n) === 103), 120_000, 250);
    await drained(sentinel.url, keys, 120_000);
    await sleep(1_000);
    const report = await lossReport(sim, sentinel.url, keys, witness, names);
    const exited = procs.filter((p) => p.child.exitCode !== null).length;
    return {
      did: `${total} events (${crashes} crashes of opted-in instances) through 1 subscriber + 2 worker processes on Redis with Sentinel; the master (port ${victim}) SIGKILLed after tick 9 of ${ticks}, the replica (port ${promoted.port}) promoted ${promoted.ms} ms later`,
      found: [...report.found, `${exited} reflex process(es) exited during the run`],
      ok: report.ok && exited === 0,
    };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await witness.stop();
    await sim.stop();
    await sentinel.stop();
  }
}
