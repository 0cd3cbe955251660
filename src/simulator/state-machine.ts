import { StatusCode } from '../client/status-code.js';

/** The actions of PUT /1.0/instances/<name>/state. */
export type StateAction = 'start' | 'stop' | 'restart' | 'freeze' | 'unfreeze';

/** The set of actions, for validating requests ("Unknown action: 'x'" otherwise). */
export const stateActions: ReadonlySet<string> = new Set<StateAction>(['start', 'stop', 'restart', 'freeze', 'unfreeze']);

/** Lifecycle actions the state changes emit (notes §2). */
export type StateLifecycle =
  'instance-started' | 'instance-stopped' | 'instance-shutdown' | 'instance-restarted' | 'instance-paused' | 'instance-resumed';

/** How an accepted state change proceeds. */
export interface TransitionPlan {
  /** Status shown while the change is in progress. */
  during: StatusCode;
  /** Status once it completes. */
  after: StatusCode;
  /** Lifecycle event emitted on completion (with the requestor of the API call). */
  lifecycle: StateLifecycle;
  /** Lifecycle event emitted as the change begins (a graceful stop of a frozen instance resumes it first). */
  before?: StateLifecycle;
  /** Which timing applies. */
  timing: 'startMs' | 'stopMs' | 'forceStopMs' | 'restartMs' | 'freezeMs';
  /** The operation-lock action LXD would hold (start on a frozen instance is an unfreeze). */
  lock: StateAction;
}

/** Outcome of asking for a state change: a plan, or the text the operation fails with (async, notes §3). */
export type TransitionResult = { ok: true; plan: TransitionPlan } | { ok: false; err: string };

/** Options of the request that matter for the plan. */
export interface StateRequest {
  action: StateAction;
  force: boolean;
  /** Seconds; -1 (default) waits forever, 0 means kill. */
  timeout: number;
}

const running = new Set<number>([StatusCode.Running, StatusCode.Ready]);

const shutdownFailure = (status: string): string => `Failed shutting down instance, status is "${status}": shutting down the container`;

/**
 * The instance state machine, as observed on LXD 5.0.2 (docs/simulator.md has the table):
 *
 * | from \ action | start | stop (force / timeout 0) | stop (graceful) | restart | freeze | unfreeze |
 * |---|---|---|---|---|---|---|
 * | Stopped 102 | Starting 106 → Running 103, instance-started | fail "already stopped" | fail "already stopped" | fail "already stopped" | fail "isn't running" | fail "isn't running" |
 * | Running 103 / Ready 113 | fail "already running" | Stopping 107 → Stopped, instance-stopped | Stopping 107 → Stopped, instance-shutdown | Stopping → Running, instance-restarted | Freezing 109 → Frozen 110, instance-paused | fail "already running" |
 * | Frozen 110 | Thawed 111 → Running, instance-resumed | → Stopped, instance-stopped | instance-resumed, then Stopping → Stopped, instance-shutdown | force only, instance-restarted | fail "already frozen" | Thawed 111 → Running, instance-resumed |
 * | Error 112 | fail "already running" | → Stopped, instance-stopped | fail "cannot be cleanly shutdown as in Error status" | force only, instance-restarted | fail "isn't running" | fail "isn't running" |
 */
export function planTransition(status: number, req: StateRequest): TransitionResult {
  const kill = req.force || req.timeout === 0;
  const label = status === StatusCode.Frozen ? 'Frozen' : status === StatusCode.Error ? 'Error' : 'Running';
  if (status === StatusCode.Stopped) {
    if (req.action === 'start') return plan(StatusCode.Starting, StatusCode.Running, 'instance-started', 'startMs', 'start');
    if (req.action === 'freeze' || req.action === 'unfreeze') return fail("The container isn't running");
    return fail('The instance is already stopped');
  }
  switch (req.action) {
    case 'start':
      if (status === StatusCode.Frozen) return plan(StatusCode.Thawed, StatusCode.Running, 'instance-resumed', 'freezeMs', 'unfreeze');
      return fail('The instance is already running');
    case 'stop':
      if (kill) return plan(StatusCode.Stopping, StatusCode.Stopped, 'instance-stopped', 'forceStopMs', 'stop');
      // LXD's Shutdown unfreezes a frozen instance so the guest can handle the signal (driver_lxc.go).
      if (status === StatusCode.Frozen)
        return {
          ok: true,
          plan: {
            during: StatusCode.Stopping,
            after: StatusCode.Stopped,
            lifecycle: 'instance-shutdown',
            timing: 'stopMs',
            lock: 'stop',
            before: 'instance-resumed',
          },
        };
      if (status === StatusCode.Error) return fail('The instance cannot be cleanly shutdown as in Error status');
      if (!running.has(status)) return fail(shutdownFailure(label));
      return plan(StatusCode.Stopping, StatusCode.Stopped, 'instance-shutdown', 'stopMs', 'stop');
    case 'restart':
      if (!kill && !running.has(status)) return fail(shutdownFailure(label));
      return plan(StatusCode.Stopping, StatusCode.Running, 'instance-restarted', 'restartMs', 'restart');
    case 'freeze':
      if (status === StatusCode.Frozen) return fail('The container is already frozen');
      if (!running.has(status)) return fail("The container isn't running");
      return plan(StatusCode.Freezing, StatusCode.Frozen, 'instance-paused', 'freezeMs', 'freeze');
    case 'unfreeze':
      if (status === StatusCode.Frozen) return plan(StatusCode.Thawed, StatusCode.Running, 'instance-resumed', 'freezeMs', 'unfreeze');
      if (status === StatusCode.Error) return fail("The container isn't running");
      return fail('The container is already running');
  }
}

function plan(
  during: StatusCode,
  after: StatusCode,
  lifecycle: StateLifecycle,
  timing: TransitionPlan['timing'],
  lock: StateAction,
): TransitionResult {
  return { ok: true, plan: { during, after, lifecycle, timing, lock } };
}

function fail(err: string): TransitionResult {
  return { ok: false, err };
}
