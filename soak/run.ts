import { parseArgs } from 'node:util';
import { readDuration } from '../src/config/duration.js';

/**
 * `npm run soak`: reads the command line, then runs the soak (soak/soak.ts), imported only then,
 * so `--help` and a refused command line start nothing.
 */

const usage = `usage: npm run soak -- [--minutes N] [--rate R] [--retention DURATION] [--out FILE] [--write-benchmarks] [--assert-flat]

A long run of one \`reflex run\` process against the simulator (200 instances, every tenth opted in
to restarts) on a private Redis: R API calls a second of load, a crash of an opted-in instance
every minute, and every 10 s a sample of Reflex's RSS and heap, Redis used_memory, DBSIZE and key
families, and the event lag. Exits 1 when a crash is not healed, an event is lost, Reflex logs an
error, a job fails or Reflex exits (and, with --assert-flat, when memory is not flat). docs/soak.md.

  --minutes N            length of the load, default 60
  --rate R               API calls a second, default 50
  --retention DURATION   the retention windows Reflex is given (audit, archive, rejected frames,
                         finished jobs), e.g. 10m; the steady state is the part after it.
                         Default a quarter of the run, between 1m and 15m
  --out FILE             write the series and the verdicts as JSON
  --write-benchmarks     replace the soak section of BENCHMARKS.md with this run
  --assert-flat          fail when Reflex's RSS or Redis used_memory is not flat (±10 %) in the steady state
  --no-typecheck         run Reflex with --no-typecheck (rules not type-checked at start)
  -h, --help             print this and exit
`;

function refuse(message: string): never {
  process.stderr.write(`soak: ${message}\n\n${usage}`);
  process.exit(2);
}

let parsed: ReturnType<typeof parseCli>;
function parseCli() {
  return parseArgs({
    options: {
      minutes: { type: 'string', default: '60' },
      rate: { type: 'string', default: '50' },
      retention: { type: 'string' },
      out: { type: 'string' },
      'write-benchmarks': { type: 'boolean' },
      'assert-flat': { type: 'boolean' },
      'no-typecheck': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
}
try {
  parsed = parseCli();
} catch (err) {
  refuse((err as Error).message);
}
const o = parsed.values;
if (o.help) {
  process.stdout.write(usage);
  process.exit(0);
}
const minutes = Number(o.minutes);
const rate = Number(o.rate);
if (!(minutes > 0)) refuse(`--minutes: expected a number of minutes above 0, got ${o.minutes}`);
if (!(rate > 0)) refuse(`--rate: expected API calls a second above 0, got ${o.rate}`);
const retentionMs = o.retention === undefined ? Math.min(15, Math.max(1, minutes / 4)) * 60_000 : readDuration(o.retention);
if (retentionMs === undefined || retentionMs < 1_000) refuse(`--retention: expected a duration of 1s or more (e.g. 10m), got ${o.retention}`);

const { runSoak } = await import('./soak.js');
const ok = await runSoak({
  minutes,
  rate,
  retentionMs,
  out: o.out,
  writeBenchmarks: o['write-benchmarks'] === true,
  assertFlat: o['assert-flat'] === true,
  noTypecheck: o['no-typecheck'] === true,
});
process.exit(ok ? 0 : 1);
