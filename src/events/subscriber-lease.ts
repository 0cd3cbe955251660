import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { RedisConnection } from '../redis/connect.js';
import type { Logger } from 'pino';
import { LuaScript } from '../redis/script.js';
import { TokenLock, type HeldLock } from '../redis/token-lock.js';

/** Options of {@link SubscriberLease}. */
export interface SubscriberLeaseOptions {
  redis: RedisConnection;
  /** Redis key of the lease (one per target). */
  key: string;
  /** Its fencing counter. */
  fenceKey: string;
  /** Set while the lease is vacant (see the class comment). */
  vacantKey: string;
  logger: Logger;
  /** How long a lease lives without renewal; a dead holder is replaced after about this. Default 3000 ms. */
  ttlMs?: number;
  /** How often the holder renews and the others look for a vacancy. Default ttl/3. */
  renewEveryMs?: number;
  /** Name of this replica in logs and in the lease value. Default the pid. */
  holder?: string;
  /**
   * Asked before taking a free lease, with how long this replica has seen it free: the replicas'
   * fair shares (LeaseSpread). Default: always take it.
   */
  mayTake?: (vacantForMs: number) => boolean;
}

// A lease that lapsed (its holder stopped renewing) may be taken only once it has been seen vacant
// for a while: the previous holder, cut off from Redis for longer than the TTL, gets the first
// chance to take it back under its own fencing token with its buffered frames. A lease never held
// (no fence yet) or released cleanly ('0') is free at once. Answers 1 when the caller may try.
// KEYS: lease, vacant marker, fence. ARGV: marker TTL, grace (ms).
const vacancyScript = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('DEL', KEYS[2])
  return 0
end
if redis.call('EXISTS', KEYS[3]) == 0 then return 1 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local since = redis.call('GET', KEYS[2])
if since == '0' then return 1 end
if not since then
  redis.call('SET', KEYS[2], now, 'PX', ARGV[1])
  return 0
end
if now - tonumber(since) < tonumber(ARGV[2]) then return 0 end
return 1`);

/**
 * A lease in Redis that makes exactly one replica the writer of a target's event stream, built on
 * the token lock with a fencing token (a counter that only grows). Every replica reads the stream
 * (followers keep a window of recent frames); only the holder writes, and it checks the lease
 * before each write.
 *
 * When the holder cannot reach Redis it does not step down: it is in doubt, keeps reading and
 * buffering, and once Redis answers it either still holds the lease (or takes it back under the
 * same fencing token, if nobody took it meanwhile) and writes its buffer, or learns that a
 * successor holds it (whose window covers the gap) and becomes a follower.
 *
 * Emits 'acquired' (fencing token), 'doubt', 'confirmed' and 'lost'.
 */
export class SubscriberLease extends EventEmitter {
  private readonly value: string;
  private readonly ttlMs: number;
  private readonly everyMs: number;
  private readonly locks: TokenLock;
  private timer: NodeJS.Timeout | undefined;
  private lock: HeldLock | undefined;
  private ticking = false;
  /** When this replica first saw the lease free and left it to others (mayTake); 0: not seen free. */
  private freeSince = 0;

  constructor(private readonly opts: SubscriberLeaseOptions) {
    super();
    this.ttlMs = opts.ttlMs ?? 3_000;
    this.everyMs = opts.renewEveryMs ?? Math.max(100, Math.floor(this.ttlMs / 3));
    this.value = `${opts.holder ?? `${process.pid}`}:${randomUUID()}`;
    this.locks = new TokenLock(opts.redis, { ttlMs: this.ttlMs, renewEveryMs: this.everyMs });
  }

  /** Whether this replica holds the lease (possibly in doubt). */
  get isHeld(): boolean {
    return this.lock !== undefined;
  }

  get fencingToken(): number {
    return this.lock?.fence ?? 0;
  }

  /** Starts competing for the lease. */
  start(): void {
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.everyMs);
  }

  /** Stops competing and gives the lease up at once so a successor need not wait for expiry. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.handOver();
  }

  /**
   * Gives the lease up at once (free for another replica without waiting for expiry) and follows;
   * keeps competing. The caller writes what it buffered first: frames read after are in the
   * successor's window.
   */
  async handOver(): Promise<void> {
    const lock = this.lock;
    if (!lock) return;
    this.lock = undefined;
    await lock.release();
    // Released, not lapsed: a follower may take it at once.
    await this.opts.redis.set(this.opts.vacantKey, '0', 'PX', this.ttlMs * 4).catch(() => undefined);
    this.emit('lost');
  }

  /**
   * Whether this replica may write now: asks Redis (one round trip), taking the lease back under
   * the same fencing token when it lapsed while nobody else claimed it. While Redis is unreachable
   * this waits for it, so the caller keeps its frames.
   */
  async isCurrent(): Promise<boolean> {
    const lock = this.lock;
    if (!lock) return false;
    return lock.confirm();
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.lock) return;
    this.ticking = true;
    try {
      const { redis, key, vacantKey, fenceKey, logger } = this.opts;
      if (Number(await vacancyScript.run(redis, [key, vacantKey, fenceKey], [String(this.ttlMs * 4), String(this.everyMs)])) !== 1) {
        this.freeSince = 0;
        return;
      }
      const now = Date.now();
      if (this.opts.mayTake && !this.opts.mayTake(this.freeSince ? now - this.freeSince : 0)) {
        this.freeSince ||= now;
        return;
      }
      this.freeSince = 0;
      const lock = await this.locks.tryAcquire(key, { fenceKey, token: this.value });
      if (!lock) return;
      this.lock = lock;
      lock.on('doubt', () => {
        logger.warn({ key }, 'subscriber lease cannot be confirmed (Redis unreachable?): in doubt, still reading and buffering');
        this.emit('doubt');
      });
      lock.on('confirmed', (how: string) => {
        logger.info({ key, how }, 'subscriber lease confirmed again');
        this.emit('confirmed');
      });
      lock.on('lost', () => {
        if (this.lock !== lock) return;
        this.lock = undefined;
        logger.warn({ key }, 'subscriber lease held by another replica: following');
        this.emit('lost');
      });
      logger.info({ key, token: lock.fence }, 'subscriber lease acquired: this replica writes the event stream');
      this.emit('acquired', lock.fence);
    } catch (err) {
      this.opts.logger.warn({ err }, 'subscriber lease check failed');
    } finally {
      this.ticking = false;
    }
  }
}
