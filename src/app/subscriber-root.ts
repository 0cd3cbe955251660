import { LeaseSpread } from '../events/lease-spread.js';
import { startTargetReader } from '../events/target-reader.js';
import { StopList, type RoleRoot } from './role-root.js';
import type { SharedParts } from './shared-parts.js';

/**
 * The subscriber role: a reader per target (its lease, its event stream, its ingestor, its
 * resync), all writing the one events queue. Replicas reading streams count each other and split
 * the targets' leases evenly between them.
 */
export async function startSubscriberRoot(s: SharedParts): Promise<RoleRoot> {
  const { config, logger } = s;
  const stops = new StopList(logger);
  const spread = new LeaseSpread({ redis: s.redis, key: s.keys.replicas, logger, ttlMs: config.leaseTtlMs });
  await spread.start();
  stops.add('the lease spread', () => spread.stop());
  // The write probe exists once the roots run (serving): until then, nothing to tell.
  let reportWriteError: ((err: unknown) => void) | undefined;
  const readers = s.targets.map((t) => {
    const reader = startTargetReader({
      target: t,
      client: s.clients.for(t.id),
      redis: s.redis,
      keys: s.keys,
      eventsQueue: s.eventsQueue,
      tracker: s.tracker,
      metrics: s.metrics,
      logger,
      targets: s.targets.length,
      spread,
      onWriteError: (err) => reportWriteError?.(err),
      settings: config,
    });
    stops.add(`the reader of ${t.id}`, () => reader.stop());
    return reader;
  });
  return {
    readers,
    readiness: { readers, queues: [s.eventsQueue] },
    reportWriteErrors: (to) => void (reportWriteError = to),
    stop: () => stops.run(),
  };
}
