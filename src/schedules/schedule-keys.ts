/**
 * The queue and Redis keys of the scheduler, declared once. Derived from the deployment prefix
 * like src/queue/names.ts, whose key space does not (yet) carry them.
 */
export interface ScheduleKeys {
  /** The BullMQ queue holding one job scheduler per schedule (under the key space's bullPrefix). */
  queue: string;
  /** Held while one replica reconciles the job schedulers with the loaded schedules. */
  syncLock: string;
  /** Held while a tick of the schedule runs, so two ticks of one schedule never overlap. */
  running(schedule: string): string;
  /** Set once the tick due at `dueAt` has run, so a duplicated job cannot run it twice. */
  done(schedule: string, dueAt: number): string;
}

export function scheduleKeys(prefix = 'reflex'): ScheduleKeys {
  return {
    queue: 'schedules',
    syncLock: `${prefix}:schedule-sync`,
    running: (schedule) => `${prefix}:schedule-running:${schedule}`,
    done: (schedule, dueAt) => `${prefix}:schedule-done:${schedule}:${dueAt}`,
  };
}
