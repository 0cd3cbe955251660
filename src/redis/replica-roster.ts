import type { RedisConnection } from './connect.js';
import { LuaScript } from './script.js';

// Adds or refreshes a member (scored by when its heartbeat runs out, on Redis' clock, so the
// replicas' clocks need not agree), drops the members whose heartbeat ran out, counts the rest.
// KEYS: roster. ARGV: member, ttl (ms).
const beatScript = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 4)
return redis.call('ZCARD', KEYS[1])`);

// The members whose heartbeat has not run out. KEYS: roster.
const liveScript = new LuaScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf')`);

/**
 * A roster of live replicas in one sorted set (`key`): each member beats at least once per `ttlMs`
 * and drops out when it stops. The subscriber leases count the replicas sharing them in one, and
 * `reflex rules reload` finds the replicas holding rules in another.
 */
export class ReplicaRoster {
  constructor(
    private readonly redis: RedisConnection,
    private readonly key: string,
  ) {}

  /** Adds or refreshes `member` for `ttlMs` (and drops the members whose heartbeat ran out); answers how many are live. */
  async beat(member: string, ttlMs: number): Promise<number> {
    return Number(await beatScript.run(this.redis, [this.key], [member, ttlMs]));
  }

  /** The live members. */
  async live(): Promise<string[]> {
    return (await liveScript.run(this.redis, [this.key], [])) as string[];
  }

  /** Takes `member` off at once, so the others need not wait for its heartbeat to run out. */
  async leave(member: string): Promise<void> {
    await this.redis.zrem(this.key, member);
  }
}
