import type { Job, Queue } from '../redis/commonjs-packages.js';
import { housekeepingParamsSchema } from './housekeeping/housekeeping-steps.js';
import type { JobReport } from './snapshot-ledger.js';

/** What `jobStateOf` reads of the actions queue (a BullMQ `Queue` is one). */
export type JobReader = Pick<Queue, 'getJobState' | 'getJob'>;

/**
 * How a housekeeping job ended, read from the actions queue, with the snapshot it named when it ran
 * (if it did). The state is read before the job: an ended job's return value and end time no longer
 * change. Read the other way round, a job that ended between the two reads was read with no return
 * value and taken for skipped, and the tick forgot the snapshot it had made (never pruned; seen on
 * a loaded LXD with 2 s rounds).
 */
export function jobStateOf(actions: JobReader): (jobId: string) => Promise<JobReport> {
  return async (jobId) => {
    const state = await actions.getJobState(jobId);
    if (state === 'unknown') return { state: 'unknown' };
    if (state !== 'completed' && state !== 'failed') return { state: 'pending' };
    const job = await actions.getJob(jobId);
    if (!job) return { state: 'unknown' };
    const ended = { ...(ranLate(job) ? { ranLate: true } : {}), ...(job.finishedOn ? { endedAt: job.finishedOn } : {}) };
    if (state === 'failed') return { state: 'failed', ...ended };
    const value = job.returnvalue as { result?: string; snapshot?: unknown } | null;
    if (value?.result !== 'done') return { state: 'skipped', ...ended };
    return typeof value.snapshot === 'string' ? { state: 'done', snapshot: value.snapshot, ...ended } : { state: 'done', ...ended };
  };
}

/**
 * Whether the job may have run its snapshot step late (it names the snapshot when it takes it, and
 * records the name before sending it): it ended (or, not ended, is still running) past the step's
 * lateness. The step checks its lateness after the re-check and the instance's lock, so the time
 * an attempt started says too little; a job that ended within the lateness never ran late.
 */
function ranLate(job: Job): boolean {
  const params = housekeepingParamsSchema.safeParse((job.data as { params?: unknown } | undefined)?.params);
  if (!params.success || job.processedOn === undefined) return false;
  const late = params.data.steps.find((s) => s.kind === 'create-snapshot' && s.late !== undefined);
  return late?.kind === 'create-snapshot' && late.late !== undefined && (job.finishedOn ?? Date.now()) - late.late.queuedAt > late.late.afterMs;
}
