import { parseArgs } from 'node:util';
import type { RandomOptions } from './random.js';
import type { ChaosOptions, ScenarioResult } from './support.js';

/**
 * `npm run chaos` (long) or `npm run chaos -- --short` (CI): runs each scenario in turn on
 * loopback (private redis-servers on free ports, the simulator on a unix socket, `reflex run`
 * processes without an HTTP server), prints what it did and what it found, and exits non-zero when
 * any scenario fails or overruns. docs/chaos.md explains each.
 *
 * Scenarios are imported only when they run, so `--help` and a refused command line touch nothing.
 */
type Scenario = {
  name: string;
  about: string;
  load: () => Promise<(o: ChaosOptions) => Promise<ScenarioResult>>;
  /** Its own time limit, when the default (150 s short, 400 s long) does not fit it. */
  limitMs?: { short: number; long: number };
};
let randomOptions: RandomOptions = {};
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
    name: 'random',
    about: 'the promise checker: random histories of operator actions, crashes and faults (--random N --seed S)',
    load: async () => (await import('./random.js')).randomHistories(randomOptions),
    limitMs: { short: 480_000, long: 7_200_000 },
  },
  {
    name: 'sentinel-failover',
    about: 'the Sentinel-managed master SIGKILLed mid-storm',
    load: async () => (await import('./sentinel-failover.js')).sentinelFailover,
  },
];

const usage = [
  'usage: npm run chaos -- [--short] [SCENARIO…]',
  '       npm run chaos -- --random N [--seed S]     (the promise checker alone)',
  '       npm run chaos -- random --replay "crash #0 +120ms; stop #0 +0ms"',
  '       node --import tsx chaos/run.ts [--short] [SCENARIO…]',
  '',
  'Runs the chaos scenarios (all of them, or those named) and exits 0 only when each passed.',
  '  --short      the CI size (a few minutes on 2 cores); default the long run',
  '  --random N   run N random histories of the promise checker (scenario random) and nothing else',
  '  --seed S     the first seed of those histories (default from the clock; printed)',
  '  --replay R   run one history given as printed by a failing one',
  "  --target T   the daemon of those histories: sim (default), lxd or incus (the test bed's, real)",
  '  --without S  leave scenario S out (repeatable): CI runs random apart, beside the others',
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

let args: {
  values: { short?: boolean; help?: boolean; random?: string; seed?: string; replay?: string; target?: string; without?: string[] };
  positionals: string[];
};
try {
  args = parseArgs({
    options: {
      short: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      random: { type: 'string' },
      seed: { type: 'string' },
      replay: { type: 'string' },
      target: { type: 'string' },
      without: { type: 'string', multiple: true },
    },
    allowPositionals: true,
    strict: true,
  });
} catch (err) {
  refuse((err as Error).message);
}
if (args.values.help) {
  process.stdout.write(usage);
  process.exit(0);
}
const known = new Set(scenarios.map((s) => s.name));
const without = args.values.without ?? [];
const unknown = [...args.positionals, ...without].filter((n) => !known.has(n));
if (unknown.length) refuse(`unknown scenario${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}; known: ${[...known].join(', ')}`);

const count = (flag: string, text: string | undefined) => {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) refuse(`--${flag} takes a whole number, not "${text}"`);
  return Number(text);
};
const target = args.values.target;
if (target !== undefined && target !== 'sim' && target !== 'lxd' && target !== 'incus') refuse(`--target is sim, lxd or incus, not "${target}"`);
randomOptions = { histories: count('random', args.values.random), seed: count('seed', args.values.seed), replay: args.values.replay, target };
const randomOnly = args.values.random !== undefined || args.values.replay !== undefined || target !== undefined;
if (randomOnly && args.positionals.some((n) => n !== 'random')) refuse('--random, --replay and --target run the scenario random alone');
const short = args.values.short === true;
if (randomOnly && without.length) refuse('--without selects among the scenarios; --random, --replay and --target run random alone');
const selected = scenarios.filter(
  (s) => !without.includes(s.name) && (randomOnly ? s.name === 'random' : args.positionals.length === 0 || args.positionals.includes(s.name)),
);
const log = (line: string) => process.stdout.write(`${line}\n`);
const opts: ChaosOptions = { short, log };
const defaultLimitMs = short ? 150_000 : 400_000;

// Bounded: whatever happens, the run ends. A scenario with a limit of its own adds it.
const ownLimits = selected.reduce((sum, s) => sum + (s.limitMs ? (short ? s.limitMs.short : s.limitMs.long) : 0), 0);
setTimeout(
  () => {
    log('chaos: FAIL — the whole run exceeded its time limit');
    process.exit(1);
  },
  (short ? 480_000 : 1_800_000) + ownLimits,
).unref();

const started = Date.now();
let failed = 0;
for (const { name, load, limitMs: own } of selected) {
  const limitMs = own ? (short ? own.short : own.long) : defaultLimitMs;
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
