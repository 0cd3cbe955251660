import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { duplicateConnection, redisFromUrl } from '../src/redis/connect.js';
import { startStack } from '../test/support/stack.js';
import { startReflexProcess, type ReflexProcess } from '../test/support/reflex-process.js';
import { bullmqAddProcess } from './baseline-bullmq.js';
import { ownCpuSeconds, processCpuSeconds, redisPid } from './cpu.js';
import { SimProbe } from './sim-probe.js';
import { benchRedis, eventsIdle, optedInName, optIn, rulesDir, settled } from './stack.js';
import { until } from '../test/support/wait.js';
import { lostEvents, timeStorm } from './storm-measure.js';
import { atMost, progress, reflexRunArgs, runBench, silentLogger, type Figure } from './support.js';

/**
 * What the storm of bench/storm.ts costs in CPU: 10k mixed events, 1k of them crashes the rules
 * act on, worked by Reflex as separate processes (one `reflex run --role subscriber`, then 1 and
 * 3 `reflex run --role worker`), so that every Reflex process and Redis can be read from
 * /proc/PID/stat; the simulator runs in the bench process and is not counted. The span runs from
 * the storm's emission until every crashed instance was started and the events queue is idle, so
 * it holds all the work the storm causes (the restarts and their follow-on events too).
 * Against: raw BullMQ add + process of as many empty jobs (this process, producer and worker, plus
 * Redis), per 1 000. And the replica overhead: the workers' CPU with 3 replicas over with 1.
 */
const bench = 'storm-cpu';
const total = Number(process.env.BENCH_STORM_EVENTS) || 10_000;
const matching = total / 10;
const replicaCounts = (process.env.BENCH_STORM_REPLICAS ?? '1,3').split(',').map(Number);

interface StormCpu {
  seconds: number;
  subscriber: number;
  workers: number;
  redis: number;
  lost: { count: number; summary: string };
}

await runBench(
  bench,
  async () => {
    const redis = await benchRedis();
    const conn = redisFromUrl(redis.url);
    try {
      const pid = await redisPid(conn);
      const before = { own: ownCpuSeconds(), redis: processCpuSeconds(pid) };
      let after = before;
      const rate = await bullmqAddProcess(redis.url, total, { onProcessed: () => (after = { own: ownCpuSeconds(), redis: processCpuSeconds(pid) }) });
      const baseline = ((after.own - before.own + (after.redis - before.redis)) * 1000) / total;
      progress(bench, `raw BullMQ add+process: ${Math.round(rate)} jobs/s, ${baseline.toFixed(3)} CPU-s per 1000 jobs`);
      const figures: Figure[] = [];
      const notes: string[] = [];
      const runs = new Map<number, StormCpu>();
      let lost = 0;
      for (const workers of replicaCounts) {
        const run = await stormCpu(redis.url, pid, workers);
        runs.set(workers, run);
        const all = run.subscriber + run.workers + run.redis;
        const per1000 = (all * 1000) / total;
        figures.push(
          atMost(
            `storm CPU per 1000 events, ${workers} worker replica${workers > 1 ? 's' : ''} (every Reflex process + Redis)`,
            'CPU-s',
            per1000,
            'raw BullMQ add+process per 1000 empty jobs (producer, worker, Redis)',
            baseline,
            1,
          ),
        );
        const line = `${workers} worker replica(s): ${total} events, storm to all restarted and idle in ${run.seconds.toFixed(2)} s; CPU-s: subscriber ${run.subscriber.toFixed(2)}, worker${workers > 1 ? 's' : ''} ${run.workers.toFixed(2)}, Redis ${run.redis.toFixed(2)} = ${all.toFixed(2)} (${per1000.toFixed(3)} per 1000 events); zero lost: ${run.lost.summary}`;
        progress(bench, line);
        notes.push(`${line}.`);
        lost += run.lost.count;
      }
      const one = runs.get(1);
      const three = runs.get(3);
      if (one && three)
        figures.push(
          atMost(
            'replica overhead: workers CPU for the same storm, 3 replicas',
            'CPU-s',
            three.workers,
            'the same with 1 replica',
            one.workers,
            1.15,
          ),
        );
      notes.unshift(
        `Reflex as a scaled-out deployment runs it: one \`reflex run --role subscriber\` and 1, then 3, \`reflex run --role worker\` processes (bundled rules, storm control off, no periodic resync), CPU from /proc/PID/stat of each and of redis-server, from the emission of the storm until every crashed instance was started and the events queue idle (the ${matching} restarts and their follow-on events included). The baseline is this process (producer and a default BullMQ worker) plus Redis, from the first add to the last completion.`,
      );
      return { bench, figures, notes, ...(lost ? { lost } : {}) };
    } finally {
      conn.disconnect();
      await redis.stop();
    }
  },
  { timeoutMs: 600_000 },
);

async function stormCpu(url: string, pid: number, workers: number): Promise<StormCpu> {
  const stack = await startStack({
    redisUrl: url,
    label: 'bench',
    rules: rulesDir,
    simulator: { instances: 0, timings: { startMs: 20, stopHookMs: 5 } },
    instances: Array.from({ length: matching }, (_, i) => ({ name: optedInName(i + 1), config: optIn })),
    reflexTimings: 'product',
    logger: silentLogger,
    reflex: false,
  });
  const dir = mkdtempSync(join(tmpdir(), 'reflex-bench-'));
  const configFile = join(dir, 'reflex.json');
  writeFileSync(configFile, JSON.stringify({ stormThreshold: 0, httpPort: 0, resyncIntervalMs: 0 }));
  const args = (role: string) => reflexRunArgs(role, stack, url, rulesDir, configFile);
  const queueConnection = duplicateConnection(stack.redis);
  const eventsQueue = new Queue(stack.keys.eventsQueue, { connection: queueConnection, prefix: stack.keys.bullPrefix });
  const measured = { ...stack, probe: new SimProbe(stack.sim), eventsQueue, reflex: { target: stack.target } };
  const subscriber = startReflexProcess(args('subscriber'), { REFLEX_LOG_LEVEL: 'warn' });
  const procs: ReflexProcess[] = Array.from({ length: workers }, () => startReflexProcess(args('worker'), { REFLEX_LOG_LEVEL: 'warn' }));
  try {
    // Up once the start-up resync's events are processed.
    await settled(measured, matching, 180_000);
    const cpu = () => ({
      subscriber: processCpuSeconds(subscriber.child.pid),
      workers: procs.reduce((sum, p) => sum + processCpuSeconds(p.child.pid), 0),
      redis: processCpuSeconds(pid),
    });
    const before = cpu();
    const started = performance.now();
    await timeStorm(measured, total, matching);
    await until('a start for every crash', () => measured.probe.calls.size >= matching, 120_000, 50);
    await eventsIdle(eventsQueue, 60_000);
    // Read before lostEvents: its scan of the audit log is the bench's work, not the pipeline's.
    const after = cpu();
    const seconds = (performance.now() - started) / 1000;
    const lost = await lostEvents(measured, total, matching);
    return {
      seconds,
      subscriber: after.subscriber - before.subscriber,
      workers: after.workers - before.workers,
      redis: after.redis - before.redis,
      lost,
    };
  } finally {
    await Promise.all([subscriber, ...procs].map((p) => p.stop()));
    await eventsQueue.close();
    queueConnection.disconnect();
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
