#!/usr/bin/env node
// `npm test`: the whole suite as two vitest runs side by side, their results as one.
//
// The real-daemon suites (every test file that reaches test/support/daemon-bed.ts through its
// imports) wait on the daemons, one suite at a time per daemon (the daemon locks); the other suites
// are in-process and wait on the CPU. In one vitest run they compete for the same worker slots, and
// a worker that picks a daemon suite while another holds that daemon's lock sits idle. So the
// daemon suites get a run of their own (one worker per daemon: LXD, Incus, the LXD cluster, and one
// for the packaging suites, which install for minutes before they take the LXD lock), beside
// the run of the rest (two workers, as many as the cores here). Six and four workers were tried in
// stop 54: the runs ended sooner (770 to 1025 s against 1206), but two of three clean-clone runs
// then failed an in-process suite at a load average of 11 (a browser's page reloaded under the
// test, a storm of 3 000 events), so the counts stay as they were until those suites hold there.
//
// Arguments go to both runs. A `--outputFile.json=FILE` gets each run's report and then the two
// merged into FILE. With a file filter or any other vitest command-line selection (`npm test --
// test/x.test.ts`), or REFLEX_TEST_ONE_RUN=1, it is one plain vitest run, as `npm run test:vitest`.
//
// REFLEX_TEST_DAEMONS_READY=FILE starts the real-daemon run only once FILE exists (CI prepares the
// test beds meanwhile, with the in-process run already going); FILE holding a reason instead of
// "ok" is printed and the daemon run starts anyway, so its suites fail saying what is missing.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const vitest = join(root, 'node_modules/vitest/vitest.mjs');
const args = process.argv.slice(2);
const DAEMON_BED = join(root, 'test/support/daemon-bed.ts');
const DAEMON_WORKERS = 4;
const IN_PROCESS_WORKERS = 2;
const IN_PROCESS_NICE = 5;

/** Options that select what runs (or are not a run at all): then the split does not apply. */
const selects = (arg) =>
  !arg.startsWith('-') || /^--(project|shard|changed|related|testNamePattern|t|watch|bail|help|version)\b/.test(arg) || arg === '-t';

if (process.env.REFLEX_TEST_ONE_RUN === '1' || args.some(selects)) {
  const run = spawnSync(process.execPath, [vitest, 'run', ...args], { stdio: 'inherit', cwd: root });
  process.exit(run.status ?? 1);
}

/** Test files below test/, relative to the root. */
function testFiles(dir = join(root, 'test')) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Whether `file` imports, directly or through other files of the repository, test/support/daemon-bed.ts. */
const reaches = new Map();
function reachesDaemonBed(file) {
  if (file === DAEMON_BED) return true;
  if (reaches.has(file)) return reaches.get(file);
  reaches.set(file, false); // a cycle does not reach it through itself
  const source = readFileSync(file, 'utf8');
  let found = false;
  for (const [, spec] of source.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
    const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
    if (existsSync(target) && reachesDaemonBed(target)) {
      found = true;
      break;
    }
  }
  reaches.set(file, found);
  return found;
}

const files = testFiles();
const daemonFiles = files.filter(reachesDaemonBed).map((f) => relative(root, f));

console.log(
  `test: ${daemonFiles.length} real-daemon files in a run of their own (${DAEMON_WORKERS} workers), ${files.length - daemonFiles.length} in-process files beside it:`,
);
console.log(`test: real-daemon files: ${daemonFiles.join(' ')}`);

// One build of dist/ for both runs (each run's global set-up would build it again, at the same
// time); scripts/build.mjs skips the compiler when dist/ is current.
const build = spawnSync(process.execPath, [join(root, 'scripts/build.mjs')], { cwd: root, encoding: 'utf8' });
if (build.status !== 0)
  process.stderr.write(`test: npm run build exited ${build.status}; dist/ was emitted anyway:\n${build.stdout.slice(0, 2000)}${build.stderr}`);

const output = args.find((a) => a.startsWith('--outputFile.json='))?.slice('--outputFile.json='.length);
const shared = args.filter((a) => !a.startsWith('--outputFile.json='));
// The in-process run is niced: the real-daemon suites wait on windows of real time (a back-off,
// a crash-loop budget) and get the CPU first; the in-process suites wait on conditions and take what is left.
const runs = [
  { name: 'daemons', nice: 0, args: [`--maxWorkers=${DAEMON_WORKERS}`, ...daemonFiles] },
  // Each file in a fork of its own (vitest's default isolation). Sharing each worker's module
  // registry (--isolate=false) was measured in stop 39: the in-process run alone on a quiet machine
  // went from 10.9 to 7.5–8.4 min, but in CI beside the real-daemon run it did not end sooner (the
  // workers' heaps grew to about 430 MB each, and tests got slower), so the files stay isolated.
  { name: 'in-process', nice: IN_PROCESS_NICE, args: [`--maxWorkers=${IN_PROCESS_WORKERS}`, ...daemonFiles.flatMap((f) => ['--exclude', f])] },
];

/** Resolves once the test beds are said to be ready (REFLEX_TEST_DAEMONS_READY), at once without it. */
async function bedsReady(run) {
  const file = process.env.REFLEX_TEST_DAEMONS_READY;
  if (run.name !== 'daemons' || !file) return;
  console.log(`test: the real-daemon run waits for the test beds (${file})`);
  const since = Date.now();
  while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 500));
  const said = readFileSync(file, 'utf8').trim();
  console.log(`test: the test beds are ${said === 'ok' ? 'ready' : `NOT ready: ${said}`} after ${Math.round((Date.now() - since) / 1000)} s`);
}

// Each real-daemon suite's hold of its daemon's lock, told at the end (test/support/daemon-bed.ts).
const lockLog = join(root, '.tmp/daemon-locks.jsonl');
rmSync(lockLog, { force: true });

const started = Date.now();
const children = new Set();
// A run stopped from outside stops both vitest runs (a Ctrl-C reaches them through the terminal anyway).
for (const signal of ['SIGTERM', 'SIGHUP'])
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
  });
const results = await Promise.all(
  runs.map(async (run) => {
    await bedsReady(run);
    return new Promise((done) => {
      const report = output ? `${output}.${run.name}.json` : undefined;
      if (report) rmSync(report, { force: true });
      const command = [process.execPath, vitest, 'run', ...shared, ...(report ? [`--outputFile.json=${report}`] : []), ...run.args];
      const [file, ...rest] = run.nice ? ['nice', '-n', String(run.nice), ...command] : command;
      const child = spawn(file, rest, {
        cwd: root,
        // Colours as vitest would choose them for this terminal (its output goes through a pipe here).
        env: {
          ...process.env,
          REFLEX_TEST_DIST_BUILT: '1',
          REFLEX_TEST_LOCK_LOG: lockLog,
          ...(process.stdout.isTTY && !process.env.NO_COLOR ? { FORCE_COLOR: '1' } : {}),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.add(child);
      for (const [stream, sink] of [
        [child.stdout, process.stdout],
        [child.stderr, process.stderr],
      ])
        createInterface({ input: stream }).on('line', (line) => sink.write(`[${run.name}] ${line}\n`));
      child.on('close', (code, signal) => done({ ...run, code: code ?? (signal ? 1 : 0), report }));
    });
  }),
);

if (output) {
  const merged = {
    numTotalTestSuites: 0,
    numPassedTestSuites: 0,
    numFailedTestSuites: 0,
    numPendingTestSuites: 0,
    numTotalTests: 0,
    numPassedTests: 0,
    numFailedTests: 0,
    numPendingTests: 0,
    numTodoTests: 0,
    startTime: started,
    success: true,
    testResults: [],
  };
  for (const run of results) {
    if (!existsSync(run.report)) {
      process.stderr.write(`test: the ${run.name} run wrote no report (${run.report})\n`);
      merged.success = false;
      continue;
    }
    const r = JSON.parse(readFileSync(run.report, 'utf8'));
    for (const key of Object.keys(merged)) if (typeof merged[key] === 'number' && key !== 'startTime') merged[key] += r[key] ?? 0;
    merged.startTime = Math.min(merged.startTime, r.startTime ?? started);
    merged.success &&= r.success !== false;
    merged.testResults.push(...r.testResults);
  }
  writeFileSync(output, JSON.stringify(merged));
}

/** How long each daemon was held by suites, and the longest holds: where the real-daemon run's time goes. */
function tellLockHolds() {
  if (!existsSync(lockLog)) return;
  const holds = readFileSync(lockLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  const byLock = new Map();
  for (const h of holds) byLock.set(h.lock, [...(byLock.get(h.lock) ?? []), h]);
  for (const [lock, list] of byLock) {
    const held = list.reduce((sum, h) => sum + (h.released - h.taken), 0);
    const waited = list.reduce((sum, h) => sum + (h.taken - h.asked), 0);
    const longest = list
      .toSorted((a, b) => b.released - b.taken - (a.released - a.taken))
      .slice(0, 5)
      .map((h) => `${h.suite} ${Math.round((h.released - h.taken) / 1000)} s`);
    console.log(
      `test: lock ${lock}: held ${Math.round(held / 1000)} s by ${list.length} suites (waited for ${Math.round(waited / 1000)} s in all); longest: ${longest.join('; ')}`,
    );
  }
}
tellLockHolds();

for (const run of results)
  console.log(
    `test: the ${run.name} run (${run.name === 'daemons' ? `${daemonFiles.length} files` : `${files.length - daemonFiles.length} files`}) exited ${run.code}`,
  );
console.log(`test: both runs took ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
