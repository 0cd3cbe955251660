import type { Logger } from 'pino';
import type { Alert } from '../alerts/alert.js';
import type { Alerts } from '../alerts/alerts.js';
import type { Instance } from '../client/instance.js';
import { StatusCode } from '../client/status-code.js';
import type { InstanceRef } from '../redis/key-space.js';

/** What the sweep needs: the firing alerts, a read of an instance, and the one way alerts end. */
export interface IncidentSweepDeps {
  /** The alerts firing now (the notifier's board, or the alerts kept open without one). */
  firing(): Promise<Alert[]>;
  /** The incident kinds to sweep (the instance's crash, Error and failed start). */
  kinds: readonly string[];
  /** The instance as the daemon has it now; undefined on a 404. */
  readInstance(ref: InstanceRef): Promise<Instance | undefined>;
  alerts: Pick<Alerts, 'resolveFiring'>;
  logger?: Logger;
  /**
   * An alert whose Reflex action is still pending is left to that action's report for this long
   * after it started, so its end carries the action's result. Default 120 000 ms.
   */
  pendingGraceMs?: number;
}

const isPending = (a: Alert) => a.actions.some((x) => x.result === 'queued' || x.result === 'retrying');

/**
 * The level-triggered end of incident alerts: each firing crash, Error or failed-start alert whose
 * instance is Running now, or whose name the daemon no longer knows, ends. The edge-triggered ends
 * (the instance's Running event, a delete or rename) race the raise across replicas and retried
 * jobs (a recovery handled before the crash that it ends); this pass makes any alert such a race
 * left firing end within one interval, whatever the order was. Only the episode read ends: a
 * crash raised since stays firing.
 */
export async function sweepIncidents(deps: IncidentSweepDeps, now = Date.now()): Promise<number> {
  const kinds = new Set(deps.kinds);
  const grace = deps.pendingGraceMs ?? 120_000;
  let ended = 0;
  for (const alert of await deps.firing()) {
    if (!kinds.has(alert.kind) || !alert.instance || !alert.target || !alert.project) continue;
    if (isPending(alert) && now - Date.parse(alert.startsAt) < grace) continue;
    const ref = { target: alert.target, project: alert.project, instance: alert.instance };
    const instance = await deps.readInstance(ref);
    const why = !instance
      ? { summary: `${ref.instance} does not exist any more (the daemon answers 404)`, outcome: 'gone' }
      : instance.status_code === StatusCode.Running
        ? { summary: `${ref.instance} is Running (103) again`, outcome: 'recovered' }
        : undefined;
    if (!why) continue;
    if (await deps.alerts.resolveFiring(alert.kind, ref, why, { startsAt: alert.startsAt })) ended++;
  }
  if (ended) deps.logger?.info({ ended }, 'incident alerts ended by the sweep: their instances run again or are gone');
  return ended;
}

/** Runs {@link sweepIncidents} every `intervalMs` (errors are logged and the next pass tries again). */
export function startIncidentSweep(deps: IncidentSweepDeps & { intervalMs: number }): { stop(): void } {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    sweepIncidents(deps)
      .catch((err: unknown) => deps.logger?.warn({ err }, 'incident sweep failed; the next pass tries again'))
      .finally(() => (running = false));
  }, deps.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
