import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { startReflexProcess, type ReflexProcess } from '../test/support/reflex-process.js';
import { bullmqAddProcess } from './baseline-bullmq.js';
import { benchRedis, rulesDir, settled, startBenchStack } from './stack.js';
import { lostEvents, timeStorm } from './storm-measure.js';
import { atLeast, progress, reflexRunArgs, runBench, type Figure } from './support.js';

/**
 * The storm of bench/storm.ts (10k events, 1k crashes the rules act on) as a scaled-out
 * deployment runs it: one subscriber (in this process, `role: subscriber`) writes the stream, and
 * the events and actions are worked by 1, then 3, `reflex run --role worker` processes — separate
 * Node processes, as replicas are deployed, sharing the queues with no setting naming each other.
 * Each against raw BullMQ add + process of 10k empty jobs measured in the same run.
 */
const bench = 'storm-replicas';
const total = Number(process.env.BENCH_STORM_EVENTS) || 10_000;
const matching = total / 10;
const replicaCounts = (process.env.BENCH_STORM_REPLICAS ?? '1,3').split(',').map(Number);

await runBench(bench, async () => {
  const redis = await benchRedis();
  try {
    const baseline = await bullmqAddProcess(redis.url, total);
    progress(bench, `raw BullMQ add+process: ${Math.round(baseline)} jobs/s`);
    const figures: Figure[] = [];
    const notes: string[] = [];
    let lost = 0;
    for (const workers of replicaCounts) {
      const run = await stormWith(redis.url, workers);
      progress(
        bench,
        `${workers} worker replica(s): ${total} events in ${run.seconds.toFixed(2)} s (${Math.round(run.rate)} events/s); lost: ${run.lost.summary}`,
      );
      figures.push(
        atLeast(
          `storm with ${workers} worker replica${workers > 1 ? 's' : ''}: ${total} mixed events, ${matching} matching — ingest+evaluate+audit`,
          'events/s',
          run.rate,
          `raw BullMQ add+process of ${total} empty jobs`,
          baseline,
          2,
        ),
      );
      progress(bench, run.cpu);
      notes.push(`${workers} worker replica(s): ${run.cpu}; zero lost: ${run.lost.summary}.`);
      lost += run.lost.count;
    }
    return {
      bench,
      figures,
      notes: [
        `One subscriber (in the bench process) writes the stream; the events and the actions are worked by separate \`reflex run --role worker\` processes (1, then 3), each with the bundled rules and storm control off, sharing the queues. Timed as bench/storm.ts: from the emission of the storm to the last storm event processed (archive stream ids).`,
        ...notes,
      ],
      ...(lost ? { lost } : {}),
    };
  } finally {
    await redis.stop();
  }
});

async function stormWith(
  url: string,
  workers: number,
): Promise<{ seconds: number; rate: number; lost: { count: number; summary: string }; cpu: string }> {
  const stack = await startBenchStack(url, { optedIn: matching, role: 'subscriber' });
  const dir = mkdtempSync(join(tmpdir(), 'reflex-bench-'));
  const configFile = join(dir, 'reflex.json');
  writeFileSync(configFile, JSON.stringify({ stormThreshold: 0, httpPort: 0, resyncIntervalMs: 0 }));
  const procs: ReflexProcess[] = [];
  try {
    for (let i = 0; i < workers; i++) {
      procs.push(startReflexProcess(reflexRunArgs('worker', stack, url, rulesDir, configFile), { REFLEX_LOG_LEVEL: 'warn' }));
    }
    // The workers are up once they have processed the start-up resync's events.
    await settled(stack, matching);
    const redisCpuBefore = await redisCpuSeconds(stack.redis);
    const ownCpuBefore = process.cpuUsage();
    const workersCpuBefore = procs.reduce((sum, p) => sum + processCpuSeconds(p.child.pid), 0);
    const { seconds } = await timeStorm(stack, total, matching);
    const ownCpu = process.cpuUsage(ownCpuBefore);
    const workersCpu = procs.reduce((sum, p) => sum + processCpuSeconds(p.child.pid), 0) - workersCpuBefore;
    const cpu = `CPU during the storm (${seconds.toFixed(2)} s): Redis ${((await redisCpuSeconds(stack.redis)) - redisCpuBefore).toFixed(2)} s, simulator + subscriber + bench ${((ownCpu.user + ownCpu.system) / 1e6).toFixed(2)} s, worker process${workers > 1 ? 'es' : ''} ${workersCpu.toFixed(2)} s`;
    const lost = await lostEvents(stack, total, matching);
    return { seconds, rate: total / seconds, lost, cpu };
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPU seconds the Redis server has used so far (INFO cpu). */
async function redisCpuSeconds(redis: Pick<Redis, 'info'>): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return field('used_cpu_user') + field('used_cpu_sys');
}

/** CPU seconds a child process has used so far (Linux /proc; 0 elsewhere). */
function processCpuSeconds(pid: number | undefined): number {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}
