import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { RedisConnection } from './connect.js';
import { ReflexError } from '../errors/reflex-error.js';
import { LuaScript } from './script.js';

// KEYS[1] lock, KEYS[2] fence counter (optional: only real keys are passed, since an empty
// name would hash to another slot on a Redis Cluster); ARGV[1] token, ARGV[2] ttl ms.
// Returns the fencing token (the counter after INCR), or 0 when someone else holds the lock.
const acquireScript = new LuaScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if #KEYS > 1 then return redis.call('INCR', KEYS[2]) end
  return 1
end
return 0`);

// Renews the lock while it is ours. A lock that expired while its holder could not reach Redis is
// taken back under the same fencing token when nobody acquired it meanwhile (the counter has not
// moved): the holder's buffered work is then still the only writer's. 1 renewed, 2 reclaimed, 0 lost.
const renewScript = new LuaScript(`
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if (not v) and #KEYS > 1 and tonumber(redis.call('GET', KEYS[2]) or '0') == tonumber(ARGV[3]) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 2
end
return 0`);

const lockKeys = (key: string, fenceKey: string) => (fenceKey === '' ? [key] : [key, fenceKey]);

const releaseScript = new LuaScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`);

/** Deletes `key` only while it still holds `token` (a compare-and-delete); whether it did. */
export async function releaseIfHeld(redis: RedisConnection, key: string, token: string): Promise<boolean> {
  return (await releaseScript.run(redis, [key], [token])) === 1;
}

/** Options of {@link TokenLock}. */
export interface TokenLockOptions {
  /**
   * How long the lock outlives a holder that stopped renewing (died, or cannot reach Redis).
   * Default 5000 ms: a dead holder's lock blocks others for a few seconds at most.
   */
  ttlMs?: number;
  /** How often a holder renews. Default ttl / 3. */
  renewEveryMs?: number;
}

/**
 * A lock held in Redis. It is renewed in the background while held. `signal` aborts when the lock
 * is lost (someone else holds it) or when its holder could not confirm it for a whole TTL (Redis
 * unreachable): work guarded by it checks the signal before each step it must not do unguarded.
 * Emits 'doubt' (a renewal could not reach Redis), 'expired' (not confirmed for a whole TTL: the
 * signal aborts, renewals go on), 'confirmed' (renewed, or taken back under the same fencing token,
 * after a doubt) and 'lost' (someone else holds it; renewals stop).
 */
export class HeldLock extends EventEmitter {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private confirmedAt: number;
  private renewing = false;
  private released = false;
  private doubt = false;

  constructor(
    private readonly redis: RedisConnection,
    readonly key: string,
    readonly fenceKey: string,
    /** The random value stored in the lock. */
    readonly token: string,
    /** The fencing token (grows with each acquisition of this key); 1 without a fence key. */
    readonly fence: number,
    private readonly ttlMs: number,
    everyMs: number,
  ) {
    super();
    this.confirmedAt = Date.now();
    this.timer = setInterval(() => void this.renew(), everyMs);
    this.timer.unref();
  }

  /** Aborts when the lock can no longer be trusted (lost, or unconfirmed for a TTL). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Throws LOCK_LOST when the lock can no longer be trusted: call it just before acting. */
  check(): void {
    if (Date.now() - this.confirmedAt > this.ttlMs) this.expire();
    if (this.signal.aborted) throw this.signal.reason as Error;
  }

  /** Asks Redis now whether the lock is still ours (taking it back under the same fence if it lapsed unclaimed). */
  async confirm(): Promise<boolean> {
    if (this.released) return false;
    const startedAt = Date.now();
    const res = Number(await renewScript.run(this.redis, lockKeys(this.key, this.fenceKey), [this.token, String(this.ttlMs), String(this.fence)]));
    if (res === 0) {
      this.lose();
      return false;
    }
    this.confirmed(startedAt, res);
    return true;
  }

  /** Gives the lock up; safe to call twice. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    clearInterval(this.timer);
    await releaseScript.run(this.redis, [this.key], [this.token]).catch(() => undefined);
  }

  private abort(why: string): void {
    if (!this.signal.aborted) this.controller.abort(new ReflexError('LOCK_LOST', `lock ${this.key} ${why}`));
  }

  private expire(): void {
    if (this.signal.aborted) return;
    this.abort('not confirmed within its TTL (Redis unreachable?)');
    this.emit('expired');
  }

  private lose(): void {
    if (this.released) return;
    clearInterval(this.timer);
    this.released = true;
    this.abort('taken by another holder');
    this.emit('lost');
  }

  private confirmed(startedAt: number, res: number): void {
    this.confirmedAt = Math.max(this.confirmedAt, startedAt);
    if (this.doubt) {
      this.doubt = false;
      this.emit('confirmed', res === 2 ? 'reclaimed' : 'renewed');
    }
  }

  private async renew(): Promise<void> {
    if (this.released || this.renewing) return;
    if (Date.now() - this.confirmedAt > this.ttlMs) {
      this.doubt = true;
      this.expire();
    }
    this.renewing = true;
    const startedAt = Date.now();
    try {
      const res = Number(await renewScript.run(this.redis, lockKeys(this.key, this.fenceKey), [this.token, String(this.ttlMs), String(this.fence)]));
      if (this.released) return;
      if (res === 0) return this.lose();
      this.confirmed(startedAt, res);
    } catch {
      if (!this.doubt) {
        this.doubt = true;
        this.emit('doubt');
      }
    } finally {
      this.renewing = false;
    }
  }
}

/**
 * The one lock of the code base: instance locks, the subscriber lease and the schedule's tick
 * lock are all this. A holder that dies stops renewing and its lock expires after the TTL.
 */
export class TokenLock {
  private readonly ttlMs: number;
  private readonly everyMs: number;

  constructor(
    private readonly redis: RedisConnection,
    opts: TokenLockOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 5_000;
    this.everyMs = opts.renewEveryMs ?? Math.max(50, Math.floor(this.ttlMs / 3));
  }

  /**
   * Takes the lock, or answers undefined when someone else holds it. With `fenceKey`, each
   * acquisition increments that counter and the held lock carries the new value.
   */
  async tryAcquire(key: string, opts: { fenceKey?: string; token?: string } = {}): Promise<HeldLock | undefined> {
    const token = opts.token ?? randomUUID();
    const fence = Number(await acquireScript.run(this.redis, lockKeys(key, opts.fenceKey ?? ''), [token, String(this.ttlMs)]));
    if (fence === 0) return undefined;
    return new HeldLock(this.redis, key, opts.fenceKey ?? '', token, fence, this.ttlMs, this.everyMs);
  }

  /** Waits up to `waitMs` for the lock; undefined when it stayed taken. */
  async acquire(key: string, waitMs: number, pollMs = 100): Promise<HeldLock | undefined> {
    const end = Date.now() + waitMs;
    for (;;) {
      const held = await this.tryAcquire(key);
      if (held || Date.now() >= end) return held;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }
}
