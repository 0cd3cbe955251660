import { parseArgs } from 'node:util';
import type { ChaosOptions, ScenarioResult } from './support.js';

/**
 * `npm run chaos` (long) or `npm run chaos -- --short` (CI): runs each scenario in turn on
 * loopback (private redis-servers on free ports, the simulator on a unix socket, `reflex run`
 * processes without an HTTP server), prints what it did and what it found, and exits non-zero when
 * any scenario fails or overruns. docs/chaos.md explains each.
 *
 * Scenarios are imported only when they run, so `--help` and a refused command line touch nothing.
 */
type Scenario = { name: string; about: string; load: () => Promise<(o: ChaosOptions) => Promise<ScenarioResult>> };
const scenarios: Scenario[] = [
  { name: 'fuzz', about: 'fast-check on frames, envelopes, filters, config and rule files', load: async () => (await import('./fuzz.js')).fuzz },
  {
    name: 'worker-kills',
    about: 'a stream of events and crashes while worker processes are SIGKILLed',
    load: async () => (await import('./worker-kills.js')).workerKills,
  },
  {
    name: 'redis-restart',
    about: 'Redis stopped and started again on its AOF mid-stream',
    load: async () => (await import('./redis-restart.js')).redisRestart,
  },
  {
    name: 'socket-cut',
    about: 'crashes while the event socket is cut or the server restarts',
    load: async () => (await import('./socket-cut.js')).socketCut,
  },
  { name: 'crash-loop', about: 'an instance dying after every start, three replicas', load: async () => (await import('./crash-loop.js')).crashLoop },
  {
    name: 'cluster-master-kill',
    about: 'the Redis Cluster master of the queues SIGKILLed mid-storm',
    load: async () => (await import('./cluster-master-kill.js')).clusterMasterKill,
  },
  {
    name: 'sentinel-failover',
    about: 'the Sentinel-managed master SIGKILLed mid-storm',
    load: async () => (await import('./sentinel-failover.js')).sentinelFailover,
  },
];

const usage = [
  'usage: npm run chaos -- [--short] [SCENARIO…]',
  '       node --import tsx chaos/run.ts [--short] [SCENARIO…]',
  '',
  'Runs the chaos scenarios (all of them, or those named) and exits 0 only when each passed.',
  '  --short      the CI size (a few minutes on 2 cores); default the long run',
  '  -h, --help   print this and exit',
  '',
  'Scenarios (docs/chaos.md):',
  ...scenarios.map((s) => `  ${s.name.padEnd(20)} ${s.about}`),
  '',
].join('\n');

function refuse(message: string): never {
  process.stderr.write(`chaos: ${message}\n\n${usage}`);
  process.exit(2);
}

let args: { values: { short?: boolean; help?: boolean }; positionals: string[] };
try {
  args = parseArgs({ options: { short: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
} catch (err) {
  refuse((err as Error).message);
}
if (args.values.help) {
  process.stdout.write(usage);
  process.exit(0);
}
const known = new Set(scenarios.map((s) => s.name));
const unknown = args.positionals.filter((n) => !known.has(n));
if (unknown.length) refuse(`unknown scenario${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}; known: ${[...known].join(', ')}`);

const short = args.values.short === true;
const selected = scenarios.filter((s) => args.positionals.length === 0 || args.positionals.includes(s.name));
const log = (line: string) => process.stdout.write(`${line}\n`);
const opts: ChaosOptions = { short, log };
const limitMs = short ? 150_000 : 400_000;

// Bounded: whatever happens, the run ends.
setTimeout(
  () => {
    log('chaos: FAIL — the whole run exceeded its time limit');
    process.exit(1);
  },
  short ? 480_000 : 1_800_000,
).unref();

const started = Date.now();
let failed = 0;
for (const { name, load } of selected) {
  log(`chaos: ${name} (${short ? 'short' : 'long'})`);
  const t = Date.now();
  let result: ScenarioResult;
  try {
    const run = await load();
    const overrun = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`did not finish within ${limitMs / 1000} s`)), limitMs).unref(),
    );
    result = await Promise.race([run(opts), overrun]);
  } catch (err) {
    result = { did: 'broke before finishing', found: [(err as Error).message], ok: false };
  }
  if (!result.ok) failed++;
  log(`chaos: ${name}: ${result.ok ? 'PASS' : 'FAIL'} in ${((Date.now() - t) / 1000).toFixed(0)} s`);
  log(`  did: ${result.did}`);
  for (const f of result.found) log(`  found: ${f}`);
}
log(
  `chaos: ${failed ? `${failed} of ${selected.length} scenario(s) failed` : `all ${selected.length} scenario(s) passed`} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
);
process.exit(failed ? 1 : 0);
