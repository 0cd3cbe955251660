import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, type Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { AlertsView } from '../notify/alert-board.js';
import { Silences } from '../silences/silences.js';
import { RuleErrors } from '../rules/rule-errors.js';
import { AuditLog } from '../audit/audit-log.js';
import { historyStoreFor } from '../audit/history/history-store-for.js';
import { startHistoryShipping } from '../audit/history/history-wiring.js';
import { InstanceClient } from '../client/client.js';
import { targetsOf, type ConfiguredTarget } from '../config/config-target.js';
import { connectRedis, duplicateConnection } from '../redis/connect.js';
import type { Config } from '../config/config.js';
import { EventArchive } from '../events/event-archive.js';
import { EventIngestor } from '../events/event-ingestor.js';
import { EventSubscriber } from '../events/event-subscriber.js';
import { SubscriberLease } from '../events/subscriber-lease.js';
import { LeaseSpread } from '../events/lease-spread.js';
import { startHttpServer, type RunningHttpServer } from '../http/http-server.js';
import { inboundSecrets } from '../http/inbound-webhooks.js';
import { readiness, type TargetReader } from '../http/readiness.js';
import { Metrics } from '../metrics/metrics.js';
import { keySpace } from '../redis/key-space.js';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Notifier } from '../notify/notifier.js';
import { plainSecretUrlWarnings } from '../notify/receiver-config.js';
import { errorText, loadRuleSet, notifierPart, ruleErrorsPart, RuleSet, schedulerPart, type ReloadOutcome, type ReloadRequest, type RuleSetValue } from '../remediation/rule-set.js';
import { ReloadListener } from '../remediation/reload-channel.js';
import { Alerts } from '../alerts/alerts.js';
import { startScheduler } from '../schedules/scheduler.js';
import { resyncEvents } from '../events/resync.js';
import { StateTracker } from '../events/state-tracker.js';
import { ReflexError } from '../errors/reflex-error.js';
import { installProcessGuards } from '../log/process-guards.js';
import { startHeapTrim } from './heap-trim.js';
import { startMemberWatch } from '../remediation/member-watch.js';
import { startRemediation } from '../remediation/remediation.js';
import { oversizedFrameNote } from '../events/frame-size.js';
import { actionJobOptions } from '../actions/action-job.js';
import { dedupeWindowMs, retryPolicy } from '../errors/retry-policy.js';
import { queueHistory } from '../config/queue-history.js';
import { retentionPlan } from '../retention/structures.js';
import { startRedisWatch } from '../retention/redis-watch.js';

/** The subscriber of one target: its lease, its event stream, its resync. */
export interface TargetReaderHandle extends TargetReader {
  /** The target's identity (keys, job payloads, metric labels): its URL. */
  id: string;
  /** Runs a resync of this target now. */
  resync(): Promise<void>;
}

/** A running Reflex process (all roles or some), as started by `reflex run`, the demo or a test. */
export interface ReflexHandle {
  /** Stops taking new work, lets jobs in progress finish, closes connections. */
  stop(): Promise<void>;
  /** Runs a resync of every target now (subscriber role only). */
  resync(): Promise<void>;
  /** The first target's subscriber and lease (subscriber role); `readers` has every target's. */
  subscriber?: EventSubscriber;
  lease?: SubscriberLease;
  /** The first target's id; `targets` lists every one. */
  target: string;
  /** The id (URL) of every configured target. */
  targets: string[];
  /** One reader per target (subscriber role only). */
  readers: TargetReaderHandle[];
  /** This process's metrics (served on /metrics). */
  metrics: Metrics;
  /** The HTTP server (/metrics, /healthz, /readyz, /dashboard); none when `httpPort` is 0 or the port could not be bound. */
  http?: RunningHttpServer;
  /** The rules, schedules and receivers in force (worker and scheduler roles). */
  ruleSet?: RuleSet;
  /**
   * Reloads the rule set (SIGHUP, `reflex rules reload`): taken whole or refused whole, the running
   * set kept (see {@link RuleSet.reload}). Undefined for a role that holds no rules (subscriber).
   */
  reload?: (request: ReloadRequest) => Promise<ReloadOutcome>;
}

/**
 * The rule set of `dir` (rules, schedules, receivers), type-checked unless `typecheckRules` is
 * off. Any problem — a type error, a file that fails to load, a rule that fails validation — is
 * RULE_INVALID, one line per problem with file:line:column: a worker that silently skipped a rule
 * would not do what its operator wrote (a reload refuses such a folder the same way). For a
 * worker, none loaded — no rule and no schedule — is RULES_MISSING: such a worker would heal nothing.
 */
async function loadRulesOrFail(config: Config, logger: Logger, ruleErrors: RuleErrors): Promise<RuleSetValue> {
  const dir = config.rulesDir;
  const started = Date.now();
  const loaded = await loadRuleSet({ dir, notifications: config.notifications, conditionTimeoutMs: config.ruleTimeoutMs, typecheck: config.typecheckRules, ruleErrors });
  for (const e of loaded.errors) logger.error({ file: e.file, line: e.line, column: e.column }, `rule problem: ${errorText(e)}`);
  if (loaded.errors.length) throw new ReflexError('RULE_INVALID', `${loaded.errors.length} problem(s) in the rules of ${resolve(dir)}; not starting:\n${loaded.errors.map(errorText).join('\n')}`);
  const schedules = loaded.schedules.length;
  if (config.role !== 'scheduler' && loaded.loaded.rules.length === 0 && schedules === 0) {
    throw new ReflexError('RULES_MISSING', `no rule loaded from ${resolve(dir)}: it holds no rule file (*.ts with export default defineRule(...))`);
  }
  logger.debug({ ms: Date.now() - started, typecheck: config.typecheckRules }, 'rules loaded');
  if (config.role !== 'scheduler') logger.info({ rules: loaded.loaded.rules.map((r) => r.name), schedules }, `loaded ${loaded.loaded.rules.length} rule(s) from ${dir}`);
  return loaded;
}

/**
 * Asks each target for `GET /1.0` once. One that does not answer is TARGET_UNREACHABLE, unless
 * `wait` is set: then it is an error in the log and the subscriber keeps trying.
 */
async function reachTargets(configured: ConfiguredTarget[], wait: boolean, logger: Logger): Promise<void> {
  await Promise.all(configured.map(async (t) => {
    const client = new InstanceClient(t.target);
    try {
      await client.server({ signal: AbortSignal.timeout(10_000) });
    } catch (err) {
      const reason = err instanceof ReflexError || err instanceof Error ? err.message : String(err);
      if (!wait) throw new ReflexError('TARGET_UNREACHABLE', `target ${t.name === t.id ? t.id : `${t.name} (${t.id})`} does not answer: ${reason} (check --target, or give --wait-for-target to start anyway and wait for it)`, { cause: err });
      logger.error({ target: t.id, err }, 'target does not answer at start-up; waiting for it (--wait-for-target)');
    } finally {
      await client.close();
    }
  }));
}

/** Wires the parts for the configured role and starts them. */
export async function startReflex(config: Config, logger: Logger): Promise<ReflexHandle> {
  installProcessGuards(logger);
  const keys = keySpace(config.prefix);
  const configured = targetsOf(config);
  // Fail fast, before anything holds a lease or queues an event: a worker with no rule, or a
  // target that does not answer, is an error at start-up, not a process that says it is running.
  const metrics = new Metrics();
  // Built before the rules load (their engine reports to it); it raises its alerts once they exist (below).
  const ruleErrors = new RuleErrors({ logger, counter: metrics.ruleErrors });
  const loaded = config.role !== 'subscriber' ? await loadRulesOrFail(config, logger, ruleErrors) : undefined;
  // Read now: a missing inbound secret fails the start, not the first webhook.
  const inbound = inboundSecrets(config.inbound);
  // Read now too (a postgres store without its URL fails the start); reads of the audit trail
  // (console, dashboard) go across it and Redis.
  const history = historyStoreFor(config.history, config.prefix, keys.audit);
  await reachTargets(configured, config.waitForTarget, logger);
  const redis = await connectRedis(config.redisUrl, { logger });
  const clients = new Map(configured.map((t) => [t.id, new InstanceClient(t.target, { onFailover: (m) => logger.warn({ target: t.id, from: m.from, to: m.to, why: m.why }, 'a cluster member did not answer; calls and the event stream move to the next address') })]));
  // Jobs carry their target: every process of a deployment must be given the same targets.
  const clientFor = (id: string): InstanceClient => {
    const c = clients.get(id);
    if (!c) throw new ReflexError('TARGET_INVALID', `a job for target ${id}, which this process is not configured for (it has ${[...clients.keys()].join(', ')})`);
    return c;
  };
  const connection = duplicateConnection(redis);
  const queueOpts = { connection, prefix: keys.bullPrefix };
  // Every queue keeps its finished jobs as configured (jobsKeep*): a batch of up to 500 raw frames
  // or an action, for the dashboard, and so that a job re-added with the same id is refused.
  const jobHistory = queueHistory(config);
  // The dedupe keys last as long as the job they guard can come back (retry-policy.ts).
  const dedupeMs = dedupeWindowMs(config.jobsKeepCompletedMs);
  const eventsQueue = new Queue(keys.eventsQueue, {
    ...queueOpts,
    defaultJobOptions: { ...jobHistory, attempts: retryPolicy.eventAttempts, backoff: { type: 'custom' } },
  });
  const actionsQueue = new Queue(keys.actionsQueue, {
    ...queueOpts,
    defaultJobOptions: { ...jobHistory, backoff: actionJobOptions({ jobId: '' }).backoff },
  });
  // A queue with no error listener prints each Redis connection error with its stack; the
  // connection's trouble is already reported once (connectRedis), so the queues' copies go to debug.
  for (const q of [eventsQueue, actionsQueue]) q.on('error', (err) => logger.debug({ err, queue: q.name }, 'queue error'));
  const tracker = new StateTracker(redis, keys, config.clockToleranceMs);
  const audit = new AuditLog(redis, keys.audit, { history, maxRecords: config.auditMaxRecords, maxAgeMs: config.auditMaxAgeMs, onceTtlMs: dedupeMs });
  const rejectedLimits = { maxLength: config.rejectedMaxLength, maxAgeMs: config.rejectedMaxAgeMs, maxRawBytes: config.maxEventBytes };
  metrics.watchDeadLetters(actionsQueue);
  metrics.watchQueue(eventsQueue);
  metrics.watchQueue(actionsQueue);
  const workers: Worker[] = [];
  const stops: (() => Promise<void>)[] = [];
  const stopHeapTrim = startHeapTrim({ logger });
  stops.push(async () => stopHeapTrim());
  const readers: TargetReaderHandle[] = [];
  // Several replicas may share a host and even a process (tests): the random part keeps names apart.
  const replica = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const ruleSet = loaded && new RuleSet(loaded, { dir: config.rulesDir, notifications: config.notifications, conditionTimeoutMs: config.ruleTimeoutMs, typecheck: config.typecheckRules, ruleErrors, audit, logger, replica });
  ruleSet?.attach(ruleErrorsPart(ruleErrors));

  // What stop() undoes; also undone when start-up fails half-way (a process whose start failed
  // must exit, not keep a lease or a socket open).
  const teardown = async () => {
    for (const s of stops) await s().catch((err: unknown) => logger.warn({ err }, 'error while stopping a part'));
    await Promise.all([eventsQueue.close(), actionsQueue.close()]);
    await history?.close().catch((err: unknown) => logger.warn({ err }, 'error while closing the history store'));
    for (const c of clients.values()) await c.close();
    redis.disconnect();
    connection.disconnect();
  };
  try {
    // Replicas reading streams count each other and split the targets' leases evenly between them.
    const spread = config.role === 'all' || config.role === 'subscriber' ? new LeaseSpread({ redis, key: keys.replicas, logger, ttlMs: config.leaseTtlMs }) : undefined;
    // Each target has its own lease, stream, ingestor and resync; they share the queues and the state tracker.
    const startReader = (t: ConfiguredTarget): TargetReaderHandle => {
      const log = configured.length > 1 ? logger.child({ target: t.name }) : logger;
      const client = clientFor(t.id);
      const held = new SubscriberLease({ redis, key: keys.lease(t.id), fenceKey: keys.leaseFence(t.id), vacantKey: keys.leaseVacant(t.id), logger: log, ttlMs: config.leaseTtlMs, mayTake: spread && ((ms) => spread.mayTake(ms)) });
      // Every replica reads the stream; only the lease holder writes it, followers keep a window to replay on a takeover.
      const ingestor = new EventIngestor({ queue: eventsQueue, target: t.id, logger: log, active: false, onOverflow: () => void resync('gap'), mayWrite: () => held.isCurrent(), maxEventBytes: config.maxEventBytes, clockToleranceMs: config.clockToleranceMs });
      const resync = async (reason: 'gap' | 'periodic' | 'manual' = 'manual') => {
        if (!held.isHeld) return;
        const events = await resyncEvents(client, tracker, t.id, { graceMs: config.resyncGraceMs, project: t.project });
        for (const e of events) ingestor.pushSynthetic(e);
        metrics.resyncs.inc({ reason });
        if (reason === 'gap') metrics.gapsResynced.inc();
        // An instance seen for the first time is a baseline, not a change the stream missed.
        metrics.resyncChanges.inc(events.filter((e) => e.kind === 'instance.status' && e.from !== undefined).length);
        if (events.length) log.info({ changes: events.length }, 'resync found changes');
      };
      const sub = new EventSubscriber({
        endpoint: () => client.eventsEndpoint(['operation', 'lifecycle'], { allProjects: !t.project }),
        onFrame: (raw, at) => ingestor.pushFrame(raw, at),
        onConnected: () => resync('gap'),
        logger: log,
        metrics,
        maxFrameBytes: config.maxFrameBytes,
        // Queued as a note the processor rejects: kept, audited and alerted on the one rejected-input path.
        onOversized: (at) => ingestor.pushFrame(oversizedFrameNote(config.maxFrameBytes, at), at),
      });
      held.on('acquired', () => {
        ingestor.activate();
        if (sub.connected) resync('gap').catch((err) => log.warn({ err }, 'resync after taking over failed'));
      });
      held.on('lost', () => ingestor.standBy());
      metrics.leaseHolder.set({ target: t.id }, 0);
      held.on('acquired', () => metrics.leaseHolder.set({ target: t.id }, 1));
      held.on('lost', () => metrics.leaseHolder.set({ target: t.id }, 0));
      sub.on('connected', () => metrics.streamConnected.set({ target: t.id }, 1));
      // A cluster's other members join an HTTPS target's failover addresses (client/cluster.ts), in every role.
      if (t.target.kind === 'https') sub.once('connected', () => void client.server().then((s) => (s.environment?.server_clustered ? client.clusterMembers() : undefined)).catch((err: unknown) => log.debug({ err }, 'could not list the cluster members')));
      sub.on('disconnected', () => metrics.streamConnected.set({ target: t.id }, 0));
      const gauge = setInterval(() => metrics.ingestBuffered.set({ target: t.id, role: held.isHeld ? 'holder' : 'follower' }, ingestor.buffered), 1_000);
      gauge.unref();
      sub.start();
      // A surplus lease is handed over once what was read is written (bounded: the successor's window covers the rest).
      spread?.register(held, async () => {
        await Promise.race([ingestor.drain(), sleep(config.leaseTtlMs, undefined, { ref: false })]);
        await held.handOver();
      });
      held.start();
      const timer = config.resyncIntervalMs > 0 ? setInterval(() => {
        if (sub.connected && held.isHeld) resync('periodic').catch((err) => log.warn({ err }, 'periodic resync failed'));
      }, config.resyncIntervalMs) : undefined;
      stops.push(async () => {
        clearInterval(timer);
        clearInterval(gauge);
        await sub.stop();
        await ingestor.drain();
        await held.stop();
      });
      return { name: t.name, id: t.id, lease: held, subscriber: sub, resync: () => resync() };
    };
    if (spread) {
      await spread.start();
      stops.push(() => spread.stop());
      readers.push(...configured.map(startReader));
    }

    // Receivers come from one place: the config file, REFLEX_NOTIFY, or a defineNotifications file beside the rules; the worker role sends.
    const notifyConfig = config.role === 'all' || config.role === 'worker' ? ruleSet!.current.notify : undefined;
    const notifier = notifyConfig ? new Notifier({ ...notifyConfig.settings, redis, audit, prefix: config.prefix, logger, jobHistory }) : undefined;
    // Every alert of this process: audited, then sent through the notifier; a process without one (no receivers, a scheduler or subscriber role) audits them only.
    const alerts = new Alerts({ audit, notifier });
    ruleErrors.alertThrough(alerts);

    let alertsView: (() => Promise<AlertsView>) | undefined;
    if (config.role === 'all' || config.role === 'worker') {
      const silences = new Silences(redis, keys.silences);
      alertsView = notifier ? () => notifier.board.view(notifier.mute) : undefined;
      // Audit records leave Redis for the history store before retention trims them (one replica ships).
      stops.push(await startHistoryShipping({ redis, streamKey: keys.audit, store: history, shipIntervalMs: config.history.shipIntervalMs, logger, metrics, alerts }));
      // A cluster member going offline is an alert of its own (nothing for a server that is not clustered).
      stops.push(startMemberWatch({ targets: configured.map((t) => ({ id: t.id, client: clientFor(t.id) })), redis, keys, alerts, logger }));
      if (notifier) {
        logger.info({ receivers: notifyConfig!.settings.receivers.length, from: notifyConfig!.from }, 'notifications configured');
        for (const w of plainSecretUrlWarnings(notifyConfig!.settings.receivers)) logger.warn(w);
        stops.push(() => notifier.close());
      }
      ruleSet!.attach(notifierPart(notifier));
      const remediation = startRemediation({
        redis,
        connection,
        keys,
        client: clientFor,
        tracker,
        audit,
        silences,
        // Read at the moment of use (once per event, again at each re-check): a reload takes effect on the next.
        engine: () => ruleSet!.current.engine,
        // The built-ins and the folder's defineAction actions, swapped with the rules.
        actions: () => ruleSet!.current.loaded.actions,
        eventsQueue,
        actionsQueue,
        logger,
        metrics,
        archive: new EventArchive({ redis, key: keys.archive, maxLength: config.archiveMaxLength, maxAgeMs: config.archiveMaxAgeMs, dedupeWindowMs: dedupeMs }),
        notifier,
        alerts,
        gate: { storm: config.stormThreshold > 0 ? { threshold: config.stormThreshold, windowMs: config.stormWindowMs } : false, autorestartStandBackMs: config.autorestartStandBackMs },
        actionAttempts: config.actionAttempts,
        clockToleranceMs: config.clockToleranceMs,
        maxEventBytes: config.maxEventBytes,
        actionConcurrency: config.actionConcurrency,
        rejected: rejectedLimits,
      });
      workers.push(...remediation.workers);
      stops.push(() => remediation.stop());
    }

    if (config.role === 'all' || config.role === 'scheduler') {
      const scheduler = await startScheduler({ target: configured[0]!.id, redis, client: clientFor(configured[0]!.id), targets: configured.map((t) => ({ target: t.id, client: clientFor(t.id) })), audit, keys, logger, schedules: ruleSet!.current.schedules, actions: actionsQueue, metrics, alerts });
      stops.push(() => scheduler.stop());
      ruleSet!.attach(schedulerPart(scheduler));
    }

    // Every role samples Redis (metrics) and keeps the streams to their bounds; one replica alerts on each change of level.
    const watch = startRedisWatch({ redis, plan: retentionPlan(config, keys), levelKey: keys.redisMemoryLevel, alertRatio: config.redisMemoryAlertRatio, intervalMs: config.retentionCheckMs, metrics, logger, alerts });
    stops.push(() => watch.stop());

    const reload = ruleSet && ((request: ReloadRequest) => ruleSet.reload(request));
    if (reload) {
      // Every replica holding rules answers `reflex rules reload`.
      const listener = new ReloadListener({ redis, keys: keys.reload, logger, replica, role: config.role, reload });
      await listener.start();
      stops.unshift(() => listener.stop());
    }

    // /readyz checks every queue this role's work goes through, fed or consumed: a pause, or no
    // worker consuming it anywhere, leaves crashes unhealed. Handles of their own, closed at stop.
    const feeds = (...roles: Config['role'][]) => config.role === 'all' || roles.includes(config.role);
    const healthQueues = [
      ...(feeds('subscriber', 'worker') ? [eventsQueue] : []),
      ...(feeds('worker', 'scheduler') ? [actionsQueue] : []),
      ...(feeds('worker') && ruleSet?.current.notify ? [keys.notify.flushQueue, keys.notify.deliveryQueue].map((name) => new Queue(name, { connection, prefix: keys.notify.bullPrefix })) : []),
      ...(feeds('scheduler') ? [new Queue(keys.schedules.queue, queueOpts)] : []),
    ];
    const ownQueues = healthQueues.filter((q) => q !== eventsQueue && q !== actionsQueue);
    for (const q of ownQueues) q.on('error', (err) => logger.debug({ err, queue: q.name }, 'queue error'));
    stops.push(async () => void (await Promise.all(ownQueues.map((q) => q.close()))));
    const ready = readiness({ redis, readers, workers, queues: healthQueues, streamLossGraceMs: config.streamLossGraceMs });
    metrics.watchHealth(() => ready.reading());

    const http = config.httpPort > 0
      ? await startHttpServer({
          host: config.httpHost,
          port: config.httpPort,
          metrics,
          logger,
          readiness: ready.checks,
          allowedHosts: config.httpAllowedHosts,
          // Every role serves it: any replica behind the address Alertmanager posts to queues the alerts.
          inbound: inbound.alertmanagerToken || inbound.webhookSecrets
            ? { ...inbound, queue: eventsQueue, redis, rejectedKey: keys.rejected, rejectedLimits, audit, logger, maxBodyBytes: config.inbound?.maxBodyBytes, toleranceSec: config.inbound?.toleranceSec, mapping: { defaultTarget: configured[0]!.id, targets: new Map(configured.flatMap((t) => [[t.name, t.id], [t.id, t.id]] as [string, string][])), instanceLabels: config.inbound?.instanceLabels, projectLabel: config.inbound?.projectLabel, targetLabel: config.inbound?.targetLabel } }
            : undefined,
          dashboard: config.dashboardToken ? { token: config.dashboardToken, writeToken: config.dashboardWriteToken, queues: [eventsQueue, actionsQueue], audit, silences: new Silences(redis, keys.silences, audit), alerts: alertsView, target: configured.map((t) => t.id).join(', '), console: { redis, keys, prefix: config.prefix, tracker, targets: configured.map((t) => ({ id: t.id, name: t.name, client: clientFor(t.id) })), actionsQueue } } : undefined,
        })
      : undefined;

    return {
      subscriber: readers[0]?.subscriber,
      lease: readers[0]?.lease,
      target: configured[0]!.id,
      targets: configured.map((t) => t.id),
      readers,
      metrics,
      http,
      ruleSet,
      reload,
      resync: async () => {
        await Promise.all(readers.map((r) => r.resync()));
      },
      async stop() {
        await http?.close();
        await teardown();
      },
    };
  } catch (err) {
    await teardown();
    throw err;
  }
}
