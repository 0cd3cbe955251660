import { Queue } from 'bullmq';
import { startHistoryShipping } from '../audit/history/history-wiring.js';
import type { CanonicalEvent } from '../events/canonical-event.js';
import { EventArchive } from '../events/event-archive.js';
import { InstanceAlerts } from '../notify/instance-alerts.js';
import { Notifier } from '../notify/notifier.js';
import { plainSecretUrlWarnings } from '../notify/receiver-config.js';
import { startMemberWatch } from '../remediation/member-watch.js';
import { startRemediation } from '../remediation/remediation.js';
import { notifierPart } from '../remediation/rule-set.js';
import { Silences } from '../rules/silences.js';
import { StopList, type RoleRoot } from './role-root.js';
import { quietQueue, type SharedParts } from './shared-parts.js';

/**
 * The worker role: the notifier (from the rule set's receivers), history shipping, the cluster
 * member watch, and the remediation core (the event and action workers). Its notifier is where
 * the whole process's alerts go ({@link SharedParts.alerts}).
 */
export async function startWorkerRoot(s: SharedParts): Promise<RoleRoot> {
  const { config, logger, redis, keys, audit, metrics } = s;
  const ruleSet = s.ruleSet!;
  const stops = new StopList(logger);
  try {
    // Receivers come from one place: the config file, REFLEX_NOTIFY, or a defineNotifications file beside the rules.
    const notifyConfig = ruleSet.current.notify;
    const silences = new Silences(redis, keys.silences);
    const notifier = notifyConfig ? new Notifier({ ...notifyConfig.settings, redis, audit, prefix: config.prefix, logger, silenced: (alerts) => silences.mutingNotifications(alerts), jobHistory: s.jobHistory }) : undefined;
    s.alerts.use(notifier);
    const raiseAlert = s.alerts.raiseAlert;
    // Audit records leave Redis for the history store before retention trims them (one replica ships).
    stops.add(await startHistoryShipping({ redis, streamKey: keys.audit, store: s.history, shipIntervalMs: config.history.shipIntervalMs, logger, metrics, raiseAlert }));
    // A cluster member going offline is an alert of its own (nothing for a server that is not clustered).
    stops.add(startMemberWatch({ targets: s.targets.map((t) => ({ id: t.id, client: s.clients.for(t.id) })), redis, keys, raiseAlert, logger }));
    let inStorm: (e: CanonicalEvent) => Promise<boolean> = async () => false;
    const instanceAlerts = notifier ? new InstanceAlerts({ notifier, redis, audit, logger, inStorm: (e) => inStorm(e) }) : undefined;
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
      archive: new EventArchive({ redis, key: keys.archive, maxLength: config.archiveMaxLength, maxAgeMs: config.archiveMaxAgeMs, dedupeWindowMs: s.dedupeMs }),
      notifier,
      instanceAlerts,
      raiseAlert,
      gate: { storm: config.stormThreshold > 0 ? { threshold: config.stormThreshold, windowMs: config.stormWindowMs } : false, autorestartStandBackMs: config.autorestartStandBackMs },
      actionAttempts: config.actionAttempts,
      clockToleranceMs: config.clockToleranceMs,
      maxEventBytes: config.maxEventBytes,
      actionConcurrency: config.actionConcurrency,
      rejected: s.rejectedLimits,
    });
    inStorm = (e) => remediation.gate.inStorm(e);
    stops.add(() => remediation.stop());
    // The notifier's own queues, checked by /readyz: handles of their own, closed at stop.
    const notifyQueues = notifier ? [keys.notify.flushQueue, keys.notify.deliveryQueue].map((name) => quietQueue(new Queue(name, { connection: s.connection, prefix: keys.notify.bullPrefix }), logger)) : [];
    stops.add(async () => void (await Promise.all(notifyQueues.map((q) => q.close()))));
    return {
      readiness: { workers: remediation.workers, queues: [s.eventsQueue, s.actionsQueue, ...notifyQueues] },
      stop: () => stops.run(),
    };
  } catch (err) {
    await stops.run();
    throw err;
  }
}
