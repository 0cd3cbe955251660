import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** Options of {@link SubscriberLease}. */
export interface SubscriberLeaseOptions {
  redis: Redis;
  /** Redis key of the lease (one per target). */
  key: string;
  logger: Logger;
  /** How long a lease lives without renewal; a dead holder is replaced after at most this. Default 3000 ms. */
  ttlMs?: number;
  /** How often the holder renews and the others try to take over. Default ttl/3. */
  renewEveryMs?: number;
  /** Name of this replica in logs and in the lease value. Default hostname:pid. */
  holder?: string;
}

// The second branch lets a replica that stepped down (renewal stuck) take its own lease back.
const acquireScript = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return redis.call('INCR', KEYS[2])
end
return 0`;

const renewScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

const releaseScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

/**
 * A lease in Redis that makes exactly one replica the active subscriber of a target. Each
 * acquisition gets a fencing token (a counter that only grows): writers check `isCurrent()` before
 * writing, so a holder that stalled past its lease cannot write after a successor took over.
 * Emits 'acquired' (token) and 'lost'.
 */
export class SubscriberLease extends EventEmitter {
  private readonly value: string;
  private readonly ttlMs: number;
  private readonly everyMs: number;
  private timer: NodeJS.Timeout | undefined;
  private held = false;
  private token = 0;
  private ticking = false;
  private confirmedAt = 0;

  constructor(private readonly opts: SubscriberLeaseOptions) {
    super();
    this.ttlMs = opts.ttlMs ?? 3_000;
    this.everyMs = opts.renewEveryMs ?? Math.max(100, Math.floor(this.ttlMs / 3));
    this.value = `${opts.holder ?? `${process.pid}`}:${randomUUID()}`;
  }

  get isHeld(): boolean {
    return this.held;
  }

  get fencingToken(): number {
    return this.token;
  }

  /** Starts competing for the lease. */
  start(): void {
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.everyMs);
  }

  /** Stops competing and gives the lease up at once so a successor need not wait for expiry. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    if (this.held) {
      this.held = false;
      await this.opts.redis.eval(releaseScript, 1, this.opts.key, this.value).catch(() => undefined);
      this.emit('lost');
    }
  }

  /** Whether this replica still holds the lease right now (one round trip). */
  async isCurrent(): Promise<boolean> {
    if (!this.held) return false;
    return (await this.opts.redis.get(this.opts.key)) === this.value;
  }

  private async tick(): Promise<void> {
    const { redis, key, logger } = this.opts;
    // Redis commands queue while it is unreachable: a holder whose renewal is stuck past the TTL
    // can no longer prove it holds the lease and must stop reading, as a successor may have it.
    if (this.held && Date.now() - this.confirmedAt > this.ttlMs) {
      this.held = false;
      logger.warn({ key }, 'subscriber lease not renewed within its TTL (Redis unreachable?); stepping down');
      this.emit('lost');
    }
    if (this.ticking) return;
    this.ticking = true;
    try {
      await this.tickOnce();
    } finally {
      this.ticking = false;
    }
  }

  private async tickOnce(): Promise<void> {
    const { redis, key, logger } = this.opts;
    const startedAt = Date.now();
    try {
      if (this.held) {
        const ok = (await redis.eval(renewScript, 1, key, this.value, String(this.ttlMs))) === 1;
        if (ok && this.held) this.confirmedAt = startedAt;
        if (!ok && this.held) {
          this.held = false;
          logger.warn({ key }, 'subscriber lease lost to another replica');
          this.emit('lost');
        }
        return;
      }
      const token = Number(await redis.eval(acquireScript, 2, key, `${key}:fence`, this.value, String(this.ttlMs)));
      if (token > 0) {
        this.held = true;
        this.confirmedAt = startedAt;
        this.token = token;
        logger.info({ key, token }, 'subscriber lease acquired: this replica reads the event stream');
        this.emit('acquired', token);
      }
    } catch (err) {
      // Redis unreachable: a holder cannot prove it still holds the lease, so it stops reading.
      if (this.held) {
        this.held = false;
        this.emit('lost');
      }
      logger.warn({ err: (err as Error).message }, 'subscriber lease check failed');
    }
  }
}
