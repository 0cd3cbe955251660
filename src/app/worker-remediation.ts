import { EventArchive } from '../events/event-archive.js';
import { startRemediation, type Remediation } from '../remediation/remediation.js';
import { Silences } from '../silences/silences.js';
import type { HeldParts, SharedParts } from './shared-parts.js';

/**
 * The remediation core of the worker role (the event and action workers) on the shared parts:
 * the rule set's engine and actions read at the moment of use (once per event, again at each
 * re-check), so a reload takes effect on the next; a storm threshold of 0 turns storm control off.
 */
export function startWorkerRemediation(s: SharedParts, held: HeldParts): Remediation {
  const { config, redis, keys } = s;
  const ruleSet = held.ruleSet!;
  return startRemediation({
    redis,
    connection: s.connection,
    keys,
    client: s.clients.for,
    tracker: s.tracker,
    audit: s.audit,
    silences: new Silences(redis, keys.silences),
    engine: ruleSet.engine,
    actions: ruleSet.actions,
    eventsQueue: s.eventsQueue,
    actionsQueue: s.actionsQueue,
    logger: s.logger,
    metrics: s.metrics,
    archive: new EventArchive({
      redis,
      key: keys.archive,
      maxLength: config.archiveMaxLength,
      maxAgeMs: config.archiveMaxAgeMs,
      dedupeWindowMs: s.dedupeMs,
    }),
    notifier: held.sending.notifier,
    alerts: s.alerts,
    gate: {
      storm: config.stormThreshold > 0 ? { threshold: config.stormThreshold, windowMs: config.stormWindowMs } : false,
      autorestartStandBackMs: config.autorestartStandBackMs,
    },
    actionAttempts: config.actionAttempts,
    clockToleranceMs: config.clockToleranceMs,
    maxEventBytes: config.maxEventBytes,
    actionConcurrency: config.actionConcurrency,
    rejected: s.rejectedLimits,
    // Incident alerts a race left firing end within one resync interval (30 s by default).
    sweepIntervalMs: config.resyncIntervalMs || 30_000,
    consoleUrl: config.consoleUrl ?? (config.httpPort ? `http://${config.httpHost}:${config.httpPort}/dashboard` : undefined),
  });
}
