import { startSimulator } from '../src/simulator/simulator.js';
import type { ReflexProcess } from '../test/support/reflex-process.js';
import { startRedisCluster } from '../test/support/redis-topology.js';
import { drained, FrameWitness, keySpace, lossReport, newPrefix, optIn, reflexRun, sleep, until, type ChaosOptions, type ScenarioResult } from './support.js';

/**
 * On a real 6-node Redis Cluster (3 masters, 3 replicas), a storm of events with crashes of
 * opted-in instances through one subscriber and two worker processes; mid-storm the master that
 * holds the queues' slot (`{<prefix>:bull}`) is SIGKILLed and its replica takes over. Nothing may
 * be lost, no instance started twice, every crash healed.
 */
export async function clusterMasterKill(opts: ChaosOptions): Promise<ScenarioResult> {
  const total = opts.short ? 3_000 : 10_000;
  const crashes = opts.short ? 60 : 200;
  const cluster = await startRedisCluster();
  const sim = await startSimulator({ instances: 0, timings: { startMs: 50, stopHookMs: 100 } });
  const names = Array.from({ length: crashes }, (_, i) => `m-${String(i + 1).padStart(4, '0')}`);
  for (const n of names) sim.controls.addInstance({ name: n, config: optIn });
  const prefix = newPrefix('cluster');
  const keys = keySpace(prefix);
  const witness = new FrameWitness(sim);
  const procs: ReflexProcess[] = [];
  try {
    await witness.start();
    const subscriber = reflexRun(sim, cluster.url, prefix, 'subscriber');
    procs.push(subscriber);
    await subscriber.waitForLog('event stream connected', 90_000);
    const workers = [0, 1].map(() => reflexRun(sim, cluster.url, prefix, 'worker'));
    procs.push(...workers);
    await Promise.all(workers.map((w) => w.waitForLog('reflex running', 90_000)));
    await sleep(2_000); // the start-up resync's grace period
    const queuesTag = keys.bullPrefix;
    const victim = await cluster.masterOf(queuesTag);
    const auditMaster = await cluster.masterOf(keys.audit);
    opts.log(`  processes up; the queues' slot (${queuesTag}) is on the master at port ${victim}, the audit trail's on ${auditMaster}; storming`);

    const ticks = 20;
    let promotion: Promise<{ port: number; ms: number }> | undefined;
    for (let t = 0; t < ticks; t++) {
      sim.controls.storm(Math.round((total - crashes) / ticks));
      for (const n of names.slice((t * crashes) / ticks, ((t + 1) * crashes) / ticks)) sim.controls.crash(n);
      if (t === 8) {
        const killedAt = Date.now();
        cluster.kill(victim);
        opts.log(`  tick ${t + 1}: SIGKILLed the master at port ${victim}`);
        promotion = cluster.waitForPromotion(victim, queuesTag, 60_000).then((port) => ({ port, ms: Date.now() - killedAt }));
      }
      await sleep(500);
    }
    const promoted = await promotion!;
    opts.log(`  the replica at port ${promoted.port} serves the queues' slot ${promoted.ms} ms after the kill; waiting for remediation and the queues to drain`);
    await until('every crashed instance Running', () => names.every((n) => sim.controls.statusCode(n) === 103), 120_000, 250);
    await drained(cluster.url, keys, 120_000);
    await sleep(1_000);
    const report = await lossReport(sim, cluster.url, keys, witness, names);
    const exited = procs.filter((p) => p.child.exitCode !== null).length;
    const warnings = new Map<string, number>();
    for (const line of procs.flatMap((p) => p.logs)) {
      const why = (line.err as { message?: string } | undefined)?.message;
      const key = `${String(line.msg)}${why ? `: ${why.slice(0, 60)}` : ''}`;
      if (Number(line.level) >= 40) warnings.set(key, (warnings.get(key) ?? 0) + 1);
    }
    const logged = [...warnings].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([msg, n]) => `${n}× "${msg.slice(0, 140)}"`).join(', ');
    return {
      did: `${total} events (${crashes} crashes of opted-in instances) through 1 subscriber + 2 worker processes on a 6-node Redis Cluster; the master holding ${queuesTag} (port ${victim}) SIGKILLed after tick 9 of ${ticks}, its replica (port ${promoted.port}) serving the slot ${promoted.ms} ms later`,
      found: [...report.found, `${exited} reflex process(es) exited during the run; warnings and errors they logged: ${logged || 'none'}`],
      ok: report.ok && exited === 0,
    };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await witness.stop();
    await sim.stop();
    await cluster.stop();
  }
}
