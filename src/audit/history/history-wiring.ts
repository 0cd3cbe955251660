import type { Logger } from 'pino';
import type { Alerts } from '../../alerts/alerts.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { RedisConnection } from '../../redis/connect.js';
import { HistoryHealth, type HistoryVerdict } from './history-health.js';
import { HistoryShipper, stopShippingWatermark } from './history-shipper.js';
import type { HistoryStore } from './history-store.js';

/** Options of {@link startHistoryShipping}. */
export interface HistoryShippingOptions {
  redis: RedisConnection;
  streamKey: string;
  /** The configured store; undefined (`history.store: none`): retention trims Redis on its own again. */
  store: HistoryStore | undefined;
  /** Whether /readyz fails while the store does not answer (`history.required`). */
  required: boolean;
  shipIntervalMs: number;
  logger: Logger;
  metrics: Metrics;
  /** Raises `history.store-failing` and resolves it. */
  alerts: Pick<Alerts, 'raise' | 'resolve'>;
}

/** History shipping as it runs: its stop, and what /readyz checks of the store (none without one). */
export interface RunningHistoryShipping {
  stop(): Promise<void>;
  readiness?: { required: boolean; check(): Promise<HistoryVerdict> };
}

/**
 * The worker role's part of the audit history: ships to the store with its metrics and alert, or,
 * with no store, lifts the shipped watermark a former configuration left, so retention is not
 * held back by a store nobody ships to. /readyz reads the store and how this process's last
 * shipment went.
 */
export async function startHistoryShipping(opts: HistoryShippingOptions): Promise<RunningHistoryShipping> {
  const { store, logger } = opts;
  if (!store) {
    if (await stopShippingWatermark(opts.redis, opts.streamKey))
      logger.warn('history.store is none: audit records are no longer shipped, and retention trims the audit stream without waiting for a store');
    return { stop: async () => undefined };
  }
  const health = new HistoryHealth(store, { onVerdict: (v) => opts.metrics.historyStoreUp.set({ store: store.kind }, v.up ? 1 : 0) });
  const shipper = new HistoryShipper({
    redis: opts.redis,
    streamKey: opts.streamKey,
    store: health.observed(),
    logger: logger.child({ part: 'history' }),
    intervalMs: opts.shipIntervalMs,
    onLag: (n) => opts.metrics.historyShipLag.set(n),
    onError: () => opts.metrics.historyShipErrors.inc(),
    alerts: opts.alerts,
  });
  await shipper.start();
  logger.info({ store: store.kind }, 'audit history: records are shipped to the store before retention trims them');
  return { stop: () => shipper.stop(), readiness: { required: opts.required, check: () => health.check() } };
}
