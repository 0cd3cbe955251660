#!/usr/bin/env node
// `npm run test:scale [-- --short] [-- --json=DIR] [-- cluster|sentinel]`: runs the ingestion, remediation, audit
// and housekeeping suites (housekeeping plans and the scheduler live in test/housekeeping and
// test/schedules) once on a real 6-node Redis Cluster and once on a real Sentinel set-up, each
// started by the test run's global setup (REFLEX_TEST_REDIS, test/support/redis-topology.ts).
// --short runs the subset CI runs. Prints each run's duration; exits non-zero if one failed.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const full = ['test/ingestion', 'test/remediation', 'test/audit', 'test/housekeeping', 'test/schedules'];
// The short form: one file of each suite that writes through the product's Redis paths (queues,
// Lua scripts, the audit chain, the scheduler), about a quarter of the full run's time.
const short = [
  'test/ingestion/gap-free-stream.test.ts',
  'test/remediation/decide-twice-act-once.test.ts',
  'test/audit',
  'test/housekeeping',
  'test/schedules/scheduler.test.ts',
];

const args = process.argv.slice(2);
// --json=DIR: each run also writes vitest's JSON report to DIR/scale-<topology>.json (CI counts them).
const jsonDir = args.find((a) => a.startsWith('--json='))?.slice('--json='.length);
const files = args.includes('--short') ? short : full;
const asked = args.filter((a) => !a.startsWith('--'));
const topologies = asked.length ? asked : ['cluster', 'sentinel'];
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));

const results = [];
for (const topology of topologies) {
  process.stdout.write(`test:scale: ${files.join(' ')} on ${topology}\n`);
  const started = Date.now();
  const report = jsonDir ? ['--reporter=default', '--reporter=json', `--outputFile.json=${jsonDir}/scale-${topology}.json`] : [];
  const run = spawnSync(process.execPath, [vitest, 'run', ...report, ...files], {
    stdio: 'inherit',
    env: { ...process.env, REFLEX_TEST_REDIS: topology, REDIS_URL: '' },
  });
  results.push({ topology, ok: run.status === 0, seconds: Math.round((Date.now() - started) / 1000) });
}
for (const r of results) process.stdout.write(`test:scale: ${r.topology}: ${r.ok ? 'passed' : 'FAILED'} in ${r.seconds} s\n`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
