import type { RedisConnection } from '../redis/connect.js';
import { LuaScript } from '../redis/script.js';
import type { CrashLoopPolicy } from '../rules/rule.js';

export type { CrashLoopPolicy };

/** What the budget allows for one more restart. */
export type BudgetVerdict =
  { allowed: true; restartNumber: number; delayMs: number } | { allowed: false; restarts: number; newlyQuarantined: boolean };

// One script, so replicas deciding on the same instance at the same moment agree.
const reserveScript = new LuaScript(`
local now = tonumber(ARGV[1])
local windowMs, maxRestarts = tonumber(ARGV[2]), tonumber(ARGV[3])
local initial, maxBackoff = tonumber(ARGV[4]), tonumber(ARGV[5])
local resetAfter, quarantineMs = tonumber(ARGV[6]), tonumber(ARGV[7])
if ARGV[9] ~= '' then
  local held = redis.call('GET', KEYS[4])
  if held and held ~= ARGV[9] then redis.call('DEL', KEYS[1], KEYS[2], KEYS[3]) end
  redis.call('SET', KEYS[4], ARGV[9], 'PX', math.max(windowMs, resetAfter, quarantineMs))
end
local since = tonumber(redis.call('GET', KEYS[2]))
if since then
  -- Over quarantineMs after it began, on the caller's clock (the key's expiry only collects it).
  if now - since < quarantineMs then return {-1, redis.call('ZCARD', KEYS[1])} end
  redis.call('DEL', KEYS[2])
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

/** The keys of one instance's budget (the key space's `restarts` and `quarantine`). */
export interface BudgetKeys {
  restarts: string;
  quarantine: string;
}

/** Beside the restarts: the back-off each incident got, and the identity the history belongs to. */
const delaysKey = (k: BudgetKeys) => `${k.restarts}:delays`;
const identityKey = (k: BudgetKeys) => `${k.restarts}:identity`;

/**
 * Restart budgets per instance, shared by all replicas through Redis. Kept under the instance's
 * name (so `reflex quarantine release NAME` finds them) together with the identity of the instance
 * they belong to: a reservation for another instance under that name (deleted and re-created, or
 * renamed away and a new one made) drops the predecessor's restarts and quarantine first, in the
 * same script, so a new instance never inherits them.
 */
export class CrashLoopBudget {
  constructor(private readonly redis: RedisConnection) {}

  /**
   * Reserves one restart for an incident. The same incident id reserves only once (a duplicate
   * or resumed event counts once, and gets the back-off it got the first time). `identity` is the
   * instance's {@link identityToken}; empty (unknown) keeps whatever history the name has.
   */
  async reserve(keys: BudgetKeys, incident: string, policy: CrashLoopPolicy, now = Date.now(), identity = ''): Promise<BudgetVerdict> {
    const p = withDefaults(policy);
    const [a, b] = (await reserveScript.run(
      this.redis,
      [keys.restarts, keys.quarantine, delaysKey(keys), identityKey(keys)],
      [
        String(now),
        String(p.windowMs),
        String(p.maxRestarts),
        String(p.initialBackoffMs),
        String(p.maxBackoffMs),
        String(p.resetAfterMs),
        String(p.quarantineMs),
        incident,
        identity,
      ],
    )) as [number, number];
    if (a === -1) return { allowed: false, restarts: b, newlyQuarantined: false };
    if (a === -2) return { allowed: false, restarts: b, newlyQuarantined: true };
    return { allowed: true, restartNumber: a, delayMs: b };
  }

  /**
   * The quarantine under the name, if any: since when (ms), and the identity token of the instance
   * it was imposed on (null when unknown: kept before identities were, or never read).
   */
  async quarantine(keys: BudgetKeys): Promise<Quarantine | undefined> {
    const [since, holder] = await Promise.all([this.redis.get(keys.quarantine), this.redis.get(identityKey(keys))]);
    return since === null ? undefined : { since: Number(since), holder };
  }

  /**
   * Carries an instance's history (restarts, back-offs, quarantine and identity) from its old name
   * to its new one after a rename, unless the new name already holds another instance's. The two
   * names hash to different Redis Cluster slots, so this is a copy then a delete, not one script:
   * the rename's event is processed in the new name's order, before any crash under it.
   * Answers what moved: nothing (undefined), the history, or the history with a quarantine.
   */
  async move(from: BudgetKeys, to: BudgetKeys): Promise<'history' | 'quarantined' | undefined> {
    const r = this.redis;
    const [restarts, restartsTtl, delays, identity, quarantine, quarantineTtl, held] = await Promise.all([
      r.zrange(from.restarts, '0', '-1', 'WITHSCORES'),
      r.pttl(from.restarts),
      r.hgetall(delaysKey(from)),
      r.get(identityKey(from)),
      r.get(from.quarantine),
      r.pttl(from.quarantine),
      r.get(identityKey(to)),
    ]);
    if (!restarts.length && quarantine === null) return undefined;
    if (held !== null && identity !== null && held !== identity) return undefined;
    const ttl = (ms: number) => (ms > 0 ? ms : 3_600_000);
    const writes: Promise<unknown>[] = [];
    if (restarts.length) {
      const pairs: string[] = [];
      for (let i = 0; i + 1 < restarts.length; i += 2) pairs.push(restarts[i + 1]!, restarts[i]!);
      writes.push(r.zadd(to.restarts, ...pairs).then(() => r.pexpire(to.restarts, ttl(restartsTtl))));
      if (Object.keys(delays).length) writes.push(r.hset(delaysKey(to), delays).then(() => r.pexpire(delaysKey(to), ttl(restartsTtl))));
    }
    if (quarantine !== null) writes.push(r.set(to.quarantine, quarantine, 'PX', ttl(quarantineTtl)));
    if (identity !== null) writes.push(r.set(identityKey(to), identity, 'PX', ttl(Math.max(restartsTtl, quarantineTtl))));
    await Promise.all(writes);
    await r.del(from.restarts, delaysKey(from), identityKey(from), from.quarantine);
    return quarantine !== null ? 'quarantined' : 'history';
  }

  /** Lifts a quarantine and forgets the restart history. */
  async release(keys: BudgetKeys): Promise<boolean> {
    const n = await this.redis.del(keys.quarantine, keys.restarts, delaysKey(keys));
    await this.redis.del(identityKey(keys));
    return n > 0;
  }
}

/** A quarantine kept under an instance's name. */
export interface Quarantine {
  /** When it was imposed (ms). */
  since: number;
  /** The identity token of the instance it holds; null when unknown. */
  holder: string | null;
}

/**
 * Whether a quarantine under the name holds the instance whose identity token is `identity`: not
 * when it was imposed on another instance of that name. Unknown on either side counts as the same.
 */
export function quarantineHolds(q: Quarantine | undefined, identity: string): boolean {
  return q !== undefined && (identity === '' || q.holder === null || q.holder === identity);
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
