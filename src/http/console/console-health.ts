import type { Metrics } from '../../metrics/metrics.js';
import { withDeadline } from '../../redis/connect.js';
import { runChecks, type CheckResult, type ReadinessChecks } from '../readiness.js';

/**
 * How long each check and each metric read may take, ms: the health panel is what says Redis is
 * down, so it must answer when Redis hangs (a metric's collect reads queue depths from Redis).
 */
const healthDeadlineMs = 1_500;

/** One target's event stream, as this process sees it. */
export interface StreamHealth {
  target: string;
  connected: boolean;
  leaseHolder: boolean;
  /** Frames held in memory, not yet written (holder) or kept for a takeover (follower). */
  buffered: number;
}

/** The health panel: /readyz's checks and the metrics an operator reads first. */
export interface ConsoleHealth {
  ready: boolean;
  checks: Record<string, CheckResult>;
  streams: StreamHealth[];
  /** Mean and count of reflex_ingest_lag_seconds since this process started (daemon timestamp to processed). */
  lag: { meanMs?: number; count: number };
  /** reflex_queue_jobs: queue → state → jobs. */
  queues: Record<string, Record<string, number>>;
  /** reflex_dlq_size. */
  deadLetters: number;
}

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** A metric's samples; none when it cannot be read in time (its collect waits on Redis). */
async function samples(metrics: Metrics, name: string): Promise<Sample[]> {
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) return [];
  try {
    return ((await withDeadline(Promise.resolve(metric.get()), healthDeadlineMs)) as { values: Sample[] }).values;
  } catch {
    return [];
  }
}

/** Each check, failed when it does not answer in time. */
function bounded(checks: ReadinessChecks): ReadinessChecks {
  return Object.fromEntries(
    Object.entries(checks).map(([name, check]) => [
      name,
      () =>
        withDeadline(check(), healthDeadlineMs).catch((err: Error) => ({
          ok: false,
          detail: err.message.replace('no answer from Redis', 'no answer'),
        })),
    ]),
  );
}

/**
 * The same facts as /readyz and /metrics, read from the same checks and the same registry (the
 * metrics' collect callbacks read the queue depths and dead-letter size from Redis).
 */
export async function consoleHealth(readiness: ReadinessChecks, metrics: Metrics): Promise<ConsoleHealth> {
  const [report, connected, holder, buffered, lag, queueJobs, dlq] = await Promise.all([
    runChecks(bounded(readiness)),
    samples(metrics, 'reflex_stream_connected'),
    samples(metrics, 'reflex_lease_holder'),
    samples(metrics, 'reflex_ingest_buffered_frames'),
    samples(metrics, 'reflex_ingest_lag_seconds'),
    samples(metrics, 'reflex_queue_jobs'),
    samples(metrics, 'reflex_dlq_size'),
  ]);
  const targets = new Set([...connected, ...holder].map((s) => String(s.labels.target)));
  const valueFor = (list: Sample[], target: string) => list.filter((s) => String(s.labels.target) === target).reduce((a, s) => a + s.value, 0);
  const streams = [...targets].sort().map((target) => ({
    target,
    connected: valueFor(connected, target) === 1,
    leaseHolder: valueFor(holder, target) === 1,
    buffered: valueFor(buffered, target),
  }));
  const sum = lag.find((s) => s.metricName?.endsWith('_sum'))?.value ?? 0;
  const count = lag.find((s) => s.metricName?.endsWith('_count'))?.value ?? 0;
  const queues: Record<string, Record<string, number>> = {};
  for (const s of queueJobs) (queues[String(s.labels.queue)] ??= {})[String(s.labels.state)] = s.value;
  return {
    ready: report.ready,
    checks: report.checks,
    streams,
    lag: { ...(count ? { meanMs: Math.round((sum / count) * 1_000) } : {}), count },
    queues,
    deadLetters: dlq[0]?.value ?? 0,
  };
}
