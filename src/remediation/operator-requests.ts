import type { Instance } from '../client/instance.js';
import { StatusCode } from '../client/status-code.js';
import type { OperationObject } from '../client/envelope.js';
import type { OperationStatusEvent } from '../events/canonical-event.js';
import { stateChangeOf, type StateChange } from '../events/intent.js';
import type { RedisConnection } from '../redis/connect.js';
import type { InstanceRef, KeySpace } from '../redis/key-space.js';
import { LuaScript } from '../redis/script.js';

/** How long a request is remembered (daemon time since its first frame), as long as Reflex's own operations are. */
const OPERATOR_REQUEST_TTL_MS = 600_000;

/** Requests that say the instance is to stay down (or held), whatever the daemon made of them. */
const holdsDown = new Set<OperatorRequest['action']>(['stop', 'freeze']);

// KEYS[1] the instance's hash; ARGV[1] operation id, ARGV[2] the request (JSON), ARGV[3] TTL (ms).
// One entry per operation: the time of its first frame is kept, and its outcome once it has one
// (a frame reordered after it does not undo it); entries older than the TTL by this frame's daemon
// time are dropped, so an instance an operator keeps stopping holds ten minutes of requests.
const recordScript = new LuaScript(`local new = cjson.decode(ARGV[2])
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local c = cjson.decode(cur)
  if tonumber(c['at']) < tonumber(new['at']) then new['at'] = c['at'] end
  if tonumber(c['status']) >= 200 then
    new['status'] = c['status']
    new['err'] = c['err']
  end
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(new))
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if tonumber(cjson.decode(all[i + 1])['at']) < tonumber(new['at']) - tonumber(ARGV[3]) then redis.call('HDEL', KEYS[1], all[i]) end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`);

/** A state change of an instance someone requested through the API, as the stream showed its operation. */
export interface OperatorRequest {
  operationId: string;
  action: StateChange;
  /** Daemon time (ms) of the operation's first frame seen: when it was requested, within a frame. */
  at: number;
  /** The operation's status code in its latest frame (a refusal is 400 Failure). */
  status: number;
  /** Why the daemon refused or failed it ('' while it runs, or when it succeeded). */
  err: string;
}

/**
 * State changes requested by anyone but Reflex, as the event stream shows their operations: the
 * operator's decision, whatever the daemon made of it. A stop sent while the daemon still runs a
 * crash's stop hook is taken (202) and then fails ("The instance is already stopped" on LXD 5.0.2
 * and Incus 6.0, measured), and the instance's shutdown is announced only after it: no lifecycle
 * event ever names that stop, its operation is the only trace. The event processor records each
 * one (in order with the instance's other events, so before the shutdown that follows it); the
 * re-check at the moment of acting asks for the operator's last word since the instance last ran.
 * No requestor is on an operation's frames over the unix socket (LXD 5.0.2, Incus 6.0): "not
 * Reflex's" means not one of Reflex's own operations, asked again when it is read, so an operation
 * of Reflex's whose reply was not in yet when its frame was recorded is never taken for an operator's.
 */
export class OperatorRequests {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: KeySpace,
  ) {}

  /** Records a state change's operation frame, unless it is one of Reflex's own (`ownIds`). */
  async observe(ref: InstanceRef, event: OperationStatusEvent, ownIds: () => Promise<string[]>): Promise<void> {
    const action = stateChangeOf(event.description);
    const at = Date.parse(event.timestamp);
    if (!action || Number.isNaN(at) || (await ownIds()).includes(event.operationId)) return;
    const request: OperatorRequest = { operationId: event.operationId, action, at, status: event.to, err: event.err };
    await recordScript.run(this.redis, [this.keys.operatorRequests(ref)], [event.operationId, JSON.stringify(request), OPERATOR_REQUEST_TTL_MS]);
  }

  /** A rename: the requests recorded under the old name are the instance's under the new one (two keys, two slots: one by one). */
  async move(from: InstanceRef, to: InstanceRef): Promise<void> {
    const requests = await this.list(from);
    for (const r of requests)
      await recordScript.run(this.redis, [this.keys.operatorRequests(to)], [r.operationId, JSON.stringify(r), OPERATOR_REQUEST_TTL_MS]);
    if (requests.length) await this.redis.del(this.keys.operatorRequests(from));
  }

  /** The requests recorded for the instance (the last ten minutes'). */
  async list(ref: InstanceRef): Promise<OperatorRequest[]> {
    return (await this.redis.hvals(this.keys.operatorRequests(ref))).map((r) => JSON.parse(r) as OperatorRequest);
  }
}

/**
 * The operator's last request at or after `since` (daemon time), when it holds the instance down
 * (a stop or a freeze, refused or not): a later start of theirs, even one that failed, is their
 * last word instead, and asks for nothing Reflex's start would undo. `ownIds` are Reflex's own
 * operations on the instance, read at the moment of asking.
 */
export function heldDownSince(requests: readonly OperatorRequest[], since: number, ownIds: readonly string[]): OperatorRequest | undefined {
  const own = new Set(ownIds);
  const last = requests
    .filter((r) => r.at >= since && !own.has(r.operationId))
    .reduce<OperatorRequest | undefined>((a, b) => (a && a.at > b.at ? a : b), undefined);
  return last && holdsDown.has(last.action) ? last : undefined;
}

/** One line for the trail: who asked what, when, and what the daemon made of it. */
export function describeRequest(r: OperatorRequest): string {
  const outcome = r.status === StatusCode.Failure ? `refused by the daemon: ${r.err}` : r.status === StatusCode.Success ? 'done' : 'still running';
  return `a ${r.action} was requested through the API at ${new Date(r.at).toISOString()} (operation ${r.operationId}, not Reflex's; ${outcome})`;
}

/** A state change's operation as the daemon lists it, as a request (undefined for anything else). */
export function requestOf(op: OperationObject): OperatorRequest | undefined {
  const action = stateChangeOf(op.description);
  const at = Date.parse(op.created_at);
  return action && !Number.isNaN(at) ? { operationId: op.id, action, at, status: op.status_code, err: op.err } : undefined;
}

/**
 * When the incident began, at the earliest: the instance's last start (the daemon's `last_used_at`)
 * before the incident's event. A crash is announced only once the daemon's stop hook has run
 * (about 0.6 s after a kill -9 on LXD 5.0.2 and Incus 6.0), and an operator who saw it down
 * before that may already have asked for a stop: a request since the instance last ran is about
 * this incident. Without a start to read, the event's own time.
 */
export function incidentOnset(instance: Pick<Instance, 'last_used_at'>, incidentAt: number): number {
  const lastStart = instance.last_used_at ? Date.parse(instance.last_used_at) : Number.NaN;
  return Number.isFinite(lastStart) ? Math.min(lastStart, incidentAt) : incidentAt;
}
