import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
    progress(bench, `--version ${floor} ms; rules check cold ${cold} ms, warm ${warm} ms; housekeeping plan (100 instances) ${plan} ms`);
    return {
      bench,
      figures: [
        absoluteAtMost('reflex rules check, bundled rules, nothing remembered (a rule just edited)', 'ms', cold, 3000, floorName, floor),
        absoluteAtMost('reflex rules check, bundled rules, unchanged since the last check', 'ms', warm, 3000, floorName, floor),
        absoluteAtMost('reflex housekeeping plan, one schedule over 100 instances', 'ms', plan, 1000, floorName, floor),
      ],
      notes: [
        `Each the median of ${rounds} runs of \`node bin/reflex.js …\` as a user starts it (wall time, the process's start to its exit). "Nothing remembered": the type-check cache (REFLEX_CACHE_DIR) emptied before each run, as after an edit of a rule; the compiler then reads the standard library, @types/node and Reflex's declarations (4.4 MB, of which the declarations of ioredis and BullMQ that the action context's types reach are 1.1 MB). housekeeping plan: a schedule with snapshot, retention and prune-expired over the simulator's 100 instances, Redis holding no ledger yet.`,
      ],
    };
  } finally {
    await sim.stop();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The median wall time of `rounds` runs of `reflex args`, each after `before`. */
async function timed(args: string[], env: Record<string, string>, before?: () => void): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    before?.();
    const started = performance.now();
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: 'ignore' });
      child.on('exit', resolve);
    });
    if (code !== 0) throw new Error(`reflex ${args.join(' ')} exited ${code}`);
    samples.push(performance.now() - started);
  }
  return Math.round(median(samples));
}
