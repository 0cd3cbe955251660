import type { Logger } from 'pino';
import type { Alerts } from '../../alerts/alerts.js';
import type { AlertKind } from '../../alerts/catalogue.js';
import { ReflexError } from '../../errors/reflex-error.js';
import type { RedisConnection } from '../../redis/connect.js';
import { TokenLock, type HeldLock } from '../../redis/token-lock.js';
import { chainKey } from '../audit-chain.js';
import type { HistoryEntry, HistoryStore } from './history-store.js';

/** The alert kind of a history store that does not take records. */
export const historyStoreFailingKind = 'history.store-failing' satisfies AlertKind;

/** Options of {@link HistoryShipper}. */
export interface HistoryShipperOptions {
  redis: RedisConnection;
  /** The audit stream's key. */
  streamKey: string;
  store: HistoryStore;
  logger: Logger;
  /** How often the shipper looks for records to ship (and retries a failing store). Default 5000 ms. */
  intervalMs?: number;
  /** Records per batch written to the store. Default 1000. */
  batch?: number;
  /** Lifetime of the shipper's lock: another replica takes over about this long after the holder dies. Default 10 000 ms. */
  lockTtlMs?: number;
  /** Called with the records not yet shipped after each round, and once per failed round. */
  onLag?: (records: number) => void;
  onError?: () => void;
  /** Raises `history.store-failing` and resolves it. */
  alerts: Pick<Alerts, 'raise' | 'resolve'>;
}

/**
 * Moves audit records from the Redis stream to the history store before retention drops them: in
 * order, in batches, from the store's newest record on (the store's head is the authoritative
 * watermark), then mirrors that watermark in the chain hash (`shipped-id`), past which the append
 * script never trims. One replica ships at a time (a token lock); the others stand by. A store
 * that fails is logged, counted and alerted once (`history.store-failing`), retried each interval,
 * and resolved by the first round that ships again; meanwhile Redis keeps what is not shipped.
 */
export class HistoryShipper {
  private readonly intervalMs: number;
  private readonly batch: number;
  private readonly locks: TokenLock;
  private readonly lockKey: string;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private held: HeldLock | undefined;
  private failing = false;
  private stopped = true;
  private opened = false;

  constructor(private readonly opts: HistoryShipperOptions) {
    this.intervalMs = opts.intervalMs ?? 5_000;
    this.batch = opts.batch ?? 1000;
    this.locks = new TokenLock(opts.redis, { ttlMs: opts.lockTtlMs ?? 10_000 });
    this.lockKey = `${opts.streamKey}:shipper`;
  }

  /**
   * Marks the stream as shipped from (`shipped-id`, `0-0` while nothing is), so
   * trimming waits for the store from now on even before this replica holds the lock; then ships
   * each interval (the first round opens the store: one that is down at start is a failing round).
   */
  async start(): Promise<void> {
    // A Redis that refuses writes now (full, read-only) must not stop the worker from starting: it
    // says so on /readyz, and each round marks the stream again (shipAll) once writes are taken.
    await this.opts.redis.hsetnx(chainKey(this.opts.streamKey), 'shipped-id', '0-0').catch((err: unknown) => {
      this.opts.logger.warn({ err }, 'could not mark the audit stream as shipped from; the first round that ships marks it');
    });
    this.stopped = false;
    const tick = () => {
      this.running = this.round().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.intervalMs);
      });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.held?.release();
    this.held = undefined;
  }

  /** One round: takes the lock if free, then ships all there is. Failures are reported, not thrown. */
  async round(): Promise<void> {
    try {
      if (!this.held || this.held.signal.aborted) {
        await this.held?.release();
        this.held = await this.locks.tryAcquire(this.lockKey);
        if (!this.held) return;
      }
      if (!this.opened) {
        await this.opts.store.open();
        this.opened = true;
      }
      await this.shipAll(this.held);
      if (this.failing) {
        this.failing = false;
        const summary = `the ${this.opts.store.kind} history store takes audit records again`;
        this.opts.logger.info({ store: this.opts.store.kind }, summary);
        await this.alert('resolved', summary);
      }
    } catch (err) {
      // Another replica took the lock (this one stalled past its TTL): it ships now; nothing failed.
      if (err instanceof ReflexError && err.code === 'LOCK_LOST') {
        this.opts.logger.warn({ err }, 'history shipping lock lost: another replica ships the audit records');
        this.held = undefined;
        return;
      }
      this.opts.onError?.();
      const lag = await this.unshipped().catch(() => undefined);
      if (lag !== undefined) this.opts.onLag?.(lag);
      const summary = `the ${this.opts.store.kind} history store fails (${(err as Error).message}); Redis keeps the ${lag ?? 'unknown number of'} audit records not shipped, and its audit stream grows until the store takes them`;
      this.opts.logger.error({ err, store: this.opts.store.kind, unshipped: lag }, 'history store failing');
      if (!this.failing) {
        // Marked failing only once the alert went out: an alert path that fails too is tried again next round, and said.
        await this.alert('firing', summary).then(
          () => (this.failing = true),
          (alertErr: unknown) => this.opts.logger.error({ err: alertErr }, 'could not raise history.store-failing; trying again at the next round'),
        );
      }
    }
  }

  /** Ships every record there is now; throws when the store or Redis fails. */
  async shipAll(lock?: HeldLock): Promise<number> {
    const { redis, streamKey, store } = this.opts;
    let head = await store.head();
    await redis.hset(chainKey(streamKey), 'shipped-id', head?.id ?? '0-0');
    let shipped = 0;
    for (;;) {
      const rows = await redis.xrange(streamKey, head ? `(${head.id}` : '-', '+', 'COUNT', this.batch);
      const entries = rows.map(([id, fields]) => toEntry(id, fields));
      if (!entries.length) break;
      if (head && entries[0]!.prev !== head.hash) {
        throw new Error(
          `the oldest unshipped record ${entries[0]!.id} does not follow the store's newest ${head.id}: records between them left Redis unshipped`,
        );
      }
      lock?.check();
      await store.append(entries);
      const last = entries.at(-1)!;
      head = { id: last.id, hash: last.hash };
      await redis.hset(chainKey(streamKey), 'shipped-id', head.id);
      shipped += entries.length;
      if (entries.length < this.batch) break;
    }
    this.opts.onLag?.(0);
    return shipped;
  }

  /** Records in Redis after the shipped watermark. */
  private async unshipped(): Promise<number> {
    const { redis, streamKey } = this.opts;
    const shipped = (await redis.hget(chainKey(streamKey), 'shipped-id')) ?? '0-0';
    let n = 0;
    let from = `(${shipped}`;
    for (;;) {
      const rows = await redis.xrange(streamKey, from, '+', 'COUNT', 10_000);
      n += rows.length;
      if (rows.length < 10_000) return n;
      from = `(${rows.at(-1)![0]}`;
    }
  }

  private async alert(status: 'firing' | 'resolved', summary: string): Promise<void> {
    const alert = {
      kind: historyStoreFailingKind,
      severity: 'critical',
      summary,
      target: '',
      project: '',
      instance: `history:${this.opts.store.kind}`,
      correlationId: `history:${this.opts.streamKey}`,
    } as const;
    await (status === 'firing' ? this.opts.alerts.raise(alert) : this.opts.alerts.resolve(alert));
  }
}

/**
 * Lets retention trim the audit stream on its own again (no history store configured): removes
 * `shipped-id`. Answers whether it was set.
 */
export async function stopShippingWatermark(redis: RedisConnection, streamKey: string): Promise<boolean> {
  return (await redis.hdel(chainKey(streamKey), 'shipped-id')) > 0;
}

function toEntry(id: string, fields: string[]): HistoryEntry {
  const e: HistoryEntry = { id, json: '', prev: '', hash: '' };
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const k = fields[i];
    if (k === 'json' || k === 'prev' || k === 'hash') e[k] = fields[i + 1]!;
  }
  return e;
}
