import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { Queue } from 'bullmq';
import { InstanceClient } from '../src/client/client.js';
import { parseTarget } from '../src/client/target.js';
import { defineProbe, type Probe } from '../src/probes/probe.js';
import { ProbeRunner } from '../src/probes/probe-runner.js';
import { redisFromUrl } from '../src/redis/connect.js';
import { keySpace } from '../src/redis/key-space.js';
import { Silences } from '../src/silences/silences.js';
import { startSimulator } from '../src/simulator/simulator.js';
import { acquireDaemonLock, lxdBed, lxdSocketPath, TEST_INSTANCE_PREFIX } from '../test/support/daemon-bed.js';
import { sleep } from '../test/support/wait.js';
import { benchRedis } from './stack.js';
import { atMost, progress, runBench, silentLogger, type Figure } from './support.js';

/**
 * What health probes cost, in three settings:
 * - the simulator: `BENCH_PROBE_INSTANCES` (1000) instances, each with an exec probe every
 *   `BENCH_PROBE_PERIOD_MS` (10 s), over `BENCH_PROBE_SECONDS` (30);
 * - the same with an http probe of each instance's endpoint on the simulator's guest port (the
 *   runner reads each instance's state for its address, then GETs /healthz), against bare GETs;
 *   goal at most 5× a bare GET (the runner's check adds a daemon call for the state to the GET);
 * - the real LXD test bed (when it answers): `BENCH_PROBE_LXD_INSTANCES` (20) containers, each with
 *   an exec probe every `BENCH_PROBE_LXD_PERIOD_MS` (1 s), over the same window (`BENCH_PROBE_LXD=off`
 *   leaves it out).
 * One in-process ProbeRunner checks them. Figures: CPU per check and probes per second per CPU core
 * (this process's CPU, the simulator's share of the execs included; on LXD the daemon's CPU is
 * reported beside it). Baseline, same run, same daemon and rate: the same execs sent straight by a
 * client (no runner, no Redis), so the ratio is the runner's own overhead per check. Goal: the
 * runner costs at most 3× a bare exec.
 */
const bench = 'probes';
const windowSeconds = Number(process.env.BENCH_PROBE_SECONDS) || 30;

interface Cost {
  expectedPerSecond: number;
  checks: number;
  runCpu: number;
  bare: number;
  baseCpu: number;
  /** The daemon's CPU seconds during the runner's window and the baseline's (real daemons only). */
  daemon?: { run: number; base: number };
}

await runBench(
  bench,
  async () => {
    const redisServer = await benchRedis();
    const notes: string[] = [];
    const figures: Figure[] = [];
    try {
      report('simulator', await simCost(redisServer.url, 'exec'), figures, notes);
      report('simulator, http', await simCost(redisServer.url, 'http'), figures, notes);
      if (process.env.BENCH_PROBE_LXD === 'off') notes.push('real LXD: skipped (BENCH_PROBE_LXD=off)');
      else if (await lxdBed.reachable()) report('LXD', await lxdCost(redisServer.url), figures, notes);
      else notes.push(`real LXD: skipped, no daemon at ${lxdSocketPath() ?? '/var/lib/lxd/unix.socket'} (scripts/lxd-testbed.sh)`);
      notes.push(`${cpus().length} cores`);
      return { bench, figures, notes };
    } finally {
      await redisServer.stop();
    }
  },
  { timeoutMs: 900_000 },
);

async function simCost(redisUrl: string, kind: 'exec' | 'http'): Promise<Cost> {
  const instances = Number(process.env.BENCH_PROBE_INSTANCES) || 1000;
  const periodMs = Number(process.env.BENCH_PROBE_PERIOD_MS) || 10_000;
  const sim = await startSimulator({ instances: 0, timings: { startMs: 10, stopMs: 10, stopHookMs: 10, taskMs: 5 } });
  for (let i = 0; i < instances; i++) sim.controls.addInstance({ name: `p${i}`, status: 'Running' });
  const target = `unix://${sim.socketPath}`;
  try {
    progress(bench, `simulator: ${instances} instances, an ${kind} probe every ${periodMs} ms`);
    const names = Array.from({ length: instances }, (_, i) => `p${i}`);
    if (kind === 'exec') return await cost(redisUrl, target, names, periodMs, undefined);
    const probe = defineProbe({ name: 'bench', kind: 'http', url: '/healthz', port: sim.guestPort, periodMs, timeoutMs: 5_000 });
    const addresses = names.map((n) => sim.controls.guestAddress(n));
    const bareGet = async (i: number) =>
      void (await (await fetch(`http://${addresses[i]}:${sim.guestPort}/healthz`, { signal: AbortSignal.timeout(5_000) })).text());
    return await cost(redisUrl, target, names, periodMs, undefined, { probe, bare: bareGet });
  } finally {
    await sim.stop();
  }
}

async function lxdCost(redisUrl: string): Promise<Cost> {
  const count = Number(process.env.BENCH_PROBE_LXD_INSTANCES) || 20;
  const periodMs = Number(process.env.BENCH_PROBE_LXD_PERIOD_MS) || 1_000;
  const release = await acquireDaemonLock('lxd');
  const socket = lxdSocketPath()!;
  const names = Array.from({ length: count }, (_, i) => `${TEST_INSTANCE_PREFIX}probe-bench-${String(i + 1).padStart(2, '0')}`);
  try {
    progress(bench, `LXD: launching ${count} containers`);
    for (let i = 0; i < names.length; i += 4) await Promise.all(names.slice(i, i + 4).map((name) => lxdBed.launch({ name })));
    progress(bench, `LXD: ${count} containers, an exec probe every ${periodMs} ms`);
    return await cost(redisUrl, `unix://${socket}`, names, periodMs, daemonPid(socket));
  } finally {
    for (const name of names) await lxdBed.remove(name).catch(() => undefined);
    await release();
  }
}

/** The runner's window against the same execs sent straight, at the same rate, on the same daemon. */
async function cost(
  redisUrl: string,
  target: string,
  names: string[],
  periodMs: number,
  daemon: number | undefined,
  http?: { probe: Probe; bare: (i: number) => Promise<void> },
): Promise<Cost> {
  const client = new InstanceClient(parseTarget(target));
  const redis = redisFromUrl(redisUrl);
  const keys = keySpace(`bench-probes-${Date.now()}`);
  const queue = new Queue(keys.eventsQueue, { connection: redisFromUrl(redisUrl), prefix: keys.bullPrefix });
  const probe = http?.probe ?? defineProbe({ name: 'bench', kind: 'exec', command: ['true'], periodMs, timeoutMs: 5_000 });
  const bareCheck =
    http?.bare ?? (async (i: number) => void (await (await client.exec(names[i]!, { command: ['true'] }, { timeoutMs: 5_000 })).wait()));
  try {
    const perSecond = names.length / (periodMs / 1000);
    // Warmed first, unmeasured: a baseline measured cold (JIT, connections) costs more than it
    // would after the runner's warm window, and flattered the ratio (0.69 × once).
    progress(bench, `warm-up: ${Math.ceil(perSecond * 5)} bare checks`);
    for (let i = 0; i < Math.ceil(perSecond * 5); i++) await bareCheck(i % names.length);
    progress(bench, `baseline: ${perSecond} bare checks/s for ${windowSeconds} s`);
    const base0 = process.cpuUsage();
    const daemonBase0 = daemonCpu(daemon);
    let bare = 0;
    const t0 = Date.now();
    while (Date.now() - t0 < windowSeconds * 1000) {
      const due = Math.floor(((Date.now() - t0) / 1000) * perSecond);
      // One at a time, as fast as the rate asks: a burst of websocket connects is not what a runner sends either.
      for (; bare < due; bare++) await bareCheck(bare % names.length);
      await sleep(50);
    }
    const baseCpu = cpuSeconds(process.cpuUsage(base0));
    const daemonBase = daemonCpu(daemon) - daemonBase0;
    progress(bench, `runner: ${windowSeconds} s`);
    const runner = new ProbeRunner({
      targets: [{ id: target, client }],
      redis,
      keys,
      eventsQueue: queue,
      silences: new Silences(redis, keys.silences),
      logger: silentLogger,
      probes: () => [probe],
    });
    await runner.start();
    // Its first period spreads the checks: measure from the second on.
    await sleep(periodMs + 1_000);
    const c0 = runner.counts.checks;
    const run0 = process.cpuUsage();
    const daemonRun0 = daemonCpu(daemon);
    await sleep(windowSeconds * 1000);
    const runCpu = cpuSeconds(process.cpuUsage(run0));
    const daemonRun = daemonCpu(daemon) - daemonRun0;
    const checks = runner.counts.checks - c0;
    await runner.stop();
    return { expectedPerSecond: perSecond, checks, runCpu, bare, baseCpu, ...(daemon ? { daemon: { run: daemonRun, base: daemonBase } } : {}) };
  } finally {
    await queue.close();
    redis.disconnect();
    await client.close();
  }
}

function report(where: string, c: Cost, figures: Figure[], notes: string[]): void {
  figures.push(
    atMost(
      `CPU per probe check (runner${where === 'simulator' ? ' + simulated daemon' : ''}), ${where}`,
      'ms',
      (1000 * c.runCpu) / Math.max(1, c.checks),
      where.endsWith('http') ? 'a bare GET' : 'a bare exec',
      (1000 * c.baseCpu) / Math.max(1, c.bare),
      where.endsWith('http') ? 5 : 3,
    ),
  );
  notes.push(
    `${where}: ${c.checks} checks in ${windowSeconds} s (${(c.checks / windowSeconds).toFixed(1)}/s, expected ${c.expectedPerSecond}/s) using ${c.runCpu.toFixed(2)} CPU s; baseline ${c.bare} bare checks using ${c.baseCpu.toFixed(2)} CPU s`,
    `${where}: probes per second per CPU core: ${(c.checks / c.runCpu).toFixed(0)} (bare checks: ${(c.bare / c.baseCpu).toFixed(0)})`,
  );
  if (c.daemon)
    notes.push(
      `${where}: the daemon's CPU per check ${((1000 * c.daemon.run) / Math.max(1, c.checks)).toFixed(1)} ms (bare exec ${((1000 * c.daemon.base) / Math.max(1, c.bare)).toFixed(1)} ms); probes per second per CPU core, daemon and runner together: ${(c.checks / (c.runCpu + c.daemon.run)).toFixed(0)}`,
    );
}

/** The pid of the process listening on a unix socket (the daemon), from `ss`. */
function daemonPid(socket: string): number | undefined {
  try {
    const out = execFileSync('ss', ['-xlpH', 'src', socket], { encoding: 'utf8' });
    const m = /pid=(\d+)/.exec(out);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** A process's user + system CPU seconds, its exited children's included (exec's forkexec helpers), from /proc. */
function daemonCpu(pid: number | undefined): number {
  if (!pid) return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // Fields 14–17 (utime, stime, cutime, cstime) are 11–14 after the name.
  return fields.slice(11, 15).reduce((s, v) => s + Number(v), 0) / 100;
}

function cpuSeconds(u: NodeJS.CpuUsage): number {
  return (u.user + u.system) / 1e6;
}
