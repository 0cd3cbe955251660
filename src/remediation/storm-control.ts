import type { Redis } from 'ioredis';
import type { CanonicalEvent } from '../events/canonical-event.js';
import { StatusCode } from '../client/status-code.js';
import { LuaScript } from '../redis/script.js';

/** When many instances on one member fail together, Reflex stops remediating them one by one. */
export interface StormPolicy {
  /** Distinct failing instances on one member within `windowMs` that make a storm. Default 10. */
  threshold?: number;
  /** The sliding window. Default 60 000 ms. */
  windowMs?: number;
}

/** What storm control says about one failure. */
export type StormVerdict =
  | { storm: false; failures: number }
  /** `alert` is true for exactly one caller per storm: the one that raises the grouped alert. */
  | { storm: true; failures: number; alert: boolean; since: number; instances: string[] };

/**
 * KEYS: failures (zset member → time), storm (hash). ARGV: now, windowMs, threshold, member, who.
 * The storm hash is refreshed for another window each time the threshold is met, so a storm ends
 * one window after the last moment it had `threshold` distinct failures in a window.
 * Returns {state, failures, since, alerter}: state 0 no storm, 1 storm.
 */
const recordScript = new LuaScript(`
local now, windowMs, threshold = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if ARGV[4] ~= '' then redis.call('ZADD', KEYS[1], now, ARGV[4]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - windowMs)
redis.call('PEXPIRE', KEYS[1], windowMs)
local n = redis.call('ZCARD', KEYS[1])
if ARGV[5] == '' then return {0, n, 0, ''} end
if n >= threshold then
  redis.call('HSETNX', KEYS[2], 'since', now)
  redis.call('HSETNX', KEYS[2], 'alerter', ARGV[5])
  redis.call('PEXPIRE', KEYS[2], windowMs)
end
if redis.call('EXISTS', KEYS[2]) == 0 then return {0, n, 0, ''} end
local h = redis.call('HMGET', KEYS[2], 'since', 'alerter')
return {1, n, tonumber(h[1]), h[2]}`);

/** Whether an event is an instance failing: a stop nobody asked for (or seen only by a resync), or Error. */
export function isFailure(event: CanonicalEvent): boolean {
  if (event.kind !== 'instance.status') return false;
  if (event.to === StatusCode.Error) return true;
  return event.to === StatusCode.Stopped && (event.intent === 'unrequested' || event.intent === 'unknown');
}

/**
 * Counts distinct failing instances per (target, cluster member) in a sliding window, in Redis so
 * replicas share it. A standalone server is one member, "none".
 */
export class StormControl {
  readonly threshold: number;
  readonly windowMs: number;

  constructor(
    private readonly redis: Redis,
    private readonly keys: { failures: (target: string, location: string) => string; storm: (target: string, location: string) => string },
    policy: StormPolicy = {},
  ) {
    this.threshold = policy.threshold ?? 10;
    this.windowMs = policy.windowMs ?? 60_000;
  }

  /** Counts a failure without deciding anything (events no rule acts on still make a storm). */
  async observe(event: CanonicalEvent, now = Date.now()): Promise<void> {
    if (!isFailure(event) || event.kind !== 'instance.status') return;
    await this.run(event, `${event.project}/${event.instance}`, '', now);
  }

  /** Whether the event's member is in a storm now (declared, or at the threshold of failures). */
  async inStorm(event: CanonicalEvent): Promise<boolean> {
    const [declared, failures] = await Promise.all([
      this.redis.exists(this.keys.storm(event.target, event.location)),
      this.redis.zcard(this.keys.failures(event.target, event.location)),
    ]);
    return declared === 1 || failures >= this.threshold;
  }

  /**
   * Counts the failure and says whether the member is in a storm. `who` (rule and incident) names
   * the caller; the first caller of a storm is told to raise its alert, and so is the same caller
   * again (a redelivered event), never another.
   */
  async check(event: CanonicalEvent, instance: string, who: string, now = Date.now()): Promise<StormVerdict> {
    const [state, n, since, alerter] = await this.run(event, `${event.project}/${instance}`, who, now);
    if (state === 0) return { storm: false, failures: n };
    const instances = await this.redis.zrange(this.keys.failures(event.target, event.location), '0', '-1');
    return { storm: true, failures: n, alert: alerter === who, since, instances };
  }

  private async run(event: CanonicalEvent, member: string, who: string, now: number): Promise<[number, number, number, string]> {
    return (await recordScript.run(this.redis, [this.keys.failures(event.target, event.location), this.keys.storm(event.target, event.location)], [String(now), String(this.windowMs), String(this.threshold), member, who])) as [number, number, number, string];
  }
}
