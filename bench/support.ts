import { Redis } from 'ioredis';
import { pino } from 'pino';

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

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `cond` every `everyMs` until it holds; throws naming `what` after `ms`. */
export async function until(what: string, cond: () => boolean | Promise<boolean>, ms: number, everyMs = 20): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

export function redisClient(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null });
}

/** Runs a bench body, prints its result, and exits non-zero only when the run itself broke. */
export async function runBench(bench: string, body: () => Promise<BenchResult>): Promise<void> {
  const hardLimit = setTimeout(() => {
    progress(bench, 'did not finish within its time limit');
    process.exit(3);
  }, Number(process.env.BENCH_FILE_TIMEOUT_MS) || 240_000);
  hardLimit.unref();
  try {
    emit(await body());
    process.exit(0);
  } catch (err) {
    progress(bench, `broken run: ${(err as Error).stack ?? String(err)}`);
    process.exit(2);
  }
}
