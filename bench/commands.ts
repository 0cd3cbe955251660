import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSimulator } from '../src/simulator/simulator.js';
import { benchRedis, rulesDir } from './stack.js';
import { absoluteAtMost, median, progress, runBench } from './support.js';

/**
 * Commands a person waits for, as a user runs them (`node bin/reflex.js …`, dist/ built): `reflex
 * rules check` of the bundled rules with an empty type-check cache (a rule just edited) and with a
 * remembered one, and `reflex housekeeping plan` of a schedule over 100 instances of the
 * simulator, each the median of BENCH_COMMAND_ROUNDS (5) runs, against `reflex --version` (Node's
 * start and the CLI's, the floor of any command) from the same run.
 */
const bench = 'commands';
const rounds = Number(process.env.BENCH_COMMAND_ROUNDS) || 5;
const bin = fileURLToPath(new URL('../bin/reflex.js', import.meta.url));
const cpuAtExit = fileURLToPath(new URL('./cpu-at-exit.mjs', import.meta.url));

await runBench(bench, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'reflex-bench-commands-'));
  const redis = await benchRedis();
  const sim = await startSimulator({ instances: 100 });
  try {
    const schedules = join(dir, 'rules');
    mkdirSync(schedules);
    writeFileSync(
      join(schedules, 'schedules.ts'),
      `import { defineSchedule } from 'reflex-lxd';\nexport default defineSchedule({ name: 'hourly', every: '1h', tasks: [{ task: 'snapshot', namePattern: 'auto-%Y%m%d-%H%M' }, { task: 'retention', keepLast: 3 }, { task: 'prune-expired' }] });\n`,
    );
    const env = { REFLEX_CACHE_DIR: join(dir, 'cache'), REDIS_URL: redis.url };
    const floor = await timed(['--version'], env);
    const cold = await timed(['rules', 'check', rulesDir], env, () => rmSync(env.REFLEX_CACHE_DIR, { recursive: true, force: true }));
    const warm = await timed(['rules', 'check', rulesDir], env);
    const plan = await timed(['housekeeping', 'plan', '--target', `unix://${sim.socketPath}`, '--rules', schedules], env);
    const floorName = 'reflex --version (start-up floor)';
    const ms = (t: { wall: number; cpu: number }) => `${t.wall} ms (CPU ${t.cpu} ms)`;
    const line = `--version ${ms(floor)}; rules check cold ${ms(cold)}, warm ${ms(warm)}; housekeeping plan (100 instances) ${ms(plan)}`;
    progress(bench, line);
    return {
      bench,
      figures: [
        absoluteAtMost('reflex rules check, bundled rules, nothing remembered (a rule just edited)', 'ms', cold.wall, 3000, floorName, floor.wall),
        absoluteAtMost('reflex rules check, bundled rules, unchanged since the last check', 'ms', warm.wall, 3000, floorName, floor.wall),
        absoluteAtMost('reflex housekeeping plan, one schedule over 100 instances', 'ms', plan.wall, 1000, floorName, floor.wall),
      ],
      notes: [
        `Each the median of ${rounds} runs of \`node bin/reflex.js …\` as a user starts it (wall time, the process's start to its exit). "Nothing remembered": the type-check cache (REFLEX_CACHE_DIR) emptied before each run, as after an edit of a rule; the compiler then reads the standard library, @types/node and Reflex's declarations (4.4 MB, of which the declarations of ioredis and BullMQ that the action context's types reach are 1.1 MB). housekeeping plan: a schedule with snapshot, retention and prune-expired over the simulator's 100 instances, Redis holding no ledger yet.`,
        `Medians, wall (and CPU, user + system, which a loaded machine does not stretch): ${line}.`,
      ],
    };
  } finally {
    await sim.stop();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The median wall time and CPU time (ms) of `rounds` runs of `reflex args`, each after `before`. */
async function timed(args: string[], env: Record<string, string>, before?: () => void): Promise<{ wall: number; cpu: number }> {
  const walls: number[] = [];
  const cpus: number[] = [];
  const cpuFile = join(env.REFLEX_CACHE_DIR!, '..', 'cpu');
  for (let i = 0; i < rounds; i++) {
    before?.();
    const started = performance.now();
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, ['--import', cpuAtExit, bin, ...args], {
        env: { ...process.env, ...env, BENCH_CPU_FILE: cpuFile },
        stdio: 'ignore',
      });
      child.on('exit', resolve);
    });
    if (code !== 0) throw new Error(`reflex ${args.join(' ')} exited ${code}`);
    walls.push(performance.now() - started);
    cpus.push(Number(readFileSync(cpuFile, 'utf8')));
  }
  return { wall: Math.round(median(walls)), cpu: Math.round(median(cpus)) };
}
