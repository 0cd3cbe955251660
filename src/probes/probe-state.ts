/** What one check of a probe found: `unknown` when it could not run (exec refused, daemon busy, its call timed out). */
export type ProbeOutcome = 'success' | 'failure' | 'unknown';

/** What a probe concludes of an instance. */
export type Health = 'healthy' | 'unhealthy' | 'unknown';

/** The thresholds of a probe, as Kubernetes names them. */
export interface Thresholds {
  failureThreshold: number;
  successThreshold: number;
}

/**
 * The state of one probe on one instance identity, kept in Redis so it moves with the probe to
 * another replica. It belongs to one run of the instance (`startedAt`): a restart starts afresh.
 */
export interface ProbeState {
  health: Health;
  /** Successes and failures in a row (one of them is 0). */
  successes: number;
  failures: number;
  /** When the first check of the current streak ran (ms). */
  streakSince?: number;
  /** Transitions so far (healthy ↔ unhealthy): the sequence number in the event id. */
  seq: number;
  /** The instance's `last_used_at` (when it last started) the state belongs to. */
  startedAt: string;
  /** The probe definition's fingerprint: a changed probe starts afresh. */
  fingerprint: string;
  /** The instance's name at the last check (the identity is its uuid), for `reflex probes status`. */
  instance?: string;
  /** The last check, for `reflex probes status`. */
  lastAt?: number;
  lastOutcome?: ProbeOutcome;
  lastOutput?: string;
  lastDurationMs?: number;
  /** When the current health was concluded (ms). */
  changedAt?: number;
  /**
   * Reflex acted on the unhealthy instance since (a rule's exec or restart): the streak starts over,
   * and `failureThreshold` failures in a row again say it is still unhealthy (an event again), as
   * Kubernetes probes a restarted container afresh. So a remediation that does not help is repeated
   * under the crash-loop budget until quarantine, instead of being tried once.
   */
  remediated?: boolean;
  /**
   * The status a listing found the instance in when it was not Running (`Stopped`, `Frozen`,
   * `Error`): it is not probed, and its health is `unknown` until a check of a run says otherwise.
   */
  notRunning?: string;
}

/** A fresh state for a run of an instance: nothing concluded yet. */
export function freshState(startedAt: string, fingerprint: string): ProbeState {
  return { health: 'unknown', successes: 0, failures: 0, seq: 0, startedAt, fingerprint };
}

/** The state of an instance found not Running (`status`): nothing is concluded of it, streaks start over. */
export function notRunning(state: ProbeState, status: string): ProbeState {
  return { ...state, health: 'unknown', successes: 0, failures: 0, streakSince: undefined, remediated: false, notRunning: status };
}

/** A conclusion that changed: healthy ↔ unhealthy, unknown → unhealthy, or unhealthy again after a remediation. */
export interface Transition {
  from: Health;
  to: 'healthy' | 'unhealthy';
  /** Checks in a row that made it. */
  consecutive: number;
  /** When the first of them ran (ms). */
  since: number;
}

/** The state once Reflex acted on the unhealthy instance: the streaks start over (see {@link ProbeState.remediated}). */
export function afterRemediation(state: ProbeState): ProbeState {
  return { ...state, successes: 0, failures: 0, streakSince: undefined, remediated: true };
}

/**
 * One check's outcome applied to a state, with Kubernetes' semantics: `failureThreshold` failures
 * in a row make the instance unhealthy, `successThreshold` successes in a row make an unhealthy one
 * healthy again. Before any conclusion one success is enough (a liveness probe starts out
 * succeeding), and that first `healthy` is no transition. An `unknown` check changes nothing: a
 * check that could not run says nothing of the service, so it neither fails nor breaks a streak.
 */
export function applyOutcome(state: ProbeState, outcome: ProbeOutcome, at: number, t: Thresholds): { state: ProbeState; transition?: Transition } {
  if (outcome === 'unknown') return { state: { ...state, lastAt: at, lastOutcome: outcome } };
  const next: ProbeState = { ...state, lastAt: at, lastOutcome: outcome };
  if (outcome === 'success') {
    next.streakSince = state.successes === 0 ? at : state.streakSince;
    next.successes = state.successes + 1;
    next.failures = 0;
    const needed = state.health === 'unknown' ? 1 : t.successThreshold;
    if (state.health !== 'healthy' && next.successes >= needed) {
      next.health = 'healthy';
      next.remediated = false;
      next.changedAt = at;
      if (state.health === 'unhealthy') {
        next.seq = state.seq + 1;
        return { state: next, transition: { from: state.health, to: 'healthy', consecutive: next.successes, since: next.streakSince! } };
      }
    }
    return { state: next };
  }
  next.streakSince = state.failures === 0 ? at : state.streakSince;
  next.failures = state.failures + 1;
  next.successes = 0;
  if ((state.health !== 'unhealthy' || state.remediated) && next.failures >= t.failureThreshold) {
    next.health = 'unhealthy';
    next.changedAt = at;
    next.seq = state.seq + 1;
    next.remediated = false;
    return { state: next, transition: { from: state.health, to: 'unhealthy', consecutive: next.failures, since: next.streakSince! } };
  }
  return { state: next };
}
