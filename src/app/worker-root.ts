import { Queue } from 'bullmq';
import { HistoryHealth } from '../audit/history/history-health.js';
import { startHistoryShipping } from '../audit/history/history-wiring.js';
import { EventArchive } from '../events/event-archive.js';
import { plainSecretUrlWarnings } from '../notify/receiver-config.js';
import { startMemberWatch } from '../remediation/member-watch.js';
import { startRemediation } from '../remediation/remediation.js';
import { notifierPart } from '../rules/rule-set.js';
import { Silences } from '../silences/silences.js';
import { StopList, type RoleRoot } from './role-root.js';
import { quietQueue, type SharedParts } from './shared-parts.js';

/**
 * The worker role: the notifier's sending (built with the shared parts, closed here), history
 * shipping, the cluster member watch, and the remediation core (the event and action workers).
 */
export async function startWorkerRoot(s: SharedParts): Promise<RoleRoot> {
  const { config, logger, redis, keys, audit, metrics } = s;
  const ruleSet = s.ruleSet!;
  const stops = new StopList(logger);
  try {
    const notifyConfig = ruleSet.current.notify;
    const { notifier, alerts } = s;
    const silences = new Silences(redis, keys.silences);
    // Audit records leave Redis for the history store before retention trims them (one replica ships);
    // /readyz reads the store and how this process's last shipment went.
    const health =
      s.history && new HistoryHealth(s.history, { onVerdict: (v) => metrics.historyStoreUp.set({ store: s.history!.kind }, v.up ? 1 : 0) });
    stops.add(
      await startHistoryShipping({
        redis,
        streamKey: keys.audit,
        store: health?.observed(),
        shipIntervalMs: config.history.shipIntervalMs,
        logger,
        metrics,
        alerts,
      }),
    );
    // A cluster member going offline is an alert of its own (nothing for a server that is not clustered).
    stops.add(startMemberWatch({ targets: s.targets.map((t) => ({ id: t.id, client: s.clients.for(t.id) })), redis, keys, alerts, logger }));
    if (notifier) {
      logger.info({ receivers: notifyConfig!.settings.receivers.length, from: notifyConfig!.from }, 'notifications configured');
      for (const w of plainSecretUrlWarnings(notifyConfig!.settings.receivers)) logger.warn(w);
      stops.add(() => notifier.close());
    }
    ruleSet.attach(notifierPart(notifier));
    const remediation = startRemediation({
      redis,
      connection: s.connection,
      keys,
      client: s.clients.for,
      tracker: s.tracker,
      audit,
      silences,
      // Read at the moment of use (once per event, again at each re-check): a reload takes effect on the next.
      engine: ruleSet.engine,
      actions: ruleSet.actions,
      eventsQueue: s.eventsQueue,
      actionsQueue: s.actionsQueue,
      logger,
      metrics,
      archive: new EventArchive({
        redis,
        key: keys.archive,
        maxLength: config.archiveMaxLength,
        maxAgeMs: config.archiveMaxAgeMs,
        dedupeWindowMs: s.dedupeMs,
      }),
      notifier,
      alerts,
      gate: {
        storm: config.stormThreshold > 0 ? { threshold: config.stormThreshold, windowMs: config.stormWindowMs } : false,
        autorestartStandBackMs: config.autorestartStandBackMs,
      },
      actionAttempts: config.actionAttempts,
      clockToleranceMs: config.clockToleranceMs,
      maxEventBytes: config.maxEventBytes,
      actionConcurrency: config.actionConcurrency,
      rejected: s.rejectedLimits,
    });
    stops.add(() => remediation.stop());
    // The notifier's own queues, checked by /readyz: handles of their own, closed at stop.
    const notifyQueues = notifier
      ? [keys.notify.flushQueue, keys.notify.deliveryQueue].map((name) =>
          quietQueue(new Queue(name, { connection: s.connection, prefix: keys.notify.bullPrefix }), logger),
        )
      : [];
    stops.add(async () => void (await Promise.all(notifyQueues.map((q) => q.close()))));
    return {
      readiness: {
        workers: remediation.workers,
        queues: [s.eventsQueue, s.actionsQueue, ...notifyQueues],
        history: health && { required: config.history.required, check: () => health.check() },
      },
      stop: () => stops.run(),
    };
  } catch (err) {
    await stops.run();
    throw err;
  }
}
