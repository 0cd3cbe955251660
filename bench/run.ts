import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { soakSectionOf } from '../soak/report.js';
import type { BenchResult, Figure } from './support.js';

/**
 * `npm run bench`: runs each measurement in its own process, one after the other (they would
 * disturb each other), and writes every figure with its same-run baseline to BENCHMARKS.md.
 * Goals are reported, never asserted: the exit status is non-zero only when a run broke.
 *
 * `npm run bench -- --quick [name…]`: the same measurements, smaller and shorter (fewer events,
 * 15 s idle windows), to try a change on a shared machine; it prints the figures and leaves
 * BENCHMARKS.md alone.
 */
const files = [
  'crash-to-running.ts',
  'mass-failure.ts',
  'event-latency.ts',
  'storm.ts',
  'storm-replicas.ts',
  'storm-cpu.ts',
  'idle.ts',
  'commands.ts',
  'redis-cluster.ts',
  'ten-thousand-instances.ts',
  'console.ts',
  'probes.ts',
  'probes-deployment.ts',
];
const quick = process.argv.includes('--quick');
const only = process.argv.slice(2).filter((a) => a !== '--quick');
/** The quick form's sizes; a knob set in the environment wins. */
const quickKnobs: Record<string, string> = {
  BENCH_STORM_EVENTS: '2000',
  BENCH_CLUSTER_EVENTS: '1000',
  BENCH_LATENCY_EVENTS: '200',
  BENCH_INSTANCES: '2000',
  BENCH_LXD_ROUNDS_PER_HALF: '2',
  BENCH_MASS_INSTANCES: '4',
  BENCH_IDLE_SECONDS: '15',
  BENCH_IDLE_SETTLE_SECONDS: '5',
  BENCH_COMMAND_ROUNDS: '2',
};
const childEnv = quick ? { ...quickKnobs, ...process.env } : process.env;
const root = fileURLToPath(new URL('..', import.meta.url));
const started = new Date();
const loadBefore = loadavg();

const results: BenchResult[] = [];
const broken: string[] = [];
for (const file of files.filter((f) => only.length === 0 || only.some((o) => f.includes(o)))) {
  process.stderr.write(`bench: ${file}\n`);
  const t = performance.now();
  const { code, stdout } = await runFile(file);
  const line = stdout.split('\n').find((l) => l.startsWith('BENCH-RESULT '));
  if (code !== 0 || !line) {
    broken.push(`${file} (exit ${code}${line ? '' : ', no result'})`);
    continue;
  }
  const result = JSON.parse(line.slice('BENCH-RESULT '.length)) as BenchResult;
  results.push(result);
  process.stderr.write(`bench: ${file} done in ${((performance.now() - t) / 1000).toFixed(0)} s\n`);
  if (result.skipped) process.stdout.write(`${result.bench}: SKIPPED — ${result.skipped}\n`);
  for (const f of result.figures) process.stdout.write(`${formatLine(f)}\n`);
}

const seconds = (Date.now() - started.getTime()) / 1000;
if (quick) {
  process.stdout.write(`bench: quick form, ${seconds.toFixed(0)} s; BENCHMARKS.md left as it was (the full form: npm run bench)\n`);
  process.exit(broken.length ? 1 : 0);
}
// The soak's section is written by `npm run soak -- --write-benchmarks`, from a run of its own: kept as it is.
const previous = existsSync(`${root}/BENCHMARKS.md`) ? soakSectionOf(readFileSync(`${root}/BENCHMARKS.md`, 'utf8')) : '';
writeFileSync(`${root}/BENCHMARKS.md`, `${report(results, broken, seconds)}${previous ? `\n${previous}\n` : ''}`);
process.stdout.write(`bench: wrote BENCHMARKS.md (${results.reduce((n, r) => n + r.figures.length, 0)} figures, ${seconds.toFixed(0)} s)\n`);
if (broken.length) {
  process.stderr.write(`bench: broken run(s): ${broken.join(', ')}\n`);
  process.exit(1);
}

function runFile(file: string): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `bench/${file}`], { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    // Past the longest time limit a bench file sets itself (runBench): a file that hangs beyond it is killed.
    const timer = setTimeout(() => child.kill('SIGKILL'), 660_000);
    child.on('exit', (code) => (clearTimeout(timer), resolve({ code, stdout })));
  });
}

function num(v: number): string {
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
}

/** Markdown table cells cannot hold a bare pipe. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

function formatLine(f: Figure): string {
  return `${f.name}: ${num(f.value)} ${f.unit} vs ${num(f.baseline)} ${f.unit} (${f.baselineName}) = ${f.ratio.toFixed(2)}× — goal ${f.goal}: ${f.goal === 'reported' ? '—' : f.met ? 'met' : 'NOT met'}`;
}

function report(rs: BenchResult[], bad: string[], secs: number): string {
  const cpu = cpus()[0]?.model ?? 'unknown';
  const lines = [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (bench/run.ts); each figure is compared with a baseline measured in the same run on the same machine. Goals are reported, not asserted. Figures are noisy on a shared machine: read the ratios, and the load average below.',
    '',
    `- date: ${started.toISOString()}`,
    `- machine: ${cpus().length} CPU(s) (\`nproc\`), ${cpu}; ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory; Node ${process.version}; ${process.platform} ${process.arch}`,
    `- load average (1/5/15 min) before: ${loadBefore.map((l) => l.toFixed(2)).join(' / ')}; after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' / ')}`,
    `- duration: ${secs.toFixed(0)} s`,
    '',
    '| measurement | Reflex | baseline (same run) | ratio | goal | met |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rs) {
    if (r.skipped) lines.push(`| ${r.bench} | skipped: ${r.skipped} | | | | |`);
    for (const f of r.figures) {
      lines.push(
        `| ${cell(f.name)} | ${num(f.value)} ${f.unit} | ${num(f.baseline)} ${f.unit} (${cell(f.baselineName)}) | ${f.ratio.toFixed(2)}× | ${f.goal} | ${f.goal === 'reported' ? '—' : f.met ? 'yes' : '**no**'} |`,
      );
    }
  }
  for (const b of bad) lines.push(`| ${b} | broken run: no figures | | | | |`);
  lines.push('', '## Notes', '');
  for (const r of rs) {
    if (!r.notes.length) continue;
    lines.push(`**${r.bench}**`, '', ...r.notes.map((n) => `- ${n}`), '');
  }
  lines.push(
    'Run one measurement alone with `npm run bench -- <name>` (e.g. `npm run bench -- storm`); environment knobs: BENCH_LATENCY_EVENTS, BENCH_LATENCY_PACE_MS, BENCH_STORM_EVENTS, BENCH_CLUSTER_EVENTS, BENCH_STORM_REPLICAS, BENCH_INSTANCES, BENCH_LXD_ROUNDS_PER_HALF, BENCH_MASS_INSTANCES, BENCH_IDLE_SECONDS, BENCH_IDLE_SETTLE_SECONDS, BENCH_IDLE_INSTANCES, BENCH_IDLE_REPLICAS, BENCH_COMMAND_ROUNDS, BENCH_PROBE_INSTANCES, BENCH_PROBE_PERIOD_MS, BENCH_PROBE_DEPLOY_SECONDS, BENCH_PROBE_DEPLOY_SETTLE_SECONDS; `npm run bench -- --quick` runs every measurement smaller and shorter and leaves this file alone.',
    '',
  );
  return lines.join('\n');
}
