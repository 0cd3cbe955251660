import type { Redis } from 'ioredis';
import type { KeySpace } from '../redis/key-space.js';
import { LuaScript } from '../redis/script.js';

const compareAndSet = new LuaScript(`local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local at = tonumber(cjson.decode(cur)['at'])
  if at > tonumber(ARGV[3]) then return {0, cur} end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return {1, cur or false}`);

/** What the tracker knows of one instance. */
export interface TrackedStatus {
  status: number;
  /** Timestamp (ms) of the event or read that set it; older news never overwrites newer. */
  at: number;
  project: string;
  /** Where it came from: an event of the stream, or a read of the instance (resync, confirmation). */
  source?: 'event' | 'read';
  /** Id of the event that set it, so a redelivered event is recognised. */
  eventId?: string;
}

/**
 * Last known status of every instance of a target, in Redis so replicas and restarts share it.
 * Updates carry a timestamp and are applied only if newer, so a reordered pair of events never
 * rolls the state back.
 */
export class StateTracker {
  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
  ) {}

  private field(project: string, instance: string): string {
    return `${project}/${instance}`;
  }

  async get(target: string, project: string, instance: string): Promise<TrackedStatus | undefined> {
    const raw = await this.redis.hget(this.keys.state(target), this.field(project, instance));
    return raw ? (JSON.parse(raw) as TrackedStatus) : undefined;
  }

  /**
   * Records a status if it is newer than what is stored. Returns the previous status and whether
   * the update was applied (false: the news was older than what is known).
   */
  async update(
    target: string,
    project: string,
    instance: string,
    status: number,
    at: number,
    origin: { source?: 'event' | 'read'; eventId?: string } = {},
  ): Promise<{ applied: boolean; previous?: TrackedStatus }> {
    const key = this.keys.state(target);
    const field = this.field(project, instance);
    // Compare-and-set in one Lua call so two workers racing on the same instance stay ordered.
    const res = (await compareAndSet.run(this.redis, [key], [field, JSON.stringify({ status, at, project, ...origin }), String(at)])) as [number, string | null | false];
    const previous = res[1] ? (JSON.parse(res[1]) as TrackedStatus) : undefined;
    return { applied: res[0] === 1, previous };
  }

  /** Every tracked instance of a target, keyed `project/name`. */
  async all(target: string): Promise<Map<string, TrackedStatus>> {
    const raw = await this.redis.hgetall(this.keys.state(target));
    return new Map(Object.entries(raw).map(([k, v]) => [k, JSON.parse(v) as TrackedStatus]));
  }

  async forget(target: string, project: string, instance: string): Promise<void> {
    await this.redis.hdel(this.keys.state(target), this.field(project, instance));
  }
}
