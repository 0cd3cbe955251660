import type { StateLifecycle, StateRequest } from './state-machine.js';
import { StatusCode, type ApiRevision } from '../client/status-code.js';

/** The API state change holding an instance's operation lock. */
export interface LockHolder {
  action: StateRequest['action'];
  /** A forced stop (or timeout 0) rather than a graceful one. */
  force: boolean;
}

/** What a state change does when it finds the instance busy with another one. */
export type BusyDecision =
  /** Fails at once with `err`, without waiting for the lock. */
  | { kind: 'fail'; err: string }
  /** Shares the running change's outcome: succeeds when it ends, emitting `emit` (with its requestor) if given. */
  | { kind: 'join'; emit?: StateLifecycle }
  /** Waits for the running change to end, then fails with `err`. */
  | { kind: 'wait-then-fail'; err: string }
  /** Waits for the stop to end, then shuts down (again) and restarts: `instance-shutdown`, `instance-restarted`. */
  | { kind: 'wait-then-restart' };

/**
 * LXD 5.0.2's answer to a state change on an instance whose lock is held by another API state
 * change (lxd/instance/operationlock: stop and start inherit or reuse a restart's or a stop's lock,
 * others wait), as measured on the daemon with a graceful stop or restart in flight and the second
 * request 300 ms later:
 *
 * | held \ request | stop (graceful) | stop (force) | start | restart |
 * |---|---|---|---|---|
 * | restart | joins: both succeed, still Running, only `instance-restarted` | – | waits, fails "already running" | – |
 * | stop (graceful) | joins: both succeed, a second `instance-shutdown` | joins, then `instance-stopped` | waits, fails "already running" (it read Running), stays Stopped | waits, then `instance-shutdown`, `instance-restarted`, Running |
 * | start | refused: "Instance is busy running a "start" operation" | same | – | – |
 *
 * A stop of an instance that reads Stopped fails "The instance is already stopped" before any lock
 * is looked at: sent while a crash's stop hook holds the lock (kill -9 of init, the stop 0 to 300 ms
 * later), it is taken (202) and its operation fails so at once on LXD 5.0.2; on Incus 6.0.4 (the
 * later revision) it ends with the hook, Success, at the shutdown's moment (sent once /state reads
 * Stopped; sent earlier it may fail as on LXD). Anything else (and any lock held by
 * a crash's stop hook, an update, a delete…) is refused: "Instance is busy running a … operation",
 * a start during the hook included (measured on both). Freeze during a graceful stop, which the daemon lets
 * through (the stop then hangs until the guest thaws), is refused too. A stop while a start runs
 * (a 2 s `lxc.hook.pre-start`, the stop 0 to 1 s after it) is refused in its operation: "Instance
 * is busy running a "start" operation" on LXD 5.0.2 (its /state reads Running meanwhile; a stop
 * sent at once after the start's 202 may still find it Stopped: "already stopped"), "The instance
 * is already stopped" on Incus 6.0.4 (its /state reads Stopped); the start ends Running.
 */
export function busyDecision(
  held: LockHolder | undefined,
  req: StateRequest,
  statusAtRequest: StatusCode,
  revision: ApiRevision = 'earlier',
): BusyDecision | undefined {
  if (req.action === 'stop' && statusAtRequest === StatusCode.Stopped)
    return revision === 'later' ? { kind: 'join' } : { kind: 'fail', err: 'The instance is already stopped' };
  if (!held) return undefined;
  const graceful = req.action === 'stop' && !req.force && req.timeout !== 0;
  const forced = req.action === 'stop' && !graceful;
  if (held.action === 'restart') {
    if (graceful) return { kind: 'join' };
    if (req.action === 'start') return { kind: 'wait-then-fail', err: 'The instance is already running' };
    return undefined;
  }
  if (held.action === 'stop' && !held.force) {
    if (graceful) return { kind: 'join', emit: 'instance-shutdown' };
    if (forced) return { kind: 'join', emit: 'instance-stopped' };
    if (req.action === 'start' && statusAtRequest !== StatusCode.Stopped) return { kind: 'wait-then-fail', err: 'The instance is already running' };
    if (req.action === 'restart') return { kind: 'wait-then-restart' };
    return undefined;
  }
  if (held.action === 'start' && req.action === 'stop')
    return { kind: 'fail', err: revision === 'later' ? 'The instance is already stopped' : 'Instance is busy running a "start" operation' };
  return undefined;
}
