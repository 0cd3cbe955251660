import type { RedisConnection } from '../redis/connect.js';
import type { InstanceRef, KeySpace } from '../redis/key-space.js';
import { LuaScript } from '../redis/script.js';

// KEYS[1] state hash; ARGV[1] field, ARGV[2] the new entry (JSON), ARGV[3] the latest plausible time
// (now plus the clock tolerance). Applied only when not older than the entry stored, unless the stored
// time is past that bound: one implausible timestamp must not hide every later real transition. The entry keeps the one it replaced (`prev`), so an event whose processing was
// cut short can be resumed with what it saw; an operator's last request is carried along.
// Answers {1, previous} applied, {0, current} older than known, {2, current} this event already applied.
const compareAndSet = new LuaScript(`local cur = redis.call('HGET', KEYS[1], ARGV[1])
local new = cjson.decode(ARGV[2])
if cur then
  local c = cjson.decode(cur)
  if c['eventId'] and c['eventId'] == new['eventId'] then return {2, cur} end
  if tonumber(c['at']) > tonumber(new['at']) and tonumber(c['at']) <= tonumber(ARGV[3]) then return {0, cur} end
  new['prev'] = { status = c['status'], at = c['at'], source = c['source'], eventId = c['eventId'], intent = c['intent'] }
  if not new['requestedAt'] then
    new['requestedAt'] = c['requestedAt']
    new['requestedTo'] = c['requestedTo']
  end
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(new))
return {1, cur or false}`);

// KEYS[1] state hash; ARGV[1] field, ARGV[2] id of the read to explain, ARGV[3] the explaining event's id, ARGV[4] its intent.
const explainScript = new LuaScript(`local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then return 0 end
local c = cjson.decode(cur)
if c['eventId'] ~= ARGV[2] then return 0 end
c['eventId'] = ARGV[3]
c['intent'] = ARGV[4]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(c))
return 1`);

/** What the tracker knows of one instance. */
export interface TrackedStatus {
  status: number;
  /** Timestamp (ms) of the event or read that set it; older news never overwrites newer. */
  at: number;
  project: string;
  /** Where it came from: an event of the stream, or a read of the instance (resync, confirmation). */
  source?: 'event' | 'read';
  /** Id of the event that set it, so a redelivered event is recognised and resumed. */
  eventId?: string;
  /** Why it changed, as far as known when it was recorded (a resync's read of a stop: `unknown`). */
  intent?: string;
  /**
   * With a read's entry: the daemon's `last_used_at` then. A later read of the instance, down as
   * known but with another `last_used_at`, ran and went down again unseen.
   */
  lastUsedAt?: string;
  /** What this entry replaced. */
  prev?: { status: number; at: number; source?: 'event' | 'read'; eventId?: string; intent?: string };
  /** Daemon time (ms) of the newest transition an operator requested (a stop or start through the API). */
  requestedAt?: number;
  /** The status that request moved the instance to. */
  requestedTo?: number;
}

/** What {@link StateTracker.update} found. */
export type TrackerUpdate =
  | { applied: true; previous?: TrackedStatus; resumed: false }
  /** This very event was applied before (a redelivery): `previous` is what it replaced. */
  | { applied: true; previous?: TrackedStatus; resumed: true }
  | { applied: false; current: TrackedStatus };

// KEYS[1] state hash; ARGV[1] old field, ARGV[2] new field. The old name's entry goes to the new
// name unless the new name already has a newer one; the old name's entry goes either way.
const moveScript = new LuaScript(`local old = redis.call('HGET', KEYS[1], ARGV[1])
if not old then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
local cur = redis.call('HGET', KEYS[1], ARGV[2])
if cur and tonumber(cjson.decode(cur)['at']) > tonumber(cjson.decode(old)['at']) then return 0 end
redis.call('HSET', KEYS[1], ARGV[2], old)
return 1`);

/**
 * Last known status of every instance of a target, in Redis so replicas and restarts share it.
 * Updates carry a timestamp and are applied only if newer, so a reordered pair of events never
 * rolls the state back. A stored time further ahead of the clock than `clockToleranceMs` (default
 * 5 minutes) is not trusted: any update replaces it.
 */
export class StateTracker {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: KeySpace,
    private readonly clockToleranceMs = 5 * 60_000,
  ) {}

  private field(ref: Pick<InstanceRef, 'project' | 'instance'>): string {
    return `${ref.project}/${ref.instance}`;
  }

  async get(ref: InstanceRef): Promise<TrackedStatus | undefined> {
    const raw = await this.redis.hget(this.keys.state(ref.target), this.field(ref));
    return raw ? (JSON.parse(raw) as TrackedStatus) : undefined;
  }

  /**
   * Records a status if it is not older than what is stored. `requested` marks a transition an
   * operator asked for, which the re-check before every action honours.
   */
  async update(
    ref: InstanceRef,
    status: number,
    at: number,
    origin: { source?: 'event' | 'read'; eventId?: string; intent?: string; requested?: boolean; lastUsedAt?: string } = {},
  ): Promise<TrackerUpdate> {
    const entry: TrackedStatus = {
      status,
      at,
      project: ref.project,
      ...(origin.source ? { source: origin.source } : {}),
      ...(origin.eventId ? { eventId: origin.eventId } : {}),
      ...(origin.intent ? { intent: origin.intent } : {}),
      ...(origin.requested ? { requestedAt: at, requestedTo: status } : {}),
      ...(origin.source === 'read' && origin.lastUsedAt ? { lastUsedAt: origin.lastUsedAt } : {}),
    };
    // Compare-and-set in one Lua call so two workers racing on the same instance stay ordered.
    const [code, raw] = (await compareAndSet.run(
      this.redis,
      [this.keys.state(ref.target)],
      [this.field(ref), JSON.stringify(entry), String(Date.now() + this.clockToleranceMs)],
    )) as [number, string | null | false];
    const stored = raw ? (JSON.parse(raw) as TrackedStatus) : undefined;
    if (code === 0) return { applied: false, current: stored! };
    if (code === 2) return { applied: true, resumed: true, previous: stored?.prev ? { ...stored.prev, project: ref.project } : undefined };
    // The entry replaced, with what it had replaced in turn (`prev`): a stream event explaining a resync's read needs both.
    return { applied: true, resumed: false, previous: stored };
  }

  /**
   * A resync read a change it could not explain (intent unknown); the stream's own event for it
   * came later and says why. Records the event against the read, once: answers false when the
   * entry is not that read any more (something newer happened, or the event explained it already).
   */
  async explain(ref: InstanceRef, readEventId: string, event: { id: string; intent: string }): Promise<boolean> {
    return Number(await explainScript.run(this.redis, [this.keys.state(ref.target)], [this.field(ref), readEventId, event.id, event.intent])) === 1;
  }

  /** Every tracked instance of a target, keyed `project/name`. */
  async all(target: string): Promise<Map<string, TrackedStatus>> {
    const raw = await this.redis.hgetall(this.keys.state(target));
    return new Map(Object.entries(raw).map(([k, v]) => [k, JSON.parse(v) as TrackedStatus]));
  }

  /**
   * When the target's instances were first read (ms; `now` the first time it is asked): an instance
   * never tracked whose last start is later ran while Reflex watched, its events lost in a gap.
   */
  async watchedSince(target: string, now: number): Promise<number> {
    const key = this.keys.watchedSince(target);
    const [, [, since]] = (await this.redis.multi().set(key, String(now), 'NX').get(key).exec()) as [unknown, [unknown, string]];
    return Number(since);
  }

  /** The `volatile.uuid` of each instance (`project/name`) as the last resync read it. */
  async identities(target: string): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.redis.hgetall(this.keys.identities(target))));
  }

  /**
   * Keeps the identities a read of all of a target's instances found, and forgets those of the
   * names `gone` (kept before that read, not listed by it): a name recorded meanwhile stays.
   */
  async recordIdentities(target: string, uuids: Map<string, string>, gone: string[] = []): Promise<void> {
    const key = this.keys.identities(target);
    const tx = this.redis.multi();
    if (uuids.size) tx.hset(key, Object.fromEntries(uuids));
    if (gone.length) tx.hdel(key, ...gone);
    await tx.exec();
  }

  /** Keeps the `volatile.uuid` of one instance (read at its creation or rename). */
  async recordIdentity(ref: InstanceRef, uuid: string): Promise<void> {
    await this.redis.hset(this.keys.identities(ref.target), this.field(ref), uuid);
  }

  /**
   * A rename: what was known of the instance under its old name is known under the new one (an
   * operator's stop stays the last word on it; a forged stop of it is then no news).
   */
  async move(from: InstanceRef, to: InstanceRef): Promise<boolean> {
    return Number(await moveScript.run(this.redis, [this.keys.state(from.target)], [this.field(from), this.field(to)])) === 1;
  }

  async forget(ref: InstanceRef): Promise<void> {
    await this.redis.hdel(this.keys.state(ref.target), this.field(ref));
  }
}

/**
 * Whether the daemon's last start (`last_used_at`) is after what was known of the instance: on the
 * daemon's clock for an event's entry (its start's event comes after the start set it), by the
 * value itself for a read's entry that kept it (its time is Reflex's). Not known otherwise: false.
 */
export function startedSince(known: TrackedStatus, lastUsedAt: string | undefined): boolean {
  if (!lastUsedAt) return false;
  if (known.source === 'event') return Date.parse(lastUsedAt) > known.at;
  return known.lastUsedAt !== undefined && lastUsedAt !== known.lastUsedAt;
}

/** The project and instance name of a tracker field or identity key (`project/name`). */
export function instanceOfKey(key: string): { project: string; instance: string } {
  const slash = key.indexOf('/');
  return { project: key.slice(0, slash), instance: key.slice(slash + 1) };
}
