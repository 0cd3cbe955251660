import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LuaScript } from './script.js';

const releaseScript = new LuaScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`);
const renewScript = new LuaScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`);

/** A held lock; `release` is safe to call twice. */
export interface HeldLock {
  release(): Promise<void>;
}

/**
 * Exclusive lock on one instance across all rules and replicas, so two actions never interleave
 * their calls on the same instance. The lock expires by itself if its holder dies, and is renewed
 * while the holder works.
 */
export class InstanceLock {
  constructor(
    private readonly redis: Redis,
    private readonly ttlMs = 30_000,
  ) {}

  /** Takes the lock, or returns undefined when someone else holds it. */
  async tryAcquire(key: string): Promise<HeldLock | undefined> {
    const token = randomUUID();
    const ok = await this.redis.set(key, token, 'PX', this.ttlMs, 'NX');
    if (ok !== 'OK') return undefined;
    const renew = setInterval(() => {
      renewScript.run(this.redis, [key], [token, String(this.ttlMs)]).catch(() => undefined);
    }, this.ttlMs / 3);
    renew.unref();
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(renew);
        await releaseScript.run(this.redis, [key], [token]);
      },
    };
  }
}
