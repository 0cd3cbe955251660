import { clusterMasterKill } from './cluster-master-kill.js';
import { crashLoop } from './crash-loop.js';
import { fuzz } from './fuzz.js';
import { redisRestart } from './redis-restart.js';
import { sentinelFailover } from './sentinel-failover.js';
import { socketCut } from './socket-cut.js';
import type { ChaosOptions, ScenarioResult } from './support.js';
import { workerKills } from './worker-kills.js';

/**
 * `npm run chaos` (long) or `npm run chaos -- --short` (CI): runs each scenario in turn on
 * loopback (private redis-servers, the simulator, `reflex run` processes), prints what it did and
 * what it found, and exits non-zero when any scenario fails or overruns. docs/chaos.md explains each.
 */
const short = process.argv.includes('--short');
const only = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const log = (line: string) => process.stdout.write(`${line}\n`);
const opts: ChaosOptions = { short, log };
const scenarios: [string, (o: ChaosOptions) => Promise<ScenarioResult>][] = [
  ['fuzz', fuzz],
  ['worker-kills', workerKills],
  ['redis-restart', redisRestart],
  ['socket-cut', socketCut],
  ['crash-loop', crashLoop],
  ['cluster-master-kill', clusterMasterKill],
  ['sentinel-failover', sentinelFailover],
];
const limitMs = short ? 150_000 : 400_000;

// Bounded: whatever happens, the run ends.
setTimeout(() => {
  log('chaos: FAIL — the whole run exceeded its time limit');
  process.exit(1);
}, short ? 480_000 : 1_800_000).unref();

const started = Date.now();
let failed = 0;
for (const [name, run] of scenarios.filter(([n]) => only.length === 0 || only.includes(n))) {
  log(`chaos: ${name} (${short ? 'short' : 'long'})`);
  const t = Date.now();
  let result: ScenarioResult;
  try {
    const overrun = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`did not finish within ${limitMs / 1000} s`)), limitMs).unref());
    result = await Promise.race([run(opts), overrun]);
  } catch (err) {
    result = { did: 'broke before finishing', found: [(err as Error).message], ok: false };
  }
  if (!result.ok) failed++;
  log(`chaos: ${name}: ${result.ok ? 'PASS' : 'FAIL'} in ${((Date.now() - t) / 1000).toFixed(0)} s`);
  log(`  did: ${result.did}`);
  for (const f of result.found) log(`  found: ${f}`);
}
log(`chaos: ${failed ? `${failed} scenario(s) failed` : 'all scenarios passed'} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
process.exit(failed ? 1 : 0);
