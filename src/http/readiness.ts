import type { Queue, Worker } from 'bullmq';
import { withDeadline, type RedisConnection } from '../redis/connect.js';
import type { EventSubscriber } from '../events/event-subscriber.js';
import type { SubscriberLease } from '../events/subscriber-lease.js';
import type { HealthReading, QueueReading } from '../metrics/metrics.js';
import type { HistoryVerdict } from '../audit/history/history-health.js';
import { describeWrites, type WriteProbe } from '../redis/write-probe.js';

/** One readiness check's verdict. */
export interface CheckResult {
  ok: boolean;
  detail: string;
  /** Set on a check that passes although what it watches fails (a history store that is not required). */
  degraded?: true;
}

/** Named checks; the process is ready when every one passes. */
export type ReadinessChecks = Record<string, () => Promise<CheckResult>>;

/** One target's lease and the subscriber it starts. */
export interface TargetReader {
  /** The target's name (check `subscriber:<name>` when there are several). */
  name: string;
  lease: SubscriberLease;
  subscriber: EventSubscriber;
}

/** What the process runs, for {@link readiness}. */
export interface ReadinessParts {
  redis: RedisConnection;
  /** Subscriber role: one reader per target. */
  readers?: TargetReader[];
  /** Worker role: the queue workers this process runs. */
  workers?: Worker[];
  /**
   * The queues this process's work goes through (those it feeds and those it consumes): each one
   * is checked for a pause and for at least one worker consuming it, in any replica.
   */
  queues?: Queue[];
  /** The write probe: while Redis refuses writes (OOM, a read-only replica, MISCONF) nothing is queued, run or audited. */
  writes?: Pick<WriteProbe, 'state' | 'check'>;
  /**
   * The history store this process ships to (worker role, with `history.store` files or postgres):
   * failing, it is not ready when `required`, and ready but `degraded` otherwise.
   */
  history?: { required: boolean; check(): Promise<HistoryVerdict> };
  /**
   * How long an event stream that was open may stay lost before the process is not ready: a
   * daemon restart or a network blip reconnects within it. Default 30 000 ms. A stream never open
   * since the start is not ready at once.
   */
  streamLossGraceMs?: number;
  /** How long the Redis ping, and each read of a queue, may take. Default 1000 ms. */
  redisTimeoutMs?: number;
  /** How long a verdict is reused: /readyz is polled, and /metrics reads the same verdicts. Default 1000 ms. */
  cacheMs?: number;
  /** The clock (tests). Default Date.now. */
  now?: () => number;
}

/** The checks behind /readyz and the gauges that show them. */
export interface Readiness {
  /** The checks of /readyz, each cached for `cacheMs`. */
  checks: ReadinessChecks;
  /** The same verdicts for the `reflex_ready`, `reflex_queue_paused` and `reflex_queue_workers` gauges. */
  reading(): Promise<HealthReading>;
}

/**
 * The checks behind /readyz: Redis answers a PING and takes the write probe's writes
 * (`redis-writes`); the history store this process ships to answers (`history`); for each
 * target, the subscriber either holds the lease with the event stream open or stands by (a
 * standby replica is ready: it is there to take over), and a stream lost for longer than the
 * grace is not ready; this process's workers run and are not paused; every queue the process's
 * work goes through (`queue:<name>`) is not paused and has a worker consuming it. With one target its check is `subscriber`, with several
 * `subscriber:<name>` each.
 */
export function readiness(parts: ReadinessParts): Readiness {
  const now = parts.now ?? Date.now;
  const cacheMs = parts.cacheMs ?? 1_000;
  const timeoutMs = parts.redisTimeoutMs ?? 1_000;
  const graceMs = parts.streamLossGraceMs ?? 30_000;
  const checks: ReadinessChecks = {
    redis: async () => {
      try {
        await withDeadline(parts.redis.ping(), timeoutMs);
        return { ok: true, detail: 'PING answered' };
      } catch (err) {
        return { ok: false, detail: `Redis unreachable: ${(err as Error).message}` };
      }
    },
  };
  const { writes, history } = parts;
  if (writes) checks['redis-writes'] = async () => writesVerdict(writes.state.writable === undefined ? await writes.check() : writes.state, now());
  if (history)
    checks.history = async () => {
      const v = await history.check();
      if (v.up) return { ok: true, detail: v.detail };
      if (history.required) return { ok: false, detail: `${v.detail} (history.required: records that leave Redis have nowhere to go)` };
      return { ok: true, degraded: true, detail: `degraded: ${v.detail}; Redis keeps the audit records meanwhile (history.required is false)` };
    };
  const { readers = [], workers, queues = [] } = parts;
  for (const { name, lease, subscriber } of readers) {
    checks[readers.length === 1 ? 'subscriber' : `subscriber:${name}`] = async () => streamVerdict(lease, subscriber, graceMs, now());
  }
  if (workers?.length) {
    checks.workers = async () => {
      const stopped = workers.filter((w) => !w.isRunning()).map((w) => w.name);
      const paused = workers.filter((w) => w.isRunning() && w.isPaused()).map((w) => w.name);
      if (stopped.length || paused.length)
        return {
          ok: false,
          detail: [stopped.length ? `not running: ${stopped.join(', ')}` : '', paused.length ? `paused in this process: ${paused.join(', ')}` : '']
            .filter(Boolean)
            .join('; '),
        };
      return { ok: true, detail: `running: ${workers.map((w) => w.name).join(', ')}` };
    };
  }
  const probes = new Map(queues.map((q) => [q.name, cached(cacheMs, now, () => probeQueue(q, timeoutMs))]));
  for (const [name, probe] of probes) checks[`queue:${name}`] = async () => queueVerdict(await probe());

  const cachedChecks: ReadinessChecks = Object.fromEntries(Object.entries(checks).map(([name, check]) => [name, cached(cacheMs, now, check)]));
  return {
    checks: cachedChecks,
    async reading() {
      const [report, read] = await Promise.all([runChecks(cachedChecks), Promise.all([...probes.values()].map((p) => p().catch(() => undefined)))]);
      return {
        checks: Object.fromEntries(Object.entries(report.checks).map(([n, r]) => [n, r.ok])),
        queues: read.filter((q): q is QueueReading => q !== undefined),
      };
    },
  };
}

function writesVerdict(s: WriteProbe['state'], at: number): CheckResult {
  if (s.writable) return { ok: true, detail: 'the probe write is taken' };
  const since = `for ${seconds(Math.max(0, at - s.since))}`;
  if (s.refusal)
    return {
      ok: false,
      detail: `${describeWrites(s)} ${since}: automation has stopped (no event is queued, no action runs, nothing is audited; the subscriber holds events in memory and retries)`,
    };
  return { ok: false, detail: `${describeWrites(s)} ${since}` };
}

function streamVerdict(lease: SubscriberLease, subscriber: EventSubscriber, graceMs: number, at: number): CheckResult {
  // A replica that cannot reach its target is not ready, holder or standby: a standby that
  // cannot read the stream cannot take over either.
  const role = lease.isHeld ? 'lease holder' : 'standby (another replica holds the lease)';
  if (subscriber.connected) return { ok: true, detail: `${role}, event stream connected` };
  const since = subscriber.lostSince;
  if (since === undefined) return { ok: false, detail: `${role}, event stream not connected: the target is unreachable` };
  const lostMs = Math.max(0, at - since);
  if (lostMs < graceMs)
    return { ok: true, detail: `${role}, event stream lost ${seconds(lostMs)} ago, reconnecting (not ready after ${seconds(graceMs)})` };
  return {
    ok: false,
    detail: `${role}, event stream lost for ${seconds(lostMs)} (longer than the grace of ${seconds(graceMs)}): the target is unreachable, no event is seen`,
  };
}

async function probeQueue(queue: Queue, timeoutMs: number): Promise<QueueReading> {
  const paused = await withDeadline(queue.isPaused(), timeoutMs);
  try {
    return { queue: queue.name, paused, workers: await withDeadline(queue.getWorkersCount(), timeoutMs) };
  } catch (err) {
    // A Redis user without CLIENT (a managed Redis may refuse it) cannot count workers: not a failure of Reflex.
    return { queue: queue.name, paused, unknownWorkers: (err as Error).message };
  }
}

function queueVerdict(q: QueueReading): CheckResult {
  const consumers = q.workers === undefined ? `worker count unknown (${q.unknownWorkers})` : `${q.workers} worker(s) consuming`;
  if (q.paused)
    return {
      ok: false,
      detail: `paused: none of its jobs runs until it is resumed (queues page of the dashboard, or BullMQ Queue.resume()); ${consumers}`,
    };
  if (q.workers === 0)
    return {
      ok: false,
      detail: 'no worker consumes it: its jobs wait (no reflex run with a role that consumes it is running, or its workers lost Redis)',
    };
  return { ok: true, detail: `not paused, ${consumers}` };
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1_000)} s`;
}

/** `read`, reused for `ttlMs` after each call that ran it (concurrent callers share one run). */
function cached<T>(ttlMs: number, now: () => number, read: () => Promise<T>): () => Promise<T> {
  let at = -Infinity;
  let last: Promise<T> | undefined;
  return () => {
    if (!last || now() - at >= ttlMs) {
      at = now();
      last = read();
      // Each caller awaits its copy; this one only keeps a rejection from being reported as unhandled.
      last.catch(() => undefined);
    }
    return last;
  };
}

/** Runs every check (concurrently) and reports whether all passed. */
export async function runChecks(checks: ReadinessChecks): Promise<{ ready: boolean; checks: Record<string, CheckResult> }> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        return [name, await check()] as const;
      } catch (err) {
        return [name, { ok: false, detail: (err as Error).message }] as const;
      }
    }),
  );
  return { ready: entries.every(([, r]) => r.ok), checks: Object.fromEntries(entries) };
}
