import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { actionsQueueFor } from '../actions/action-job.js';
import { Alerts, openAlertsIn } from '../alerts/alerts.js';
import { AuditLog } from '../audit/audit-log.js';
import type { HistoryStore } from '../audit/history/history-store.js';
import { historyStoreFor } from '../audit/history/history-store-for.js';
import { InstanceClient } from '../client/client.js';
import { TargetClients } from '../client/target-clients.js';
import { targetsOf, type ConfiguredTarget } from '../config/config-target.js';
import type { Config } from '../config/config.js';
import { queueHistory } from '../config/queue-history.js';
import { ReflexError } from '../errors/reflex-error.js';
import { dedupeWindowMs } from '../errors/retry-policy.js';
import { eventsQueueFor } from '../events/event-job.js';
import { StateTracker } from '../events/state-tracker.js';
import { inboundSecrets } from '../http/inbound-webhooks.js';
import { Metrics } from '../metrics/metrics.js';
import { connectRedis, duplicateConnection, type RedisConnection } from '../redis/connect.js';
import { keySpace, type KeySpace } from '../redis/key-space.js';
import type { RuleSet } from '../rules/rule-set.js';
import { RuleErrors } from '../rules/rule-errors.js';
import { startHeapTrim } from './heap-trim.js';
import { quietQueue } from './quiet-queue.js';
import type { RoleNeeds } from './role-root.js';
import { holdRules, loadRulesOrFail } from './rule-holding.js';
import { openSending, type Sending } from './sending.js';

/** What every role of a process shares, built once by {@link openSharedParts}. */
export interface SharedParts {
  config: Config;
  logger: Logger;
  keys: KeySpace;
  /** Every configured target, in the order given. */
  targets: ConfiguredTarget[];
  /** The client of each target. */
  clients: TargetClients;
  metrics: Metrics;
  redis: RedisConnection;
  /** A connection BullMQ may block on (queues, workers). */
  connection: RedisConnection;
  eventsQueue: Queue;
  actionsQueue: Queue;
  /** How long a dedupe key lasts: as long as the job it guards can come back (retry-policy.ts). */
  dedupeMs: number;
  /** Bounds of the rejected-input stream. */
  rejectedLimits: { maxLength: number; maxAgeMs: number; maxRawBytes: number; metrics: Metrics };
  tracker: StateTracker;
  audit: AuditLog;
  /** Where audit records go once shipped out of Redis; none when `history.store` is `none`. */
  history?: HistoryStore;
  /** The inbound webhooks' secrets, read at start-up. */
  inbound: ReturnType<typeof inboundSecrets>;
  /** Every alert of this process: audited, then sent through the notifier; a process without one (no receivers, a scheduler or subscriber role) audits them only. */
  alerts: Alerts;
  /** This replica's name (host, pid and a random part: several replicas may share a host or a process). */
  replica: string;
  /** Closes what was opened here, once every role has stopped. */
  close(): Promise<void>;
}

/**
 * What some roles hold, opened once with the shared parts for every role of the process that
 * declares the need (app/roles.ts): one rule set for the worker and the scheduler of an `all`
 * process, and the notifier of the role that sends, opened before the alerts that carry it (the
 * sending role closes it).
 */
export interface HeldParts {
  /** The rules, schedules and receivers; none when no role holds rules (subscriber). */
  ruleSet?: RuleSet;
  sending: Sending;
}

/**
 * Asks each target for `GET /1.0` once. One that does not answer is TARGET_UNREACHABLE, unless
 * `wait` is set: then it is an error in the log and the subscriber keeps trying.
 */
async function reachTargets(configured: ConfiguredTarget[], wait: boolean, logger: Logger): Promise<void> {
  await Promise.all(
    configured.map(async (t) => {
      const client = new InstanceClient(t.target);
      try {
        await client.server({ signal: AbortSignal.timeout(10_000) });
      } catch (err) {
        const reason = err instanceof ReflexError || err instanceof Error ? err.message : String(err);
        if (!wait)
          throw new ReflexError(
            'TARGET_UNREACHABLE',
            `target ${t.name === t.id ? t.id : `${t.name} (${t.id})`} does not answer: ${reason} (check --target, or give --wait-for-target to start anyway and wait for it)`,
            { cause: err },
          );
        logger.error({ target: t.id, err }, 'target does not answer at start-up; waiting for it (--wait-for-target)');
      } finally {
        await client.close();
      }
    }),
  );
}

/**
 * Opens what every role shares: the targets' clients, Redis, the events and actions queues, the
 * state tracker, the audit log, the metrics, the heap trim and the alerts; and, once for every
 * role that needs them (`needs`, as the roles declare), the rule set and the notifier, which the
 * alerts carry. Fails fast, before anything holds a lease or queues an event: a worker with no
 * rule, or a target that does not answer, is an error at start-up, not a process that says it is running.
 */
export async function openSharedParts(config: Config, logger: Logger, needs: RoleNeeds): Promise<{ shared: SharedParts; held: HeldParts }> {
  const keys = keySpace(config.prefix);
  const targets = targetsOf(config);
  const metrics = new Metrics();
  // Built before the rules load (their engine reports to it); it raises its alerts once they exist (below).
  const ruleErrors = new RuleErrors({ logger, counter: metrics.ruleErrors });
  const firstLoad = await loadRulesOrFail(config, logger, needs, ruleErrors);
  // Read now: a missing inbound secret fails the start, not the first webhook.
  const inbound = inboundSecrets(config.inbound);
  // Read now too (a postgres store without its URL fails the start); reads of the audit trail
  // (console, dashboard) go across it and Redis.
  const history = historyStoreFor(config.history, config.prefix, keys.audit);
  await reachTargets(targets, config.waitForTarget, logger);
  // A replica started while Redis restarts (a replacement, a host's boot) waits for it a little.
  const redis = await connectRedis(config.redisUrl, { logger, waitMs: config.redisStartupWaitMs });
  const clients = new TargetClients(targets, {
    onFailover: (id, m) =>
      logger.warn(
        { target: id, from: m.from, to: m.to, why: m.why },
        'a cluster member did not answer; calls and the event stream move to the next address',
      ),
  });
  const connection = duplicateConnection(redis);
  const jobHistory = queueHistory(config);
  const dedupeMs = dedupeWindowMs(config.jobsKeepCompletedMs);
  const eventsQueue = quietQueue(eventsQueueFor({ connection, keys, history: jobHistory }), logger);
  const actionsQueue = quietQueue(actionsQueueFor({ connection, keys, history: jobHistory }), logger);
  const tracker = new StateTracker(redis, keys, config.clockToleranceMs);
  const audit = new AuditLog(redis, keys.audit, { history, maxRecords: config.auditMaxRecords, maxAgeMs: config.auditMaxAgeMs, onceTtlMs: dedupeMs });
  metrics.watchDeadLetters(actionsQueue);
  metrics.watchQueue(eventsQueue);
  metrics.watchQueue(actionsQueue);
  const stopHeapTrim = startHeapTrim({ logger });
  const replica = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const ruleSet = holdRules(firstLoad, { config, audit, logger, replica, ruleErrors });
  const sending = openSending(needs, ruleSet, { config, redis, connection, keys, audit, logger });
  const { notifier } = sending;
  const alerts = new Alerts({ audit, notifier, open: notifier ? undefined : openAlertsIn(redis, keys.openAlerts) });
  ruleErrors.alertThrough(alerts);
  const shared: SharedParts = {
    config,
    logger,
    keys,
    targets,
    clients,
    metrics,
    redis,
    connection,
    eventsQueue,
    actionsQueue,
    dedupeMs,
    tracker,
    audit,
    history,
    inbound,
    alerts,
    replica,
    rejectedLimits: { maxLength: config.rejectedMaxLength, maxAgeMs: config.rejectedMaxAgeMs, maxRawBytes: config.maxEventBytes, metrics },
    async close() {
      stopHeapTrim();
      await Promise.all([eventsQueue.close(), actionsQueue.close()]);
      await history?.close().catch((err: unknown) => logger.warn({ err }, 'error while closing the history store'));
      await clients.close();
      redis.disconnect();
      connection.disconnect();
    },
  };
  return { shared, held: { ruleSet, sending } };
}
