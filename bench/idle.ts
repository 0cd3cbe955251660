import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisFromUrl } from '../src/redis/connect.js';
import { startSimulator } from '../src/simulator/simulator.js';
import { startReflexProcess, type ReflexProcess } from '../test/support/reflex-process.js';
import { sleep } from '../test/support/wait.js';
import { commandsBetween, processCpuSeconds, redisCommands } from './cpu.js';
import { benchRedis, rulesDir } from './stack.js';
import { absoluteAtMost, progress, runBench, type Figure } from './support.js';

/**
 * What an idle deployment costs: one `reflex run` (all roles, the bundled rules, Reflex's own
 * timings) on a simulator of `BENCH_IDLE_INSTANCES` instances that emits nothing, measured over a
 * window of `BENCH_IDLE_SECONDS` (60) once it is running and has settled: its CPU (from
 * /proc/PID/stat) as a share of one core, and the commands Redis processed per second (INFO
 * stats, the bench's own readings left out). Then a second and a third replica are started beside
 * it, and each window gives what the extra process added. Goal: ≤ 1 % of a core and ≤ 20 commands/s
 * per replica.
 */
const bench = 'idle';
const windowSeconds = Number(process.env.BENCH_IDLE_SECONDS) || 60;
/**
 * After "reflex running" the start-up has a tail that is not idle cost: the heap trim's one full
 * collection of the start-up's garbage (about 150 ms of GC, at its first 10 s check), the first
 * periodic resync and retention round (30 s), run cold. CPU per 10 s from a process's start
 * (stop 40, quiet machine): 1439, 136, 300, 88 ms, then 53–73 ms in every slice after 40 s.
 */
const settleSeconds = Number(process.env.BENCH_IDLE_SETTLE_SECONDS) || 40;
const instances = Number(process.env.BENCH_IDLE_INSTANCES) || 20;
const replicas = Number(process.env.BENCH_IDLE_REPLICAS) || 3;
const cpuGoalPercent = 1;
const commandsGoal = 20;

await runBench(
  bench,
  async () => {
    const redis = await benchRedis();
    const sim = await startSimulator({ instances });
    const conn = redisFromUrl(redis.url);
    const dir = mkdtempSync(join(tmpdir(), 'reflex-bench-idle-'));
    const configFile = join(dir, 'reflex.json');
    writeFileSync(configFile, JSON.stringify({ httpPort: 0 }));
    const procs: ReflexProcess[] = [];
    try {
      const figures: Figure[] = [];
      const notes: string[] = [];
      let previous: { cpu: number; commands: number } = { cpu: 0, commands: 0 };
      for (let n = 1; n <= replicas; n++) {
        const proc = startReflexProcess(
          ['run', '--target', `unix://${sim.socketPath}`, '--redis', redis.url, '--prefix', 'idle', '--rules', rulesDir, '--config', configFile],
          { REFLEX_LOG_LEVEL: 'info' },
        );
        procs.push(proc);
        await proc.waitForLog('reflex running', 120_000);
        progress(bench, `replica ${n} running; settling ${settleSeconds} s, then measuring ${windowSeconds} s`);
        await sleep(settleSeconds * 1000);
        const cpuBefore = procs.map((p) => processCpuSeconds(p.child.pid));
        const commandsBefore = await redisCommands(conn);
        const started = performance.now();
        await sleep(windowSeconds * 1000);
        const commandsAfter = await redisCommands(conn);
        const seconds = (performance.now() - started) / 1000;
        const cpuEach = procs.map((p, i) => (processCpuSeconds(p.child.pid) - cpuBefore[i]!) / seconds);
        const { total, top } = commandsBetween(commandsBefore, commandsAfter);
        const all = { cpu: cpuEach.reduce((a, b) => a + b, 0) * 100, commands: total / seconds };
        const added = { cpu: all.cpu - previous.cpu, commands: all.commands - previous.commands };
        previous = all;
        const who = n === 1 ? 'one idle reflex run (all roles)' : `replica ${n} of an idle deployment (what it added)`;
        const ref =
          n === 1
            ? 'the goal'
            : `the deployment of ${n - 1}: ${(all.cpu - added.cpu).toFixed(2)} % and ${(all.commands - added.commands).toFixed(1)}/s`;
        figures.push(
          absoluteAtMost(`${who}: CPU of one core`, '%', added.cpu, cpuGoalPercent, ref, n === 1 ? cpuGoalPercent : all.cpu - added.cpu),
          absoluteAtMost(
            `${who}: Redis commands`,
            'commands/s',
            added.commands,
            commandsGoal,
            ref,
            n === 1 ? commandsGoal : all.commands - added.commands,
          ),
        );
        const perSecond = top.slice(0, 8).map(([cmd, c]) => `${cmd} ${(c / seconds).toFixed(2)}`);
        notes.push(
          `${n} replica(s), ${seconds.toFixed(0)} s: CPU per process ${cpuEach.map((c) => `${(c * 100).toFixed(2)} %`).join(', ')}; Redis ${all.commands.toFixed(1)} commands/s in all (${perSecond.join(', ')} per second).`,
        );
        progress(bench, notes.at(-1)!);
      }
      notes.unshift(
        `${replicas} \`reflex run\` processes (all roles, bundled rules, Reflex's default timings, HTTP on a free port) on one simulator of ${instances} instances that emits nothing, started one after another on the same Redis and prefix. Each window (${windowSeconds} s) starts ${settleSeconds} s after the new process logged "reflex running". CPU from /proc/PID/stat; Redis commands from INFO stats and commandstats, the bench's own INFO readings left out. A later replica's figure is what the deployment's total rose by when it joined.`,
      );
      notes.push(
        "Where an idle replica's commands go (MONITOR of one idle process): the subscriber lease's renewal (a holder) or its vacancy check (a follower), one script of two commands a second (the lease lives 3 s: a dead holder is replaced within about that); BullMQ's stalled-job check of each worker queue (events, actions, schedules) every 2.5 s, a script of six commands (half the 5 s job lock: a job of a dead worker goes back within 5–7.5 s; the full check runs once per queue and interval whatever the replicas, an EXISTS from each other replica); each worker's blocking wait on its queue's marker and the fetch script after it, every 10 s (BullMQ's ceiling; a job, a due delayed job or a stalled one wakes it at once); the rules roster beat every 5 s; the retention watch every 30 s (its TTL-key sample is 16 × RANDOMKEY + PTTL + MEMORY USAGE, per replica). The lease spread's roster beat (one script of five commands a second) runs only with more than one target: with one, the share of one lease is one whatever the count. The lease and the stalled checks are the failover detection's own cadence and are left as they are.",
      );
      return { bench, figures, notes };
    } finally {
      await Promise.all(procs.map((p) => p.stop()));
      conn.disconnect();
      await sim.stop();
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
  { timeoutMs: (replicas * (windowSeconds + settleSeconds + 60) + 60) * 1000 },
);
