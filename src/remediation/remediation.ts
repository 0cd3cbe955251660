import { setTimeout as delay } from 'node:timers/promises';
import { StatusCode } from '../client/status-code.js';
import { DelayedError, Job, Queue, Worker } from 'bullmq';
import type { RedisConnection } from '../redis/connect.js';
import type { Logger } from 'pino';
import { Alerts, openAlertsIn } from '../alerts/alerts.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { InstanceClient } from '../client/client.js';
import type { EventArchive } from '../events/event-archive.js';
import { OwnOperations } from '../events/own-operations.js';
import type { StateTracker } from '../events/state-tracker.js';
import type { Metrics } from '../metrics/metrics.js';
import { InstanceAlerts } from '../notify/instance-alerts.js';
import { instanceAlertKinds } from '../notify/instance-incident.js';
import { startIncidentSweep } from '../notify/incident-sweep.js';
import { AlertBoard } from '../notify/alert-board.js';
import type { Notifier } from '../notify/notifier.js';
import type { KeySpace } from '../redis/key-space.js';
import { TokenLock } from '../redis/token-lock.js';
import type { RuleEngine } from '../rules/engine.js';
import type { Silences } from '../silences/silences.js';
import { builtinActions, type ActionRegistry } from '../actions/registry.js';
import { ActionExecutor, instanceBusy } from './action-executor.js';
import { ActionGate, type GateOptions } from './decide/action-gate.js';
import { actionJobSchema } from '../actions/action-job.js';
import { EventProcessor } from './decide/event-processor.js';
import { PendingActions } from './pending-actions.js';
import type { Approvals } from './approvals.js';
import { Recheck } from './recheck.js';
import { isFinalFailure, retryPolicy, workerLockOptions } from '../errors/retry-policy.js';

/** What the remediation core of one process needs. */
export interface RemediationOptions {
  redis: RedisConnection;
  /** A connection BullMQ may block on (workers). */
  connection: RedisConnection;
  keys: KeySpace;
  client: (target: string) => InstanceClient;
  tracker: StateTracker;
  audit: AuditLog;
  silences: Silences;
  /** The rules; a function gives the current ones of a reloadable rule set (read once per event, again at each re-check). */
  engine: RuleEngine | (() => RuleEngine);
  eventsQueue: Queue;
  actionsQueue: Queue;
  logger: Logger;
  metrics?: Metrics;
  archive?: EventArchive;
  /** The receivers: the `notify` action's, and each crash or Error alerts through it ({@link InstanceAlerts}); none: no such alerts. */
  notifier?: Notifier;
  /** Raises and resolves the alerts of remediation (crash loop, storm, give-up). Default: audited only. */
  alerts?: Alerts;
  gate?: GateOptions;
  /** The actions of the rules loaded now: `LoadedRules.actions` (a function: swapped with the rules on a reload). Default: the built-ins. */
  actions?: ActionRegistry | (() => ActionRegistry);
  /** Attempts per action job. Default from the retry policy. */
  actionAttempts?: number;
  /** A frame's time further ahead of its receipt than this is clamped, audited and alerted. Default 5 minutes. */
  clockToleranceMs?: number;
  /** Bytes of a rejected input kept in the rejected stream. Default 65 536. */
  maxEventBytes?: number;
  /** Action jobs run at once by this process. Default 32. */
  actionConcurrency?: number;
  /** Count and age bounds of the rejected stream. Default 10 000 entries, 7 days. */
  rejected?: { maxLength?: number; maxAgeMs?: number };
  /** How often firing incident alerts are checked against their instances ({@link startIncidentSweep}). Default 30 s. */
  sweepIntervalMs?: number;
  /** How often approval requests are timed out and decided ones settled (remediation/approvals.ts). Default 1 s. */
  approvalSettleMs?: number;
  /** Where the console's /dashboard is reached from a receiver's message: the base of the signed links in approval alerts. */
  consoleUrl?: string;
}

/** The remediation core as a process runs it: the event and action workers, and the parts they share. */
export interface Remediation {
  gate: ActionGate;
  executor: ActionExecutor;
  processor: EventProcessor;
  workers: Worker[];
  stop(): Promise<void>;
}

/**
 * Starts the remediation core: the event worker (incident → decision → admission → action jobs)
 * and the action worker (re-check → instance call → outcome), with the one retry policy, the busy
 * re-delay that spends no attempt, and the give-up path (dead-letter queue + one alert) for jobs
 * that fail for good, including jobs whose workers died too often.
 */
export function startRemediation(o: RemediationOptions): Remediation {
  const { redis, keys, logger } = o;
  const ownOperations = new OwnOperations(redis, keys);
  const alerts = o.alerts ?? new Alerts({ audit: o.audit });
  const pending = new PendingActions(redis, keys, o.actionsQueue, {
    audit: o.audit,
    alerts,
    ...(o.metrics ? { metrics: o.metrics } : {}),
    ...(o.consoleUrl ? { consoleUrl: o.consoleUrl } : {}),
    ...(o.gate?.clock ? { clock: o.gate.clock } : {}),
  });
  const actions = (): ActionRegistry => (typeof o.actions === 'function' ? o.actions() : (o.actions ?? builtinActions));
  const gate = new ActionGate(redis, keys, o.silences, o.metrics, { ...o.gate, actions });
  const instanceAlerts = new InstanceAlerts({
    notifier: o.notifier,
    redis,
    logger,
    alerts,
    inStorm: (e) => gate.inStorm(e),
    runningSince: async (e) => {
      const now = await o.tracker.get({ target: e.target, project: e.project, instance: e.instance });
      return now && now.status === StatusCode.Running && now.eventId !== e.id && now.at >= Date.parse(e.timestamp) ? now.at : undefined;
    },
  });
  const processor = new EventProcessor({
    redis,
    keys,
    client: o.client,
    tracker: o.tracker,
    ownOperations,
    audit: o.audit,
    engine: o.engine,
    gate,
    actions: o.actionsQueue,
    pending,
    logger,
    actionAttempts: o.actionAttempts,
    archive: o.archive,
    metrics: o.metrics,
    alerts,
    instanceAlerts,
    clockToleranceMs: o.clockToleranceMs,
    maxEventBytes: o.maxEventBytes,
    rejected: o.rejected,
  });
  const recheck = new Recheck({
    client: o.client,
    tracker: o.tracker,
    silences: o.silences,
    engine: () => (typeof o.engine === 'function' ? o.engine() : o.engine),
    redis,
    keys,
    actions,
    ownOperations,
  });
  const executor = new ActionExecutor({
    actions,
    client: o.client,
    audit: o.audit,
    ownOperations,
    locks: new TokenLock(redis),
    recheck,
    pending,
    keys,
    redis,
    logger,
    metrics: o.metrics,
    events: o.eventsQueue,
    actionsQueue: o.actionsQueue,
    notifier: o.notifier,
    alerts,
    tracker: o.tracker,
    ...(gate.storms ? { storms: gate.storms } : {}),
  });
  const queueOpts = { connection: o.connection, prefix: keys.bullPrefix };

  // One job (a batch) at a time; within it each instance's events in order, instances side by side.
  const eventWorker = new Worker(keys.eventsQueue, async (job) => processor.process(job.data), {
    ...queueOpts,
    concurrency: 1,
    ...workerLockOptions,
    settings: { backoffStrategy: (attemptsMade: number) => retryPolicy.eventBackoffMs(attemptsMade) },
  });
  const actionWorker = new Worker(
    keys.actionsQueue,
    async (job, token) => {
      const outcome = await executor.execute(actionJobSchema.parse(job.data), job.id ?? '', job.attemptsMade + 1, job.opts.attempts ?? 1);
      if (outcome === instanceBusy) {
        // Another action holds the instance: come back shortly without spending an attempt.
        await job.moveToDelayed(Date.now() + retryPolicy.busyDelayMs(), token);
        throw new DelayedError();
      }
      return outcome;
    },
    { ...queueOpts, concurrency: o.actionConcurrency ?? 32, ...workerLockOptions },
  );
  const gaveUp = (job: Job, reason: string) => {
    const data = actionJobSchema.safeParse(job.data);
    if (data.success)
      void executor
        .gaveUp(data.data, job.id ?? '', reason, job.attemptsMade)
        .catch((err: Error) => logger.error({ err, job: job.id }, 'give-up not recorded'));
  };
  actionWorker.on('failed', (job, err) => {
    if (!job) return;
    const final = isFinalFailure(job, err);
    const data = actionJobSchema.safeParse(job.data);
    if (data.success) void instanceAlerts.actionSettled(data.data, { result: final ? 'failed' : 'retrying', summary: err.message }, final);
    if (final) gaveUp(job, err.message);
  });
  actionWorker.on('completed', (job, outcome: { result?: string; summary?: string; operationId?: string } | undefined) => {
    const data = actionJobSchema.safeParse(job.data);
    if (data.success && outcome?.result)
      void instanceAlerts.actionSettled(data.data, { result: outcome.result, summary: outcome.summary, operationId: outcome.operationId }, false);
  });
  // A job whose worker died too often is failed by BullMQ's stall check, which no 'failed' event reports.
  actionWorker.on('stalled', (jobId) => {
    void (async () => {
      const job = await Job.fromId(o.actionsQueue, jobId);
      if (job && (await job.isFailed())) gaveUp(job, `its worker died ${job.stalledCounter} times while running it`);
    })().catch((err: Error) => logger.error({ err, job: jobId }, 'stalled job not checked'));
  });
  for (const w of [eventWorker, actionWorker]) w.on('error', (err) => logger.error({ err }, 'queue worker error'));
  eventWorker.on('failed', (job, err) =>
    logger.error({ job: job?.id, attempt: job?.attemptsMade, err }, 'event job failed; it is retried with back-off'),
  );

  // The level-triggered end of the incident alerts the edge-triggered ends raced past.
  const board = o.notifier && new AlertBoard(redis, o.notifier.keys);
  const sweep = startIncidentSweep({
    intervalMs: o.sweepIntervalMs ?? 30_000,
    kinds: Object.values(instanceAlertKinds),
    firing: board ? () => board.firing() : () => openAlertsIn(redis, keys.openAlerts).list(),
    readInstance: (ref) => processor.readInstance(ref),
    alerts,
    logger,
    // Without a notifier nothing amends an alert with its action's report: no reason to wait for one.
    pendingGraceMs: o.notifier ? 120_000 : 0,
  });

  const settling = settleApprovalsEvery(pending.approvals, o.approvalSettleMs ?? 1_000, logger);

  return {
    gate,
    executor,
    processor,
    workers: [eventWorker, actionWorker],
    async stop() {
      sweep.stop();
      await settling.stop();
      await Promise.all([eventWorker.close(), actionWorker.close()]);
    },
  };
}

/**
 * Settles the approvals every `intervalMs`: times out the requests past their time, and finishes
 * the decided ones (approvals.ts). A failed round is logged as an error and the next one tries again.
 */
function settleApprovalsEvery(approvals: Approvals, intervalMs: number, logger: Logger): { stop(): Promise<void> } {
  let round: Promise<unknown> = Promise.resolve();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    round = approvals
      .settleDue()
      .catch((err: unknown) => logger.error({ err }, 'approval requests not settled; the next round tries again'))
      .finally(() => (busy = false));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      // A round waiting on a Redis that does not answer is left, not waited for: every step of a
      // settle is idempotent, and the next round (another replica, the next start) finishes it.
      await Promise.race([round, delay(1_000, undefined, { ref: false })]);
    },
  };
}
