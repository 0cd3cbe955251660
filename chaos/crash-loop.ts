import { startSimulator } from '../src/simulator/simulator.js';
import { auditOf, keySpace, newPrefix, optIn, reflexRun, RestartableRedis, type ChaosOptions, type ScenarioResult } from './support.js';
import { sleep, until } from '../test/support/wait.js';

/**
 * An instance that dies shortly after every start, with three replicas running: the restarts must
 * stay within the rule's budget (5) and exactly one alert must be raised when it is quarantined.
 */
export async function crashLoop(_opts: ChaosOptions): Promise<ScenarioResult> {
  const redis = await RestartableRedis.start();
  const sim = await startSimulator({ instances: 0, timings: { startMs: 50, stopHookMs: 100 } });
  sim.controls.addInstance({ name: 'looper', config: optIn });
  const prefix = newPrefix('loop');
  const env = { REFLEX_CRASHLOOP_BACKOFF_MS: '200' };
  const procs = [0, 1, 2].map(() => reflexRun(sim, redis.url, prefix, 'all', env));
  try {
    await Promise.all(procs.map((p) => p.waitForLog('reflex running', 90_000)));
    await until(
      'one replica reading the stream',
      () => procs.some((p) => p.logs.some((l) => String(l.msg).includes('event stream connected'))),
      15_000,
    );
    await sleep(2_000);
    sim.controls.crashLoop('looper', 300);
    sim.controls.crash('looper');
    const keys = keySpace(prefix);
    let alerts = 0;
    await until(
      'the quarantine alert',
      async () => {
        alerts = (await auditOf(redis.url, keys)).filter(
          (r) => r.type === 'alert' && r.kind === 'instance.crash-loop' && r.instance === 'looper' && r.resolved !== true,
        ).length;
        return alerts > 0;
      },
      45_000,
      300,
    );
    await sleep(3_000); // room for a second alert or an extra restart
    alerts = (await auditOf(redis.url, keys)).filter(
      (r) => r.type === 'alert' && r.kind === 'instance.crash-loop' && r.instance === 'looper' && r.resolved !== true,
    ).length;
    const starts = sim.controls.calls('looper', 'start');
    return {
      did: 'crash-looping instance (dies 300 ms after each start, back-off from 200 ms) with 3 replicas of reflex run',
      found: [`${starts} restart(s) (budget 5), ${alerts} alert(s)`],
      ok: starts >= 1 && starts <= 5 && alerts === 1,
    };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await sim.stop();
    await redis.stop();
  }
}
