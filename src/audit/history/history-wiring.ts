import type { Logger } from 'pino';
import type { Alerts } from '../../alerts/alerts.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { RedisConnection } from '../../redis/connect.js';
import { HistoryShipper, stopShippingWatermark } from './history-shipper.js';
import type { HistoryStore } from './history-store.js';

/** Options of {@link startHistoryShipping}. */
export interface HistoryShippingOptions {
  redis: RedisConnection;
  streamKey: string;
  /** The configured store; undefined (`history.store: none`): retention trims Redis on its own again. */
  store: HistoryStore | undefined;
  shipIntervalMs: number;
  logger: Logger;
  metrics: Metrics;
  /** Raises `history.store-failing` and resolves it. */
  alerts: Pick<Alerts, 'raise' | 'resolve'>;
}

/**
 * The worker role's part of the audit history: ships to the store with its metrics and alert, or,
 * with no store, lifts the shipped watermark a former configuration left, so retention is not
 * held back by a store nobody ships to. Returns the stop function.
 */
export async function startHistoryShipping(opts: HistoryShippingOptions): Promise<() => Promise<void>> {
  const { store, logger } = opts;
  if (!store) {
    if (await stopShippingWatermark(opts.redis, opts.streamKey))
      logger.warn('history.store is none: audit records are no longer shipped, and retention trims the audit stream without waiting for a store');
    return async () => undefined;
  }
  const shipper = new HistoryShipper({
    redis: opts.redis,
    streamKey: opts.streamKey,
    store,
    logger: logger.child({ part: 'history' }),
    intervalMs: opts.shipIntervalMs,
    onLag: (n) => opts.metrics.historyShipLag.set(n),
    onError: () => opts.metrics.historyShipErrors.inc(),
    alerts: opts.alerts,
  });
  await shipper.start();
  logger.info({ store: store.kind }, 'audit history: records are shipped to the store before retention trims them');
  return () => shipper.stop();
}
