import type { Queue } from 'bullmq';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { withDeadline } from '../redis/connect.js';

/**
 * How long a scrape waits for each read from Redis: while Redis is unreachable /metrics still
 * answers (with the last values read, and `reflex_ready{check="redis"} 0`) instead of hanging.
 */
const redisReadMs = 2_000;

/** One queue as the health gauges see it. */
export interface QueueReading {
  queue: string;
  paused: boolean;
  /** Workers connected to it across all replicas; undefined when Redis would not say (`unknownWorkers` says why). */
  workers?: number;
  unknownWorkers?: string;
}

/** The readiness verdicts at one moment (http/readiness.ts), for the health gauges. */
export interface HealthReading {
  /** Check name → passed. */
  checks: Record<string, boolean>;
  queues: QueueReading[];
}

/** How often the event-loop delay behind `reflex_nodejs_eventloop_lag_*` is sampled. */
const EVENT_LOOP_SAMPLE_MS = 100;

/** What a target reader holds in memory, and whether it holds the target's lease, as of now. */
export type IngestReading = () => { role: 'holder' | 'follower'; buffered: number };

/** Options of {@link Metrics}. */
export interface MetricsOptions {
  /** Also export Node's process metrics (CPU, memory, event-loop lag, GC) as `reflex_process_*` / `reflex_nodejs_*`. Default true. */
  processMetrics?: boolean;
}

/**
 * Every Prometheus metric Reflex exports, declared once with its help text, on a registry of its
 * own (not prom-client's global one) so that several Reflex instances can share a process, as
 * they do in tests. docs/metrics.md lists them with what moves each.
 */
export class Metrics {
  readonly registry = new Registry();

  /** How long each probe check took, by probe and outcome (success, failure, unknown). */
  readonly probeDuration = new Histogram({
    name: 'reflex_probe_duration_seconds',
    help: 'Seconds one health probe check took, by probe and outcome (success, failure, unknown: the check could not run)',
    labelNames: ['probe', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  /** Probe checks that failed, by probe (a check that could not run is `unknown`, counted in the histogram only). */
  readonly probeFailures = new Counter({
    name: 'reflex_probe_failures_total',
    help: 'Health probe checks that failed (exit code not 0, http status not 2xx/3xx, no connection, timed out), by probe',
    labelNames: ['probe'] as const,
    registers: [this.registry],
  });

  /**
   * Instances by probe and health, as this replica last saw the probes it runs: counts, not one series
   * per instance (which instance is unhealthy is in `reflex probes status` and the audit). An instance
   * that is not Running is `unknown`: it is not probed.
   */
  readonly probeInstances = new Gauge({
    name: 'reflex_probe_instances',
    help: 'Instances by health probe and health (healthy, unhealthy, unknown: not Running counts as unknown), counted over the probes this replica runs',
    labelNames: ['probe', 'health'] as const,
    registers: [this.registry],
  });

  /** Events taken through the pipeline, by canonical kind (`rejected`: malformed frames; `ignored`: frames of no interest). */
  readonly events = new Counter({
    name: 'reflex_events_total',
    help: 'Events processed by the worker, by kind (instance.status, lifecycle, operation.status, rejected, ignored)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  /** Inputs kept in the rejected stream (frames, webhook bodies); `repeat="true"`: the same bytes again, counted on their entry. */
  readonly rejectedInputs = new Counter({
    name: 'reflex_rejected_inputs_total',
    help: 'Malformed or refused inputs (event frames, webhook bodies) kept in the rejected stream; repeat="true": the same bytes as an entry already kept, counted on it',
    labelNames: ['repeat'] as const,
    registers: [this.registry],
  });

  /** From the daemon's timestamp of an event to the end of its processing. */
  readonly ingestLag = new Histogram({
    name: 'reflex_ingest_lag_seconds',
    help: 'Seconds from the daemon timestamp of a stream event to the end of its processing (rules decided, actions queued)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  /** Frames the subscriber holds in memory: waiting for Redis (lease holder) or kept to replay on a takeover (follower). */
  readonly ingestBuffered = new Gauge({
    name: 'reflex_ingest_buffered_frames',
    help: 'Frames held in memory by the subscriber: not yet written (lease holder, e.g. while Redis is unreachable) or kept in the takeover window (follower)',
    labelNames: ['target', 'role'] as const,
    registers: [this.registry],
    // Read at scrape time: a timer per target setting it every second woke an idle process for nothing.
    collect: () => {
      this.ingestBuffered.reset();
      for (const [target, read] of this.ingestReaders) {
        const { role, buffered } = read();
        this.ingestBuffered.set({ target, role }, buffered);
      }
    },
  });
  readonly streamReconnects = new Counter({
    name: 'reflex_stream_reconnects_total',
    help: 'Times the events WebSocket closed unasked and a reconnect was scheduled',
    registers: [this.registry],
  });

  readonly resyncs = new Counter({
    name: 'reflex_resyncs_total',
    help: 'Resyncs by state diff that completed, by reason (gap: after a (re)connect or a dropped buffer; periodic)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly gapsResynced = new Counter({
    name: 'reflex_gaps_resynced_total',
    help: 'Gaps in the event stream (a (re)connect, a dropped buffer) covered by a completed resync',
    registers: [this.registry],
  });

  readonly resyncChanges = new Counter({
    name: 'reflex_resync_changes_total',
    help: 'Status changes found by resyncs that the event stream had not reported',
    registers: [this.registry],
  });

  readonly ruleDecisions = new Counter({
    name: 'reflex_rule_decisions_total',
    help: 'Rule decisions on events: matched (actions queued), skipped (did not match), suppressed (matched but a silence, cooldown or quarantine held it)',
    labelNames: ['rule', 'decision'] as const,
    registers: [this.registry],
  });

  readonly actions = new Counter({
    name: 'reflex_actions_total',
    help: 'Runs of action jobs by outcome (done, skipped, dry-run, retrying, failed)',
    labelNames: ['action', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly actionRetries = new Counter({
    name: 'reflex_action_retries_total',
    help: 'Failed action attempts that will be retried',
    labelNames: ['action'] as const,
    registers: [this.registry],
  });

  readonly quarantines = new Counter({
    name: 'reflex_quarantines_total',
    help: 'Instances put in quarantine for crash-looping (each one raises one alert)',
    registers: [this.registry],
  });
  /** Stop events the daemon contradicted, by why (src/remediation/stop-confirmation.ts): none of them spent a restart. */
  readonly stopsContradicted = new Counter({
    name: 'reflex_stops_contradicted_total',
    help: 'Stop events not counted as crashes because a read of the daemon contradicted them: gone (404), not-down, another-instance, already-down, started-since',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  /** Requests for an operator's approval and how they ended (src/remediation/approvals.ts), counted by the replica that made or settled them. */
  readonly approvals = new Counter({
    name: 'reflex_approvals_total',
    help: "Rules' actions held for an operator's approval, by what became of them: requested, approved, denied, expired, withdrawn",
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  /** Failure storms declared by storm control (each raises one grouped alert; counted by the replica that raised it). */
  readonly storms = new Counter({
    name: 'reflex_storms_total',
    help: 'Failure storms on a server or cluster member: per-instance remediation held back, one grouped alert',
    registers: [this.registry],
  });
  /** A rule's `when` that threw or timed out: the decision counts as not met (src/rules/rule-errors.ts). */
  readonly ruleErrors = new Counter({
    name: 'reflex_rule_errors_total',
    help: "Evaluations of a rule's when that threw or timed out (the decision counts as not met), by rule",
    labelNames: ['rule'] as const,
    registers: [this.registry],
  });

  /** Schedule ticks by result (ran, skipped: late, overlapping or already run). */
  readonly housekeepingTicks = new Counter({
    name: 'reflex_housekeeping_ticks_total',
    help: 'Schedule ticks taken by this replica, by schedule and result (ran, skipped)',
    labelNames: ['schedule', 'result'] as const,
    registers: [this.registry],
  });
  /** Counted by the tick after the one that queued the work, when the snapshot ledger is settled. */
  readonly housekeepingSnapshots = new Counter({
    name: 'reflex_housekeeping_snapshots_total',
    help: 'Snapshot steps of schedules by result (made, pruned, failed: a snapshot not made or a deletion not done after its retries), counted when the next tick settles the ledger; missed: a tick coalesced into the still held job of an earlier tick',
    labelNames: ['schedule', 'result'] as const,
    registers: [this.registry],
  });
  readonly housekeepingNewestAge = new Gauge({
    name: 'reflex_housekeeping_newest_snapshot_age_seconds',
    help: "Age of the newest snapshot a schedule made of an instance, as of the schedule's last tick",
    labelNames: ['schedule', 'project', 'instance'] as const,
    registers: [this.registry],
  });

  /** Audit records in Redis not yet in the history store (0 after each round that shipped all; set by the replica that ships). */
  readonly historyShipLag = new Gauge({
    name: 'reflex_history_ship_lag_records',
    help: "Audit records in Redis not yet shipped to the history store, as of the shipping replica's last round (Redis keeps them until shipped)",
    registers: [this.registry],
  });
  readonly historyShipErrors = new Counter({
    name: 'reflex_history_ship_errors_total',
    help: 'Shipping rounds of audit records to the history store that failed (the store did not take them; retried each interval)',
    registers: [this.registry],
  });

  readonly leaseHolder = new Gauge({
    name: 'reflex_lease_holder',
    help: '1 while this process holds the subscriber lease of the target (reads its event stream), 0 on standby',
    labelNames: ['target'] as const,
    registers: [this.registry],
  });

  readonly streamConnected = new Gauge({
    name: 'reflex_stream_connected',
    help: '1 while this process has the events WebSocket of the target open',
    labelNames: ['target'] as const,
    registers: [this.registry],
  });

  /** Sampled by the retention watch (src/retention/redis-watch.ts) every `retentionCheckMs`, not at each scrape. */
  readonly structureEntries = new Gauge({
    name: 'reflex_redis_structure_entries',
    help: 'Entries of each Reflex structure in Redis (audit, archive, rejected streams; queue:<name> finished jobs; ttl-keys: every key with a TTL), as last sampled',
    labelNames: ['structure'] as const,
    registers: [this.registry],
  });
  readonly structureBytes = new Gauge({
    name: 'reflex_redis_structure_bytes',
    help: 'Redis memory of each Reflex structure, estimated by sampling (MEMORY USAGE … SAMPLES), as last sampled',
    labelNames: ['structure'] as const,
    registers: [this.registry],
  });
  readonly structureBudgetEntries = new Gauge({
    name: 'reflex_redis_structure_budget_entries',
    help: 'Configured count bound of each Reflex structure in Redis',
    labelNames: ['structure'] as const,
    registers: [this.registry],
  });
  readonly structureBudgetBytes = new Gauge({
    name: 'reflex_redis_structure_budget_bytes',
    help: 'Configured byte bound of each Reflex structure in Redis (archive, rejected)',
    labelNames: ['structure'] as const,
    registers: [this.registry],
  });
  readonly structureTrimmed = new Counter({
    name: 'reflex_redis_structure_trimmed_total',
    help: 'Entries the retention watch trimmed from a stream to hold its count, age or byte bound',
    labelNames: ['structure'] as const,
    registers: [this.registry],
  });
  readonly redisMemoryUsed = new Gauge({
    name: 'reflex_redis_memory_used_bytes',
    help: 'Redis used_memory (INFO memory), as last sampled',
    registers: [this.registry],
  });
  readonly redisMemoryMax = new Gauge({
    name: 'reflex_redis_memory_max_bytes',
    help: 'Redis maxmemory (INFO memory); 0: no limit',
    registers: [this.registry],
  });
  /** Set by the write probe: one series, 1 with no reason, or 0 with why. */
  readonly redisWritable = new Gauge({
    name: 'reflex_redis_writable',
    help: "1 while Redis takes this process's probe write (every 5 s), 0 while it does not, with the reason: oom, readonly, misconf (refused) or unreachable",
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  /** Set by the `history` readiness check, which each scrape runs: absent without a history store or the worker role (the label keeps it so). */
  readonly historyStoreUp = new Gauge({
    name: 'reflex_history_store_up',
    help: '1 while the configured history store answers (and takes the records this process ships), 0 while it fails, by store (files, postgres)',
    labelNames: ['store'] as const,
    registers: [this.registry],
    collect: async () => void (await this.readHealth()),
  });

  /** Shows the write probe's verdict: `reason` is empty while writes are taken. */
  setRedisWritable(writable: boolean, reason = ''): void {
    this.redisWritable.reset();
    this.redisWritable.set({ reason: writable ? '' : reason }, writable ? 1 : 0);
  }

  private readonly dlqQueues: Queue[] = [];
  private readonly watchedQueues: Queue[] = [];
  private readonly ingestReaders = new Map<string, IngestReading>();

  /** Failed action jobs kept for inspection and retry (`reflex dlq list`), read from Redis at each scrape. */
  readonly dlqSize = new Gauge({
    name: 'reflex_dlq_size',
    help: 'Action jobs that failed for good and wait in the dead-letter list (reflex dlq list / retry)',
    registers: [this.registry],
    collect: async () => {
      const counts = await withDeadline(Promise.all(this.dlqQueues.map((q) => q.getFailedCount())), redisReadMs).catch(() => undefined);
      if (counts) this.dlqSize.set(counts.reduce((a, b) => a + b, 0));
    },
  });

  /** Jobs per queue and state, read from Redis at each scrape. */
  readonly queueJobs = new Gauge({
    name: 'reflex_queue_jobs',
    help: 'Jobs in each queue by state (waiting, active, delayed, prioritized, failed)',
    labelNames: ['queue', 'state'] as const,
    registers: [this.registry],
    collect: async () => {
      for (const q of this.watchedQueues) {
        const counts = await withDeadline(q.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed'), redisReadMs).catch(
          () => undefined,
        );
        for (const [state, n] of Object.entries(counts ?? {})) this.queueJobs.set({ queue: q.name, state }, n);
      }
    },
  });

  private healthSource: (() => Promise<HealthReading>) | undefined;

  /** The /readyz checks, at each scrape (cached by the readiness checks themselves). */
  readonly ready = new Gauge({
    name: 'reflex_ready',
    help: '1 while a readiness check of /readyz passes, 0 while it fails, by check (redis, subscriber[:target], workers, queue:<name>)',
    labelNames: ['check'] as const,
    registers: [this.registry],
    collect: async () => {
      const reading = await this.readHealth();
      if (!reading) return;
      this.ready.reset();
      for (const [check, ok] of Object.entries(reading.checks)) this.ready.set({ check }, ok ? 1 : 0);
    },
  });

  readonly queuePaused = new Gauge({
    name: 'reflex_queue_paused',
    help: '1 while the queue is paused (none of its jobs runs until it is resumed), by queue',
    labelNames: ['queue'] as const,
    registers: [this.registry],
    collect: async () => {
      const reading = await this.readHealth();
      for (const q of reading?.queues ?? []) this.queuePaused.set({ queue: q.queue }, q.paused ? 1 : 0);
    },
  });

  readonly queueWorkers = new Gauge({
    name: 'reflex_queue_workers',
    help: 'Workers consuming the queue across all replicas (worker connections Redis lists), by queue; absent when Redis refuses CLIENT LIST',
    labelNames: ['queue'] as const,
    registers: [this.registry],
    collect: async () => {
      const reading = await this.readHealth();
      for (const q of reading?.queues ?? []) if (q.workers !== undefined) this.queueWorkers.set({ queue: q.queue }, q.workers);
    },
  });

  constructor(opts: MetricsOptions = {}) {
    // prom-client samples the event-loop delay every 10 ms by default: a hundred wake-ups a second
    // of an otherwise idle process, about a third of its idle CPU. A stall worth an operator's eye (hundreds
    // of ms) still shows at a 100 ms resolution.
    if (opts.processMetrics ?? true)
      collectDefaultMetrics({ register: this.registry, prefix: 'reflex_', eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }

  /** Reads the dead-letter size from this queue's failed jobs at each scrape. */
  watchDeadLetters(queue: Queue): void {
    this.dlqQueues.push(queue);
  }

  /** Reports a target reader's buffered frames (and whether it holds the lease) at each scrape; returns the unregistering. */
  watchIngest(target: string, read: IngestReading): () => void {
    this.ingestReaders.set(target, read);
    return () => void this.ingestReaders.delete(target);
  }

  /** Reports this queue's job counts at each scrape. */
  watchQueue(queue: Queue): void {
    this.watchedQueues.push(queue);
  }

  /** Reads the readiness verdicts at each scrape (`reflex_ready`, `reflex_queue_paused`, `reflex_queue_workers`). */
  watchHealth(read: () => Promise<HealthReading>): void {
    this.healthSource = read;
  }

  private async readHealth(): Promise<HealthReading | undefined> {
    return this.healthSource?.().catch(() => undefined);
  }

  /** Observes the lag of an event that came from the stream (resync events carry a read time, not a daemon time). */
  observeIngestLag(daemonTimestamp: string, now = Date.now()): void {
    const at = Date.parse(daemonTimestamp);
    // Clock skew between daemon and worker can make it negative; a negative lag means "no lag".
    if (!Number.isNaN(at)) this.ingestLag.observe(Math.max(0, (now - at) / 1000));
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
