/**
 * The time the interval decisions of Reflex read: whether a group's repeat interval has passed
 * (notify), how late a schedule's tick is (schedules), where a restart falls in the crash-loop
 * budget's window and back-off, when its quarantine is over and a failure storm's window
 * (remediation), whether a silence is over (silences), whether an instance is past a probe's
 * startup grace (probes). Injectable so tests cross an hour's interval on virtual time. The waits
 * themselves are BullMQ delayed jobs and Redis expiries, which run on their own time and are not
 * faked: a fake clock moves the decisions, not the delays.
 */
export interface Clock {
  /** Milliseconds since the epoch, as `Date.now()`. */
  now(): number;
}

/** The wall clock: the default everywhere. */
export const systemClock: Clock = { now: () => Date.now() };
