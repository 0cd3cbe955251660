import type { Logger } from 'pino';
import { actionFailedKind, contradictedKind, crashLoopKind, giveBackFailedKind, type Alerts } from '../../alerts/alerts.js';
import type { AuditLog } from '../../audit/audit-log.js';
import type { InstanceStatusEvent } from '../../events/canonical-event.js';
import type { EventArchive } from '../../events/event-archive.js';
import type { StateTracker } from '../../events/state-tracker.js';
import type { Metrics } from '../../metrics/metrics.js';
import { instanceAlertKinds } from '../../notify/instance-incident.js';
import { Trail } from '../trail.js';
import type { InstanceRef } from '../../redis/key-space.js';
import { isSuspicious, type StopVerdict } from '../stop-confirmation.js';

/** What recording a contradicted stop needs (the event processor's parts). */
export interface ContradictedStopDeps {
  audit: AuditLog;
  tracker: StateTracker;
  alerts: Pick<Alerts, 'raise' | 'resolveFiring'>;
  logger: Logger;
  archive?: EventArchive;
  metrics?: Metrics;
}

/**
 * A stop the daemon contradicts (no such instance, up since before the event, another instance
 * under the name) is recorded and alerted as suspicious, never spent: audited and archived as
 * contradicted, the tracker takes the daemon's word instead of the frame's, and one
 * `event.contradicted` notice (shown once, then resolved) is raised. The caller lets nothing else
 * happen: no rule decides (no budget, no back-off, no action) and no crash alert fires. A stop
 * overtaken by a start since (a guest reboot) is recorded the same way, without the notice. Every
 * step is keyed by the event, so a redelivered event records nothing twice.
 */
export async function recordContradictedStop(
  deps: ContradictedStopDeps,
  event: InstanceStatusEvent,
  verdict: Extract<StopVerdict, { confirmed: false }>,
): Promise<void> {
  const { audit, tracker, logger } = deps;
  const ref: InstanceRef = { target: event.target, project: event.project, instance: event.instance };
  const summary = `${verdict.summary}; not counted as a crash: no restart spent, no action, no crash alert`;
  const suspicious = isSuspicious(verdict.contradiction);
  deps.metrics?.stopsContradicted.inc({ reason: verdict.contradiction });
  if (suspicious)
    logger.warn({ instance: event.instance, event: event.id, contradiction: verdict.contradiction }, 'stop event contradicted by the daemon');
  await Promise.all([
    deps.archive?.append(event, 'contradicted'),
    Trail.ofEvent(audit, event, event.instance).event(event, summary, { contradicted: verdict.contradiction }),
  ]);
  // Settling wrote the frame's stop to the tracker: the daemon's word replaces it, at least as new as
  // the frame. A status the daemon agrees with (already-down) stays the stream's entry: a read in
  // its place would make the stream's next report of that status look like old news, unaudited.
  if (!verdict.instance) await tracker.forget(ref);
  else if (verdict.instance.status_code !== event.to)
    await tracker.update(ref, verdict.instance.status_code, Math.max(Date.now(), Date.parse(event.timestamp) || 0), {
      source: 'read',
      eventId: `${event.id}:contradicted`,
      ...(verdict.instance.last_used_at ? { lastUsedAt: verdict.instance.last_used_at } : {}),
    });
  if (!suspicious) return;
  const alert = {
    kind: contradictedKind,
    severity: 'warning',
    summary: `${event.instance}: ${summary} (a forged or stale frame?)`,
    target: event.target,
    project: event.project,
    instance: event.instance,
    ...(event.location && event.location !== 'none' ? { member: event.location } : {}),
    correlationId: event.id,
    notice: true,
  } as const;
  await deps.alerts.raise(alert, { once: `contradicted:${event.id}`, record: { contradicted: verdict.contradiction, notice: true } });
  if (verdict.contradiction === 'gone') await endIncidentsOfGone(deps.alerts, ref);
}

/**
 * The incident alerts still firing for a name that no longer exists (crashed, Error, failed start,
 * action failed, crash loop, give-back failed) resolve, each audited: no Running will ever come to end them. Call it
 * when the daemon answers 404 for the name, never on a frame's word alone.
 */
export async function endIncidentsOfGone(alerts: Pick<Alerts, 'resolveFiring'>, ref: InstanceRef): Promise<void> {
  const gone = { summary: `${ref.instance} does not exist any more (the daemon answers 404)`, outcome: 'gone' };
  for (const kind of [...Object.values(instanceAlertKinds), actionFailedKind, crashLoopKind, giveBackFailedKind])
    await alerts.resolveFiring(kind, ref, gone);
}
