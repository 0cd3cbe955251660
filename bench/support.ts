import { spawn, type ChildProcess } from 'node:child_process';
import { pino } from 'pino';
import { redisFromUrl, type RedisConnection } from '../src/redis/connect.js';
import { lxdBed } from '../test/support/daemon-bed.js';
import { sleep, until } from '../test/support/wait.js';

/**
 * Helpers shared by the benchmark files. Each bench file is a program: it measures one thing and
 * its baseline in the same run, then prints one line `BENCH-RESULT <json>` that bench/run.ts
 * collects. Progress goes to stderr.
 */

/** One figure of a measurement: Reflex's value, the baseline's, and the goal on their ratio. */
export interface Figure {
  /** What is measured, e.g. "crash → Running (median)". */
  name: string;
  unit: string;
  value: number;
  baselineName: string;
  baseline: number;
  /** value / baseline. */
  ratio: number;
  /** How the goal reads, e.g. "≤ 0.95 × baseline". */
  goal: string;
  met: boolean;
}

/** What a bench file prints: its figures, or why it skipped, plus free-form notes. */
export interface BenchResult {
  bench: string;
  figures: Figure[];
  skipped?: string;
  notes: string[];
}

export const silentLogger = pino({ level: 'silent' });

/** Prints progress on stderr so stdout carries only the result line. */
export function progress(bench: string, line: string): void {
  process.stderr.write(`[${bench}] ${line}\n`);
}

export function emit(result: BenchResult): void {
  process.stdout.write(`BENCH-RESULT ${JSON.stringify(result)}\n`);
}

/** A figure whose goal is "value ≤ max × baseline" (latencies, times, memory). */
export function atMost(name: string, unit: string, value: number, baselineName: string, baseline: number, max: number): Figure {
  const ratio = value / baseline;
  return { name, unit, value, baselineName, baseline, ratio, goal: `≤ ${max} × baseline`, met: ratio <= max };
}

/** A figure whose goal is "value ≥ min × baseline" (throughputs). */
export function atLeast(name: string, unit: string, value: number, baselineName: string, baseline: number, min: number): Figure {
  const ratio = value / baseline;
  return { name, unit, value, baselineName, baseline, ratio, goal: `≥ ${min} × baseline`, met: ratio >= min };
}

/** A figure against an absolute limit; the "baseline" column then shows the limit itself. */
export function absoluteAtMost(name: string, unit: string, value: number, limit: number, refName: string, ref: number): Figure {
  return { name, unit, value, baselineName: refName, baseline: ref, ratio: value / ref, goal: `≤ ${limit} ${unit}`, met: value <= limit };
}

/** The q-quantile (0..1) of samples, nearest-rank. */
export function quantile(samples: number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

export const median = (samples: number[]) => quantile(samples, 0.5);

/** A connection as the product builds it from a URL (a Cluster client for redis-cluster://). */
export function redisClient(url: string): RedisConnection {
  return redisFromUrl(url);
}

/**
 * Runs a bench body, prints its result, and exits non-zero only when the run itself broke.
 * `timeoutMs`: its time limit when the bench knows it needs longer than the default 240 s
 * (BENCH_FILE_TIMEOUT_MS overrides both).
 */
export async function runBench(bench: string, body: () => Promise<BenchResult>, opts: { timeoutMs?: number } = {}): Promise<void> {
  const hardLimit = setTimeout(
    () => {
      progress(bench, 'did not finish within its time limit');
      process.exit(3);
    },
    Number(process.env.BENCH_FILE_TIMEOUT_MS) || opts.timeoutMs || 240_000,
  );
  hardLimit.unref();
  try {
    emit(await body());
    process.exit(0);
  } catch (err) {
    progress(bench, `broken run: ${(err as Error).stack ?? String(err)}`);
    process.exit(2);
  }
}

/** Our own observer of a real daemon: `lxc monitor` in a child process, lifecycle events timestamped on arrival. */
export class LifecycleMonitor {
  private readonly child: ChildProcess;
  private readonly seen: { key: string; at: number }[] = [];
  private buf = '';

  constructor(env: NodeJS.ProcessEnv) {
    this.child = spawn('lxc', ['monitor', '--type=lifecycle', '--format=json'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    this.child.stdout!.on('data', (d: Buffer) => {
      const at = performance.now();
      this.buf += d.toString();
      let i;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i).trim();
        this.buf = this.buf.slice(i + 1);
        if (!line) continue;
        try {
          const e = JSON.parse(line) as { metadata?: { action?: string; source?: string } };
          const src = e.metadata?.source ?? '';
          this.seen.push({ key: `${e.metadata?.action} ${src.slice(src.lastIndexOf('/') + 1)}`, at });
        } catch {
          // lxc monitor prints one JSON object per line; anything else is not an event.
        }
      }
    });
  }

  async ready(): Promise<void> {
    // lxc monitor says nothing when it has subscribed: a second is what it takes on a loaded host.
    await sleep(1_000);
    if (this.child.exitCode !== null) throw new Error('lxc monitor exited at once');
  }

  /** Arrival time of the first `action` for `name` after `after`. */
  async next(name: string, action: string, after: number, timeoutMs = 15_000): Promise<number> {
    const key = `${action} ${name}`;
    const hit = await until(`${action} for ${name}`, () => this.seen.find((s) => s.key === key && s.at > after), timeoutMs, 5);
    return hit.at;
  }

  stop(): void {
    this.child.kill('SIGTERM');
  }
}

/** SIGKILLs a real container's init, as a crash would; returns the moment of the kill. */
export async function kill(name: string): Promise<number> {
  const { pid } = await lxdBed.status(name);
  if (pid <= 0) throw new Error(`${name} has no init process to kill`);
  const t0 = performance.now();
  process.kill(pid, 'SIGKILL');
  return t0;
}

/** Ends a detached child's whole process group (a shell pipeline). */
export function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch {
    // Already gone.
  }
}

/** `reflex run` of one role on a bench stack's target and keys, with the given rules and config file. */
export function reflexRunArgs(
  role: string,
  stack: { target: string; prefix: string },
  redisUrl: string,
  rulesDir: string,
  configFile: string,
): string[] {
  return [
    'run',
    '--role',
    role,
    '--target',
    stack.target,
    '--redis',
    redisUrl,
    '--prefix',
    stack.prefix,
    '--rules',
    rulesDir,
    '--config',
    configFile,
  ];
}
