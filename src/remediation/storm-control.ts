import { systemClock, type Clock } from '../clock/clock.js';
import type { RedisConnection } from '../redis/connect.js';
import type { CanonicalEvent } from '../events/canonical-event.js';
import { StatusCode } from '../client/status-code.js';
import { LuaScript } from '../redis/script.js';

/**
 * When a rule's remediations keep failing on one member, Reflex stops hammering it. A storm is not
 * a count of crashes (many instances crashing together are all remediated, whatever order their
 * events arrive in) but of *failing remediations* per target, member and rule: an action of the
 * rule that gave up, or an instance the rule brought back that fails again within the window.
 */
export interface StormPolicy {
  /** Distinct instances on one member whose remediation by one rule failed within `windowMs` that make a storm. Default 10. */
  threshold?: number;
  /** The sliding window. Default 60 000 ms. */
  windowMs?: number;
}

/** What storm control says about one failure. */
export type StormVerdict =
  | { storm: false; failures: number }
  /** `alert` is true for exactly one caller per storm: the one that raises the grouped alert. */
  | { storm: true; failures: number; alert: boolean; since: number; instances: string[] };

/** Where a remediation happened: the instance, its member ("none" standalone) and the rule. */
export interface StormScope {
  target: string;
  location: string;
  project: string;
  instance: string;
  rule: string;
}

/** The keys of storm control; each per (target, member, rule) but `storms`, per (target, member). All share the target's hash tag. */
export interface StormKeys {
  /** Instances whose remediation failed, scored by time. */
  stormFailures(target: string, location: string, rule: string): string;
  /** Instances the rule remediated, scored by time (a failure within the window is a failing remediation). */
  stormRemediated(target: string, location: string, rule: string): string;
  /** Set while the rule is in a storm on the member: when it began and who raised its alert. */
  storm(target: string, location: string, rule: string): string;
  /** Rules in a storm on the member, scored by when it ends at the earliest. */
  storms(target: string, location: string): string;
}

/**
 * KEYS: failures (zset), remediated (zset), storm (hash), storms (zset).
 * ARGV: now, windowMs, threshold, instance, rule, who, failed.
 * `failed` '1': the instance's remediation failed outright; '0': the instance failed, which is a
 * failing remediation only when the rule remediated it within the window. `who` non-empty: the
 * caller raises the storm's alert if nobody has yet. The storm hash's `ends` moves a window past
 * `now` each time the threshold is met, so a storm ends one window after the last moment it had
 * `threshold` failing remediations in a window; `ends` is read against the caller's `now` (its
 * clock, as the window of failures is), the hash's expiry only collects it.
 * Returns {state, failures, since, alerter}: state 0 no storm, 1 storm.
 */
const recordScript = new LuaScript(`
local now, windowMs, threshold = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local instance, rule, who = ARGV[4], ARGV[5], ARGV[6]
local ends = tonumber(redis.call('HGET', KEYS[3], 'ends'))
if ends and ends <= now then redis.call('DEL', KEYS[3]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - windowMs)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - windowMs)
local failing = ARGV[7] == '1'
if not failing and redis.call('ZREM', KEYS[2], instance) == 1 then failing = true end
if failing then
  redis.call('ZADD', KEYS[1], now, instance)
  redis.call('PEXPIRE', KEYS[1], windowMs)
end
local n = redis.call('ZCARD', KEYS[1])
if n >= threshold then
  redis.call('HSETNX', KEYS[3], 'since', now)
  redis.call('HSET', KEYS[3], 'ends', now + windowMs)
  redis.call('PEXPIRE', KEYS[3], windowMs)
  redis.call('ZADD', KEYS[4], now + windowMs, rule)
  redis.call('PEXPIRE', KEYS[4], windowMs)
end
if redis.call('EXISTS', KEYS[3]) == 0 then return {0, n, 0, ''} end
if who ~= '' then redis.call('HSETNX', KEYS[3], 'alerter', who) end
local h = redis.call('HMGET', KEYS[3], 'since', 'alerter')
return {1, n, tonumber(h[1]), h[2] or ''}`);

/** KEYS: remediated (zset). ARGV: now, windowMs, instance. */
const remediatedScript = new LuaScript(`
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]), ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1`);

/** Whether an event is an instance failing: a stop nobody asked for (or seen only by a resync), or Error. */
export function isFailure(event: CanonicalEvent): boolean {
  if (event.kind !== 'instance.status') return false;
  if (event.to === StatusCode.Error) return true;
  return event.to === StatusCode.Stopped && (event.intent === 'unrequested' || event.intent === 'unknown');
}

/**
 * Counts failing remediations per (target, cluster member, rule) in a sliding window, in Redis so
 * replicas share it. A standalone server is one member, "none". The outcome depends on which
 * remediations failed, never on the order in which crashes arrive: crashes alone trip nothing, and
 * once a storm is declared every action of that rule on that member still waiting is held at the
 * moment it would act ({@link StormControl.holds}).
 */
export class StormControl {
  readonly threshold: number;
  readonly windowMs: number;

  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: StormKeys,
    policy: StormPolicy = {},
    /** The time the window and a storm's end are read against. Default: the wall clock. */
    private readonly clock: Clock = systemClock,
  ) {
    this.threshold = policy.threshold ?? 10;
    this.windowMs = policy.windowMs ?? 60_000;
  }

  /** Whether any rule is in a storm on the event's member (crash alerts are then grouped into the storm's). */
  async inStorm(event: CanonicalEvent, now = this.clock.now()): Promise<boolean> {
    // Scored by when each storm ends: one ending at `now` is over, as in holds().
    return (await this.redis.zcount(this.keys.storms(event.target, event.location), `(${now}`, '+inf')) > 0;
  }

  /** Whether the rule is in a storm on the member: its actions there are held. */
  async holds(scope: Omit<StormScope, 'project' | 'instance'>, now = this.clock.now()): Promise<boolean> {
    const [since, ends] = await this.redis.hmget(this.keys.storm(scope.target, scope.location, scope.rule), 'since', 'ends');
    // A storm recorded without `ends` (by an older Reflex) lasts as long as its hash.
    return since !== null && (ends === null || Number(ends) > now);
  }

  /**
   * An instance failed and the rule would act on it: a failing remediation if the rule brought it
   * back within the window. Says whether the rule is in a storm on the member. `who` (rule and
   * incident) names the caller; the first caller of a storm is told to raise its alert, and so is
   * the same caller again (a redelivered event), never another.
   */
  async check(scope: StormScope, who: string, now = this.clock.now()): Promise<StormVerdict> {
    return this.verdict(scope, who, false, now);
  }

  /** The rule's action on the instance failed for good: a failing remediation. */
  async failed(scope: StormScope, who: string, now = this.clock.now()): Promise<StormVerdict> {
    return this.verdict(scope, who, true, now);
  }

  /** The rule's action on the instance succeeded: a failure of the instance within the window counts against the rule. */
  async remediated(scope: StormScope, now = this.clock.now()): Promise<void> {
    await remediatedScript.run(
      this.redis,
      [this.keys.stormRemediated(scope.target, scope.location, scope.rule)],
      [String(now), String(this.windowMs), member(scope)],
    );
  }

  private async verdict(scope: StormScope, who: string, failed: boolean, now: number): Promise<StormVerdict> {
    const { target, location, rule } = scope;
    const keys = [
      this.keys.stormFailures(target, location, rule),
      this.keys.stormRemediated(target, location, rule),
      this.keys.storm(target, location, rule),
      this.keys.storms(target, location),
    ];
    const [state, n, since, alerter] = (await recordScript.run(this.redis, keys, [
      String(now),
      String(this.windowMs),
      String(this.threshold),
      member(scope),
      rule,
      who,
      failed ? '1' : '0',
    ])) as [number, number, number, string];
    if (state === 0) return { storm: false, failures: n };
    const instances = await this.redis.zrange(keys[0]!, '0', '-1');
    return { storm: true, failures: n, alert: who !== '' && alerter === who, since, instances };
  }
}

/**
 * The texts of a storm: the summary of a held action and the one grouped alert. One place, for the
 * gate (a failure while the rule is in a storm) and the executor (an action held or given up).
 */
export function describeStorm(
  s: Extract<StormVerdict, { storm: true }>,
  scope: Pick<StormScope, 'target' | 'location' | 'rule'>,
  policy: { threshold: number; windowMs: number },
): { summary: string; alert: string } {
  const where = stormPlace(scope);
  const within = `within ${Math.round(policy.windowMs / 1000)} s`;
  const names = s.instances.map((m) => m.slice(m.indexOf('/') + 1));
  const listed = names.length > 10 ? `${names.slice(0, 10).join(', ')} and ${names.length - 10} more` : names.join(', ');
  return {
    summary: `suppressed: storm: remediation by rule ${scope.rule} failed for ${s.failures} instances on ${where} ${within}; its actions there are held since ${new Date(s.since).toISOString()} (one grouped alert)`,
    alert: `storm: remediation by rule ${scope.rule} failed for ${s.failures} instances on ${where} ${within} (${listed}); Reflex stopped acting there for this rule until fewer than ${policy.threshold} remediations fail per window`,
  };
}

/** Where a storm is: the server of a standalone target, else the cluster member. */
function stormPlace(scope: Pick<StormScope, 'target' | 'location'>): string {
  return scope.location === 'none' ? `server ${scope.target}` : `member ${scope.location}`;
}

/** What an action held at the moment of acting by a storm declared after it was queued says. */
export function heldByStormSummary(scope: Pick<StormScope, 'target' | 'location' | 'rule'>): string {
  return `storm: remediation by rule ${scope.rule} keeps failing on ${stormPlace(scope)}; its actions there are held until the storm ends (one grouped alert)`;
}

function member(scope: Pick<StormScope, 'project' | 'instance'>): string {
  return `${scope.project}/${scope.instance}`;
}
