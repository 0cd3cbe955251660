import type { RedisConnection } from '../redis/connect.js';
import type { InstanceClient } from '../client/client.js';
import type { OperationObject } from '../client/envelope.js';
import { StatusCode } from '../client/status-code.js';
import type { InstanceRef, KeySpace } from '../redis/key-space.js';
import type { Intent, OperationStatusEvent, StartFailure } from './canonical-event.js';
import { parseSource } from './source.js';
import type { StateTracker, TrackedStatus } from './state-tracker.js';

/**
 * Why an instance changed state, decided here and nowhere else:
 * - `requested`: through the API by someone other than Reflex (the lifecycle event names a requestor);
 * - `self`: by an operation Reflex itself started (matched by its operation, never by timing alone);
 * - `unrequested`: by nobody (a crash, a guest poweroff: LXD 5.0 sends no requestor);
 * - `unknown`: seen only by a resync after a gap, with nothing left to tell who did it;
 * - `failed-start`: the stop the daemon reports after someone's start (or launch) failed, on an
 *   instance not seen Running since: it never ran, so it did not crash ({@link StartFailures}).
 */

/** Actions that, without a requestor, mean the guest or the host did it (crash, poweroff, reboot). */
const unrequestedWithoutRequestor = new Set(['instance-shutdown', 'instance-stopped', 'instance-restarted']);

/** The intent of a lifecycle event as the daemon sent it, before Reflex's own operations are matched. */
export function lifecycleIntent(action: string, requestor: unknown): Intent {
  if (requestor) return 'requested';
  if (unrequestedWithoutRequestor.has(action)) return 'unrequested';
  return 'unknown';
}

/**
 * Intent of a change only a resync saw. LXD 5.0 keeps no trace that tells a crash from a stop
 * (`volatile.last_state.power` reads STOPPED after both, checked on 5.0.2), except that a stop
 * requested through the API leaves its operation listed for 5 s after it ends: such a stop is
 * `requested`; any other stop stays `unknown`.
 */
export function resyncIntent(to: number, stopOperationSeen: boolean): Intent {
  if (to === StatusCode.Stopped && stopOperationSeen) return 'requested';
  return 'unknown';
}

/**
 * The intent of an unrequested stop on a cluster member, read against the member: LXD 5.0 stops
 * the instances of a member being evacuated (`lxc cluster evacuate`) with an `instance-shutdown`
 * that names no requestor, exactly as after a crash. The member reads `Evacuated` from the start of
 * the evacuation, before its first stop, and the evacuation's operation ("Evacuating cluster
 * member", on that member) stays listed for 5 s after it ends (observed on 5.0.2): either means a
 * stop before the evacuation ended is the operator's, `requested`, even when the member was
 * restored since. When neither can
 * be read the intent stays as it is; the action's re-check reads the member again before acting.
 */
export async function evacuationIntent(client: InstanceClient, event: { intent: Intent; location?: string; timestamp: string }): Promise<Intent> {
  if (event.intent !== 'unrequested' || !event.location || event.location === 'none') return event.intent;
  const [evacuated, ops] = await Promise.all([evacuatedMembers(client), client.listOperations().catch(() => [] as OperationObject[])]);
  // Only a stop before the evacuation ended: a crash on the member after it is a crash.
  const at = Date.parse(event.timestamp);
  const evacuating = ops.some(
    (op) =>
      op.location === event.location &&
      /^evacuating cluster member/i.test(op.description) &&
      (op.status_code === StatusCode.Running || at <= Date.parse(op.updated_at)),
  );
  return evacuated.has(event.location) || evacuating ? 'requested' : event.intent;
}

/** Names of the cluster's members that read `Evacuated` now; empty when they cannot be read. */
export async function evacuatedMembers(client: InstanceClient): Promise<Set<string>> {
  try {
    return new Set((await client.clusterMembers()).filter((m) => m.status === 'Evacuated').map((m) => m.server_name));
  } catch {
    return new Set();
  }
}

/** A state change an operation makes, named by its description (LXD 5.0.2 and Incus 6.0 use the same words). */
export type StateChange = 'start' | 'stop' | 'restart' | 'freeze' | 'unfreeze';

const stateChanges: Record<string, StateChange> = {
  'starting instance': 'start',
  'stopping instance': 'stop',
  'restarting instance': 'restart',
  'freezing instance': 'freeze',
  'unfreezing instance': 'unfreeze',
};

/** The state change an operation's description names, if any. */
export function stateChangeOf(description: string): StateChange | undefined {
  return stateChanges[description.toLowerCase()];
}

/** `project/name` of instances with a stop or restart operation still listed (running or ended < 5 s ago), each with the latest one's `created_at` (ms). */
export async function recentStops(client: InstanceClient, allProjects: boolean): Promise<Map<string, number>> {
  let ops: OperationObject[];
  try {
    ops = await client.listOperations({ allProjects });
  } catch {
    return new Map();
  }
  const out = new Map<string, number>();
  for (const op of ops) {
    if (!/^(stopping|restarting)/i.test(op.description)) continue;
    const at = Date.parse(op.created_at);
    for (const url of [...(op.resources?.instances ?? []), ...(op.resources?.containers ?? [])]) {
      const { instance, project } = parseSource(url);
      const key = instance && `${project ?? 'default'}/${instance}`;
      if (key) out.set(key, Math.max(out.get(key) ?? Number.NEGATIVE_INFINITY, Number.isNaN(at) ? Number.POSITIVE_INFINITY : at));
    }
  }
  return out;
}

/** One operation Reflex started (or is about to start) on an instance. */
export interface OwnOperation {
  /** The action as the executor names it (start, stop, restart, freeze, unfreeze, snapshot, …). */
  action: string;
  state: 'sending' | 'running' | 'done' | 'failed';
  /** Local time the request was sent (ms); bounds an operation whose id is not known yet. */
  sentAt: number;
  /** The operation's `created_at` and, once it ended, `updated_at`: daemon time, like event timestamps (ms). */
  createdAt?: number;
  endedAt?: number;
  /** The action job that sent it: a later run of the job finds the calls an earlier run left unsettled. */
  job?: string;
}

/**
 * Lifecycle actions each of Reflex's own actions makes the daemon send with a requestor: an
 * operation explains only these, so an operation of another kind (an exec) never makes someone
 * else's stop or start look like Reflex's, however close in time. An action not listed explains none.
 */
const echoes: Record<string, string[]> = {
  start: ['instance-started', 'instance-resumed'],
  stop: ['instance-stopped', 'instance-shutdown'],
  restart: ['instance-restarted'],
  freeze: ['instance-paused'],
  unfreeze: ['instance-resumed'],
  snapshot: ['instance-paused', 'instance-resumed'],
  restore: ['instance-started', 'instance-shutdown', 'instance-stopped'],
  exec: ['instance-exec'],
};

/** Slack around an operation's daemon-time window: lifecycle events are stamped by other goroutines. */
const WINDOW_SLACK_MS = 500;
/** LXD sends a spurious `instance-shutdown` about 0.5 s after a failed start (notes §2). */
const FAILED_START_ECHO_MS = 5_000;
/**
 * The longest Reflex waits for one of its own operations; an operation it did not see end is taken
 * as its own for no longer than this. The executor's operation wait uses the same bound.
 */
export const OWN_OPERATION_MAX_MS = 120_000;
/**
 * What settling an event reads of Reflex's own operations. The act step records them
 * (events/own-operations.ts); intent only reads, through this.
 */
export interface OwnOperationsReader {
  /** Ids of the operations Reflex started on the instance lately. */
  ids(ref: InstanceRef): Promise<string[]>;
  /** Whether Reflex started this operation on the instance. */
  isOwn(ref: InstanceRef, operationId: string): Promise<boolean>;
  /**
   * The event's intent refined with Reflex's own operations (`self` when one of them caused it);
   * `read`: the instance's record as the caller read it for this event. Default: read here.
   */
  classify(
    ref: InstanceRef,
    event: { intent: Intent; action?: string; timestamp: string; synthetic?: boolean },
    read?: readonly OwnOperation[],
  ): Promise<Intent>;
}

/** Whether one of Reflex's operations explains the event. */
export function causedBy(op: OwnOperation, event: { intent: Intent; action?: string; timestamp: string }): boolean {
  const at = Date.parse(event.timestamp);
  if (event.intent === 'unrequested') {
    // Only the spurious shutdown that follows a start of ours that failed.
    const end = op.endedAt ?? op.sentAt;
    return (
      op.action === 'start' &&
      op.state === 'failed' &&
      event.action === 'instance-shutdown' &&
      at >= end - WINDOW_SLACK_MS &&
      at - end < FAILED_START_ECHO_MS
    );
  }
  // A start of ours that failed started nothing: an operator's start right after it is the
  // operator's, even inside the slack of our operation's window.
  if (op.action === 'start' && op.state === 'failed' && op.endedAt !== undefined && event.action === 'instance-started') return false;
  const kinds = echoes[op.action];
  if (!kinds || (event.action && !kinds.includes(event.action))) return false;
  if (op.createdAt === undefined) {
    // The reply with the operation's id is not in yet: a window of the local send time.
    return op.state === 'sending' && at >= op.sentAt - 2_000 && at <= op.sentAt + 30_000;
  }
  if (at < op.createdAt - WINDOW_SLACK_MS) return false;
  return at <= (op.endedAt ?? op.createdAt + OWN_OPERATION_MAX_MS) + WINDOW_SLACK_MS;
}

/**
 * Operations whose failure leaves an instance that never ran: a start (LXD's `lxc launch` creates,
 * then starts), and a create that starts (Incus' `incus launch` sends `start: true`: one operation).
 */
const startingOperation = /^(starting|creating) instance$/i;

/** How long a failed start is remembered; its spurious stop follows within a second (LXD 0.7 s, Incus 0.9 s). */
const START_FAILURE_TTL_MS = 600_000;

/**
 * A start refused because the instance already runs: it says the instance ran, the opposite of a
 * launch that failed, and a stop after it is a crash.
 */
const alreadyRunning = /already running/i;

/** Whether an operation event reports a start (or a launch) that failed. */
export function isFailedStart(event: OperationStatusEvent): boolean {
  return event.to === StatusCode.Failure && startingOperation.test(event.description) && !alreadyRunning.test(event.err);
}

/**
 * Starts that failed, per instance, so the stop the daemon reports next is not taken for a crash.
 * When a start fails once the guest's setup began (a bad `lxc.init.cmd`, an image without init),
 * LXD 5.0.2 and Incus 6.0 fail the operation and then run the stop hook, which sends an
 * `instance-shutdown` without requestor exactly as after a crash (observed: 0.7 s after the
 * failure on LXD, 0.9 s on Incus; no `instance-started` before it). A failure found before that
 * (a `raw.lxc` LXD cannot load) sends no stop at all. Reflex's own failed starts are told apart by
 * Reflex's own operations (`self`, events/own-operations.ts); this is for everyone else's.
 */
export class StartFailures {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: KeySpace,
  ) {}

  /** Records a failed start from the event stream, unless it was one of Reflex's own operations. */
  async observe(ref: InstanceRef, event: OperationStatusEvent, own: OwnOperationsReader): Promise<void> {
    if (!isFailedStart(event) || (await own.isOwn(ref, event.operationId))) return;
    const failure: StartFailure = { operationId: event.operationId, err: event.err, at: event.timestamp };
    await this.redis.set(this.keys.startFailures(ref), JSON.stringify(failure), 'PX', START_FAILURE_TTL_MS);
  }

  /**
   * The intent of a stop, refined: an unrequested `instance-shutdown` that follows someone's failed
   * start is `failed-start`, with that start's failure; any other stop keeps its intent.
   */
  async classify(
    ref: InstanceRef,
    event: { intent: Intent; action?: string; timestamp: string; synthetic?: boolean },
    deps: { tracker: StateTracker; client: InstanceClient; own: OwnOperationsReader; read?: { known: TrackedStatus | undefined } },
  ): Promise<{ intent: Intent; startFailure?: StartFailure }> {
    const startFailure = await this.explain(ref, event, deps);
    return startFailure ? { intent: 'failed-start', startFailure } : { intent: event.intent };
  }

  /**
   * The failed start an unrequested `instance-shutdown` follows, if it does: a failure recorded
   * from the stream within {@link FAILED_START_ECHO_MS} before it, or else (its event not
   * processed yet) a failed start the daemon still lists (it keeps a finished operation for 5 s).
   * Never when the tracker saw the instance Running last: a start refused with "already running"
   * followed by a crash is a crash.
   */
  private async explain(
    ref: InstanceRef,
    event: { intent: Intent; action?: string; timestamp: string; synthetic?: boolean },
    deps: { tracker: StateTracker; client: InstanceClient; own: OwnOperationsReader; read?: { known: TrackedStatus | undefined } },
  ): Promise<StartFailure | undefined> {
    if (event.synthetic || event.intent !== 'unrequested' || event.action !== 'instance-shutdown') return undefined;
    const known = deps.read ? deps.read.known : await deps.tracker.get(ref);
    if (known?.status === StatusCode.Running) return undefined;
    const raw = await this.redis.get(this.keys.startFailures(ref));
    const recorded = raw ? (JSON.parse(raw) as StartFailure) : undefined;
    const at = Date.parse(event.timestamp);
    if (recorded) {
      const failedAt = Date.parse(recorded.at);
      if (at >= failedAt - WINDOW_SLACK_MS && at - failedAt < FAILED_START_ECHO_MS) return recorded;
    }
    return listedStartFailure(deps.client.withProject(ref.project), ref.instance, await deps.own.ids(ref));
  }
}

/** A failed start of the instance the daemon still lists, not one of Reflex's own. */
async function listedStartFailure(client: InstanceClient, instance: string, ownIds: string[]): Promise<StartFailure | undefined> {
  let ops: OperationObject[];
  try {
    ops = await client.listOperations();
  } catch {
    return undefined;
  }
  const op = ops.find(
    (o) =>
      o.status_code === StatusCode.Failure &&
      startingOperation.test(o.description) &&
      !alreadyRunning.test(o.err ?? '') &&
      !ownIds.includes(o.id) &&
      [...(o.resources?.instances ?? []), ...(o.resources?.containers ?? [])].some((url) => parseSource(url).instance === instance),
  );
  return op ? { operationId: op.id, err: op.err, at: op.updated_at } : undefined;
}
