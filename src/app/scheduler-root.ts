import { Queue } from 'bullmq';
import { ProbeRunner } from '../probes/probe-runner.js';
import { schedulerPart } from '../rules/rule-set.js';
import { startScheduler } from '../schedules/scheduler.js';
import { Silences } from '../silences/silences.js';
import { StopList, type RoleRoot } from './role-root.js';
import { quietQueue } from './quiet-queue.js';
import type { HeldParts, SharedParts } from './shared-parts.js';

/**
 * The scheduler role: the schedules of the rule set, each tick queued as action jobs on the
 * actions queue (one replica ticks each schedule), and the health probes. A reload swaps its
 * schedules; the probes read the rule set's at each pass.
 */
export async function startSchedulerRoot(s: SharedParts, held: HeldParts): Promise<RoleRoot & { probes: ProbeRunner }> {
  const { keys, logger } = s;
  const ruleSet = held.ruleSet!;
  const first = s.targets[0]!.id;
  const scheduler = await startScheduler({
    target: first,
    redis: s.redis,
    client: s.clients.for(first),
    targets: s.targets.map((t) => ({ target: t.id, client: s.clients.for(t.id) })),
    audit: s.audit,
    keys,
    logger,
    schedules: ruleSet.current.loaded.schedules,
    actions: s.actionsQueue,
    metrics: s.metrics,
    alerts: s.alerts,
  });
  ruleSet.attach(schedulerPart(scheduler));
  // The scheduler's own queue, checked by /readyz: a handle of its own, closed at stop.
  const schedulesQueue = quietQueue(new Queue(keys.schedules.queue, { connection: s.connection, prefix: keys.bullPrefix }), logger);
  // Health probes: an event source ticking like the schedules; replicas share them (docs/probes.md).
  const probes = new ProbeRunner({
    targets: s.targets.map((t) => ({ id: t.id, client: s.clients.for(t.id) })),
    redis: s.redis,
    keys,
    eventsQueue: s.eventsQueue,
    silences: new Silences(s.redis, keys.silences),
    logger: logger.child({ part: 'probes' }),
    metrics: s.metrics,
    probes: () => ruleSet.current.loaded.probes,
    member: s.replica,
    rosterTtlMs: s.config.leaseTtlMs,
  });
  await probes.start();
  const stops = new StopList(logger);
  stops.add('the probes', () => probes.stop());
  stops.add('the scheduler', () => scheduler.stop());
  stops.add('the schedules queue', () => schedulesQueue.close());
  return { readiness: { queues: [s.actionsQueue, schedulesQueue] }, stop: () => stops.run(), probes };
}
