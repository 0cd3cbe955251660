import type { KeepJobs } from 'bullmq';
import type { Config } from './config.js';

/** What a Reflex queue keeps of its finished jobs: BullMQ's `removeOnComplete` / `removeOnFail`. */
export interface QueueHistory {
  removeOnComplete: KeepJobs;
  removeOnFail: KeepJobs;
}

/**
 * The finished jobs every Reflex queue keeps, from `jobsKeepCompleted[Ms]` and `jobsKeepFailed[Ms]`
 * (BullMQ counts ages in seconds). Each is bounded by count and by age, whichever comes first.
 */
export function queueHistory(
  config: Pick<Config, 'jobsKeepCompleted' | 'jobsKeepCompletedMs' | 'jobsKeepFailed' | 'jobsKeepFailedMs'>,
): QueueHistory {
  return {
    removeOnComplete: { count: config.jobsKeepCompleted, age: Math.ceil(config.jobsKeepCompletedMs / 1000) },
    removeOnFail: { count: config.jobsKeepFailed, age: Math.ceil(config.jobsKeepFailedMs / 1000) },
  };
}
