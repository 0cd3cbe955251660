import { startHistoryShipping } from '../audit/history/history-wiring.js';
import { startMemberWatch } from '../remediation/member-watch.js';
import { StopList, type RoleRoot } from './role-root.js';
import type { HeldParts, SharedParts } from './shared-parts.js';
import { startWorkerRemediation } from './worker-remediation.js';

/**
 * The worker role: history shipping, the cluster member watch, the remediation core (the event
 * and action workers), and the notifier's sending, which it closes last (the remediation's last
 * alerts still go out).
 */
export async function startWorkerRoot(s: SharedParts, held: HeldParts): Promise<RoleRoot> {
  const { config, logger, redis, keys, alerts } = s;
  const { sending } = held;
  const stops = new StopList(logger);
  try {
    // Audit records leave Redis for the history store before retention trims them (one replica ships).
    const history = await startHistoryShipping({
      redis,
      streamKey: keys.audit,
      store: s.history,
      required: config.history.required,
      shipIntervalMs: config.history.shipIntervalMs,
      logger,
      metrics: s.metrics,
      alerts,
    });
    stops.add('the history shipping', () => history.stop());
    // A cluster member going offline is an alert of its own (nothing for a server that is not clustered).
    stops.add(
      'the member watch',
      startMemberWatch({ targets: s.targets.map((t) => ({ id: t.id, client: s.clients.for(t.id) })), redis, keys, alerts, logger }),
    );
    const remediation = startWorkerRemediation(s, held);
    stops.add('the event and action workers', () => remediation.stop());
    stops.add('the notifier', () => sending.close());
    return {
      readiness: {
        workers: remediation.workers,
        queues: [s.eventsQueue, s.actionsQueue, ...sending.queues],
        history: history.readiness,
      },
      stop: () => stops.run(),
    };
  } catch (err) {
    await stops.run();
    await sending.close();
    throw err;
  }
}
