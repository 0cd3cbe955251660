import { startSimulator } from '../src/simulator/simulator.js';
import type { ReflexProcess } from '../test/support/reflex-process.js';
import { drained, FrameWitness, keySpace, lossReport, newPrefix, optIn, reflexRun, type ChaosOptions, type ScenarioResult } from './support.js';
import { sleep, until } from '../test/support/wait.js';

/** What a Redis scenario kills mid-storm, and how it knows the set-up recovered. */
export interface RedisKill {
  /** The set-up's URL as `reflex --redis` takes it. */
  url: string;
  /** Names the instances and the key prefix. */
  label: string;
  /** Said once the processes are up, before the storm (`prefix` is the run's key prefix). */
  before(prefix: string): Promise<string>;
  /** Kills the node mid-storm; says what it killed. */
  kill(): Promise<string>;
  /** Resolves once another node took over; says which and when. */
  recovered(): Promise<string>;
}

/**
 * The skeleton of the Redis failover scenarios: a storm of `instance-updated` events with crashes
 * of opted-in instances through one subscriber and two worker processes, the kill after tick 9 of
 * 20, then every crash healed and nothing lost (see lossReport), and no `reflex run` exited. The
 * warnings and errors the processes logged meanwhile are summed up in what was found.
 */
export async function stormWithKill(opts: ChaosOptions, target: RedisKill): Promise<ScenarioResult> {
  const total = opts.short ? 3_000 : 10_000;
  const crashes = opts.short ? 60 : 200;
  const sim = await startSimulator({ instances: 0, timings: { startMs: 50, stopHookMs: 100 } });
  const names = Array.from({ length: crashes }, (_, i) => `${target.label[0]}-${String(i + 1).padStart(4, '0')}`);
  for (const n of names) sim.controls.addInstance({ name: n, config: optIn });
  const prefix = newPrefix(target.label);
  const keys = keySpace(prefix);
  const witness = new FrameWitness(sim);
  const procs: ReflexProcess[] = [];
  try {
    await witness.start();
    const subscriber = reflexRun(sim, target.url, prefix, 'subscriber');
    procs.push(subscriber);
    await subscriber.waitForLog('event stream connected', 90_000);
    const workers = [0, 1].map(() => reflexRun(sim, target.url, prefix, 'worker'));
    procs.push(...workers);
    await Promise.all(workers.map((w) => w.waitForLog('reflex running', 90_000)));
    await sleep(2_000); // the start-up resync's grace period
    opts.log(`  processes up; ${await target.before(prefix)}; storming`);

    const ticks = 20;
    let killed = '';
    let recovered: Promise<string> | undefined;
    for (let t = 0; t < ticks; t++) {
      sim.controls.storm(Math.round((total - crashes) / ticks));
      for (const n of names.slice((t * crashes) / ticks, ((t + 1) * crashes) / ticks)) sim.controls.crash(n);
      if (t === 8) {
        killed = await target.kill();
        opts.log(`  tick ${t + 1}: ${killed}`);
        recovered = target.recovered();
      }
      await sleep(500);
    }
    const took = await recovered!;
    opts.log(`  ${took}; waiting for remediation and the queues to drain`);
    await until('every crashed instance Running', () => names.every((n) => sim.controls.statusCode(n) === 103), 120_000, 250);
    await drained(target.url, keys, 120_000);
    await sleep(1_000);
    const report = await lossReport(sim, target.url, keys, witness, names);
    const exited = procs.filter((p) => p.child.exitCode !== null).length;
    const warnings = new Map<string, number>();
    for (const line of procs.flatMap((p) => p.logs)) {
      const why = (line.err as { message?: string } | undefined)?.message;
      const key = `${String(line.msg)}${why ? `: ${why.slice(0, 60)}` : ''}`;
      if (Number(line.level) >= 40) warnings.set(key, (warnings.get(key) ?? 0) + 1);
    }
    const logged = [...warnings]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([msg, n]) => `${n}× "${msg.slice(0, 140)}"`)
      .join(', ');
    return {
      did: `${total} events (${crashes} crashes of opted-in instances) through 1 subscriber + 2 worker processes; after tick 9 of ${ticks}: ${killed}; ${took}`,
      found: [...report.found, `${exited} reflex process(es) exited during the run; warnings and errors they logged: ${logged || 'none'}`],
      ok: report.ok && exited === 0,
    };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await witness.stop();
    await sim.stop();
  }
}
