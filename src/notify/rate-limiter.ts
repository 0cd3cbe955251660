import type { RedisConnection } from '../redis/connect.js';
import type { NotifyKeys } from '../redis/key-space.js';

/**
 * Fixed-window limit on messages per receiver, shared by all replicas through one Redis counter
 * per window. `take` either admits a message or says when the next window opens.
 */
export class RateLimiter {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: NotifyKeys,
  ) {}

  /** Admits one message (`{ ok: true }`) or returns the time (ms epoch) to try again. */
  async take(receiver: string, limit: { count: number; windowMs: number }, now = Date.now()): Promise<{ ok: true } | { ok: false; retryAt: number }> {
    const window = Math.floor(now / limit.windowMs);
    const key = this.keys.rate(receiver, window);
    const [[, n]] = (await this.redis
      .multi()
      .incr(key)
      .pexpire(key, limit.windowMs * 2)
      .exec()) as [[null, number], [null, number]];
    if (n <= limit.count) return { ok: true };
    return { ok: false, retryAt: (window + 1) * limit.windowMs };
  }
}
