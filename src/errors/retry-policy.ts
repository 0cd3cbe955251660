import { isRetryable } from './reflex-error.js';

/**
 * The one retry policy of Reflex: how jobs are retried, how long a busy instance is waited for,
 * and whether a failure is final. Finality is decided on error codes and names, never on message
 * text (BullMQ decides the same way, on `UnrecoverableError`'s name, in `Job.shouldRetryJob`).
 */
export const retryPolicy = {
  /** Attempts of an action job, the first included. */
  actionAttempts: 5,
  /** Exponential back-off of action retries, with jitter. */
  actionBackoff: { type: 'exponential', delay: 300, jitter: 0.5 } as const,
  /**
   * Attempts of an event job. An event is never given up lightly: a job fails only when Redis or
   * the daemon failed it this many times in a row (about 10 minutes with the back-off below).
   */
  eventAttempts: 25,
  /** Back-off of event job retries (ms): exponential from 500 ms, capped at 30 s. */
  eventBackoffMs(attemptsMade: number): number {
    return Math.min(30_000, 500 * 2 ** Math.max(0, attemptsMade - 1));
  },
  /** How long an action waits before trying again an instance another action holds (ms, jittered, spends no attempt). */
  busyDelayMs(): number {
    return 200 + Math.round(Math.random() * 300);
  },
  /** A job whose worker died is handed to another replica this often before it fails. */
  maxStalledCount: 5,
  /**
   * How long a job's worker lock lives without renewal: a killed worker's job is taken over after
   * about this long (BullMQ's stalled check runs every half of it).
   */
  jobLockMs: 5_000,
} as const;

/**
 * How long after its first run an event job may still run again by itself: every back-off of its
 * attempts, plus a lock period per stall it may survive (its worker died and another replica takes
 * it over). About 10 minutes.
 */
export function eventRedeliverySpanMs(): number {
  let total = 0;
  for (let made = 1; made < retryPolicy.eventAttempts; made++) total += retryPolicy.eventBackoffMs(made);
  return total + retryPolicy.maxStalledCount * retryPolicy.jobLockMs;
}

/**
 * The window of the dedupe keys that stop a step of an event or a job from being done twice (the
 * archive's seen-keys, the audit's once-keys): as long as the same job can come back. A job comes
 * back by its own retries and stalls ({@link eventRedeliverySpanMs}); re-added with the same id it
 * is refused while its queue keeps it finished (`jobsKeepCompletedMs`). Past both, nothing brings
 * the same job back by itself (an operator's retry of a failed job is a new decision).
 */
export function dedupeWindowMs(jobsKeepCompletedMs: number): number {
  return Math.max(jobsKeepCompletedMs, eventRedeliverySpanMs());
}

/** BullMQ worker options every queue worker of Reflex shares (stall detection, lock renewal). */
export const workerLockOptions = {
  // An idle worker's blocking wait on its queue's marker, in seconds (BullMQ's default 5; 10 is its
  // own ceiling for a blocking command). Each timeout costs a wait and a fetch script; a job added,
  // a delayed job due or a stalled job moved back wakes the wait at once whatever its length.
  drainDelay: 10,
  lockDuration: retryPolicy.jobLockMs,
  stalledInterval: retryPolicy.jobLockMs / 2,
  maxStalledCount: retryPolicy.maxStalledCount,
} as const;

/** The name BullMQ gives an error that must not be retried. */
const unrecoverable = 'UnrecoverableError';

/** The attempts of a job, as BullMQ holds them, or as the executor counts the one it runs (`attemptsMade`: this one included). */
export interface JobAttempts {
  attemptsMade: number;
  opts: { attempts?: number };
  stalledCounter?: number;
}

/**
 * The one answer to "is this failure final": for the executor deciding whether to retry an attempt
 * (and, when not, telling BullMQ by an UnrecoverableError) and for the queue's failed job alike.
 * Final when the error is marked unrecoverable (by name: errors cross process boundaries) or its
 * code says a retry cannot help, when the attempts are spent, or when BullMQ failed the job for
 * stalling too often. An error without a code (Redis, the worker's own path) is retried, as BullMQ
 * retries it; an action's own uncoded error is coded ACTION_FAILED before it gets here.
 */
export function isFinalFailure(job: JobAttempts, err: unknown): boolean {
  if ((err as { name?: string } | undefined)?.name === unrecoverable) return true;
  if (coded(err) && !isRetryable(err)) return true;
  if ((job.stalledCounter ?? 0) > retryPolicy.maxStalledCount) return true;
  return job.attemptsMade >= (job.opts.attempts ?? 1);
}

/** Whether an error says by itself whether a retry helps (a ReflexError, here or across a process boundary). */
function coded(err: unknown): boolean {
  return Boolean(err) && typeof err === 'object' && typeof (err as { retryable?: unknown }).retryable === 'boolean';
}
