import { cpus } from 'node:os';
import { Queue } from 'bullmq';
import { InstanceClient } from '../src/client/client.js';
import { parseTarget } from '../src/client/target.js';
import { defineProbe } from '../src/probes/probe.js';
import { ProbeRunner } from '../src/probes/probe-runner.js';
import { redisFromUrl } from '../src/redis/connect.js';
import { keySpace } from '../src/redis/key-space.js';
import { Silences } from '../src/silences/silences.js';
import { startSimulator } from '../src/simulator/simulator.js';
import { sleep } from '../test/support/wait.js';
import { benchRedis } from './stack.js';
import { atMost, progress, runBench, silentLogger, type Figure } from './support.js';

/**
 * What health probes cost: `BENCH_PROBE_INSTANCES` (1000) simulated instances, each with an exec
 * probe every `BENCH_PROBE_PERIOD_MS` (10 s), run by one in-process ProbeRunner over a window of
 * `BENCH_PROBE_SECONDS` (30). Figure: probes per second per CPU core (this process's CPU, the
 * simulator's share of the execs included). Baseline, same run, same simulator and rate: the same
 * execs sent straight by a client (no runner, no Redis), so the ratio is the runner's own overhead
 * per check. Goal: the runner costs at most 3× a bare exec.
 *
 * `BENCH_PROBE_KIND=http`: an http probe of each instance's endpoint on the simulator's guest port
 * instead (the runner reads each instance's state for its address, then GETs /healthz), against
 * bare GETs of the same endpoints at the same rate. Goal: at most 5× a bare GET (the runner's
 * check adds a daemon call for the state to the GET).
 */
const kind = process.env.BENCH_PROBE_KIND === 'http' ? 'http' : 'exec';
const bench = kind === 'http' ? 'probes-http' : 'probes';
const instances = Number(process.env.BENCH_PROBE_INSTANCES) || 1000;
const periodMs = Number(process.env.BENCH_PROBE_PERIOD_MS) || 10_000;
const windowSeconds = Number(process.env.BENCH_PROBE_SECONDS) || 30;

await runBench(
  bench,
  async () => {
    const redisServer = await benchRedis();
    const sim = await startSimulator({ instances: 0, timings: { startMs: 10, stopMs: 10, stopHookMs: 10, taskMs: 5 } });
    for (let i = 0; i < instances; i++) sim.controls.addInstance({ name: `p${i}`, status: 'Running' });
    const client = new InstanceClient(parseTarget(`unix://${sim.socketPath}`));
    const redis = redisFromUrl(redisServer.url);
    const keys = keySpace('bench-probes');
    const queue = new Queue(keys.eventsQueue, { connection: redisFromUrl(redisServer.url), prefix: keys.bullPrefix });
    const probe =
      kind === 'http'
        ? defineProbe({ name: 'bench', kind: 'http', url: '/healthz', port: sim.guestPort, periodMs, timeoutMs: 5_000 })
        : defineProbe({ name: 'bench', kind: 'exec', command: ['true'], periodMs, timeoutMs: 5_000 });
    const addresses = kind === 'http' ? Array.from({ length: instances }, (_, i) => sim.controls.guestAddress(`p${i}`)) : [];
    const bareCheck = async (i: number): Promise<void> => {
      if (kind === 'exec') await (await client.exec(`p${i}`, { command: ['true'] }, { timeoutMs: 5_000 })).wait();
      else await (await fetch(`http://${addresses[i]}:${sim.guestPort}/healthz`, { signal: AbortSignal.timeout(5_000) })).text();
    };
    const notes: string[] = [];
    try {
      // Baseline: the same number of execs per second, sent straight.
      const perSecond = instances / (periodMs / 1000);
      progress(bench, `baseline: ${perSecond} bare ${kind} checks/s for ${windowSeconds} s`);
      const base0 = process.cpuUsage();
      let bare = 0;
      const t0 = Date.now();
      while (Date.now() - t0 < windowSeconds * 1000) {
        const due = Math.floor(((Date.now() - t0) / 1000) * perSecond);
        // One at a time, as fast as the rate asks: a burst of websocket connects is not what a runner sends either.
        for (; bare < due; bare++) await bareCheck(bare % instances);
        await sleep(50);
      }
      const baseCpu = cpuSeconds(process.cpuUsage(base0));
      progress(bench, `runner: ${instances} instances, a probe every ${periodMs} ms, ${windowSeconds} s`);
      const runner = new ProbeRunner({
        targets: [{ id: `unix://${sim.socketPath}`, client }],
        redis,
        keys,
        eventsQueue: queue,
        silences: new Silences(redis, keys.silences),
        logger: silentLogger,
        probes: () => [probe],
      });
      await runner.start();
      // Its first period spreads the checks: measure from the second on.
      await sleep(periodMs);
      const c0 = runner.counts.checks;
      const run0 = process.cpuUsage();
      await sleep(windowSeconds * 1000);
      const runCpu = cpuSeconds(process.cpuUsage(run0));
      const checks = runner.counts.checks - c0;
      await runner.stop();
      const probesPerCoreSecond = checks / runCpu;
      const baselinePerCoreSecond = bare / baseCpu;
      notes.push(
        `${checks} checks in ${windowSeconds} s (${(checks / windowSeconds).toFixed(1)}/s, expected ${perSecond}/s) using ${runCpu.toFixed(2)} CPU s; baseline ${bare} bare ${kind} checks using ${baseCpu.toFixed(2)} CPU s; ${cpus().length} cores`,
      );
      const figures: Figure[] = [
        atMost(
          'CPU per probe check (runner + simulated daemon)',
          'ms',
          (1000 * runCpu) / Math.max(1, checks),
          kind === 'http' ? 'a bare GET' : 'a bare exec',
          (1000 * baseCpu) / Math.max(1, bare),
          kind === 'http' ? 5 : 3,
        ),
      ];
      notes.push(`probes per second per CPU core: ${probesPerCoreSecond.toFixed(0)} (bare ${kind} checks: ${baselinePerCoreSecond.toFixed(0)})`);
      return { bench, figures, notes };
    } finally {
      await queue.close();
      redis.disconnect();
      await client.close();
      await sim.stop();
      await redisServer.stop();
    }
  },
  { timeoutMs: 600_000 },
);

function cpuSeconds(u: NodeJS.CpuUsage): number {
  return (u.user + u.system) / 1e6;
}
