import type { RedisConnection } from '../redis/connect.js';
import { LuaScript } from '../redis/script.js';
import type { CrashLoopPolicy } from '../rules/rule.js';

export type { CrashLoopPolicy };

/** What the budget allows for one more restart. */
export type BudgetVerdict =
  | { allowed: true; restartNumber: number; delayMs: number }
  | { allowed: false; restarts: number; newlyQuarantined: boolean };

// One script, so replicas deciding on the same instance at the same moment agree.
const reserveScript = new LuaScript(`
local now = tonumber(ARGV[1])
local windowMs, maxRestarts = tonumber(ARGV[2]), tonumber(ARGV[3])
local initial, maxBackoff = tonumber(ARGV[4]), tonumber(ARGV[5])
local resetAfter, quarantineMs = tonumber(ARGV[6]), tonumber(ARGV[7])
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {-1, redis.call('ZCARD', KEYS[1])}
end
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] and now - tonumber(last[2]) > resetAfter then redis.call('DEL', KEYS[1]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - windowMs)
local n = redis.call('ZCARD', KEYS[1])
if redis.call('ZSCORE', KEYS[1], ARGV[8]) then
  return {redis.call('ZRANK', KEYS[1], ARGV[8]) + 1, tonumber(redis.call('HGET', KEYS[3], ARGV[8]) or '0')}
end
if n >= maxRestarts then
  redis.call('SET', KEYS[2], now, 'PX', quarantineMs)
  return {-2, n}
end
redis.call('ZADD', KEYS[1], now, ARGV[8])
redis.call('PEXPIRE', KEYS[1], math.max(windowMs, resetAfter))
local delay = 0
if n > 0 then delay = math.min(maxBackoff, initial * math.pow(2, n - 1)) end
redis.call('HSET', KEYS[3], ARGV[8], delay)
redis.call('PEXPIRE', KEYS[3], math.max(windowMs, resetAfter))
return {n + 1, delay}`);

/** Restart budgets per instance, shared by all replicas through Redis. */
export class CrashLoopBudget {
  constructor(private readonly redis: RedisConnection) {}

  /**
   * Reserves one restart for an incident. The same incident id reserves only once (a duplicate
   * or resumed event counts once, and gets the back-off it got the first time).
   */
  async reserve(keys: { restarts: string; quarantine: string }, incident: string, policy: CrashLoopPolicy, now = Date.now()): Promise<BudgetVerdict> {
    const p = withDefaults(policy);
    const [a, b] = (await reserveScript.run(this.redis, [keys.restarts, keys.quarantine, `${keys.restarts}:delays`], [String(now), String(p.windowMs), String(p.maxRestarts), String(p.initialBackoffMs), String(p.maxBackoffMs), String(p.resetAfterMs), String(p.quarantineMs), incident])) as [number, number];
    if (a === -1) return { allowed: false, restarts: b, newlyQuarantined: false };
    if (a === -2) return { allowed: false, restarts: b, newlyQuarantined: true };
    return { allowed: true, restartNumber: a, delayMs: b };
  }

  /** Lifts a quarantine and forgets the restart history. */
  async release(keys: { restarts: string; quarantine: string }): Promise<boolean> {
    const n = await this.redis.del(keys.quarantine, keys.restarts, `${keys.restarts}:delays`);
    return n > 0;
  }
}

export function withDefaults(p: CrashLoopPolicy): Required<CrashLoopPolicy> {
  return {
    maxRestarts: p.maxRestarts ?? 5,
    windowMs: p.windowMs ?? 600_000,
    initialBackoffMs: p.initialBackoffMs ?? 10_000,
    maxBackoffMs: p.maxBackoffMs ?? 300_000,
    resetAfterMs: p.resetAfterMs ?? 600_000,
    quarantineMs: p.quarantineMs ?? 3_600_000,
  };
}
