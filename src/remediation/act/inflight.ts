import type { ActionOutcome } from '../../actions/action.js';
import type { RedisConnection } from '../../redis/connect.js';
import type { KeySpace } from '../../redis/key-space.js';

/** How long a job's in-flight record, and the record of its end, are kept (as long as a stalled job can wait for a worker). */
const INFLIGHT_TTL_MS = 3_600_000;

/** A job's end as its in-flight record keeps it. */
export type FinishedJob = Pick<ActionOutcome, 'summary' | 'operationId' | 'snapshot'> &
  ({ result: ActionOutcome['result'] } | { result: 'failed'; branched: string[] });

type InflightRecord = { operationId: string; action?: string; sentAt?: number; createdAt?: number } | { finished: FinishedJob };

/**
 * Records that the job ended (its outcome is final: done, skipped, held or failed for good), in
 * place of its in-flight operation: a worker that dies before BullMQ hears of the end leaves a
 * stalled job that another worker runs again, and that run must not act again on a decision taken
 * since (an operator's stop whose events died with the worker would be undone).
 */
export async function recordJobEnd(redis: RedisConnection, keys: KeySpace, jobId: string, outcome: FinishedJob): Promise<void> {
  await redis.set(keys.inflight(jobId), JSON.stringify({ finished: outcome }), 'PX', INFLIGHT_TTL_MS);
}

/** Persists the operation a job waits on, before anyone waits: a worker killed then resumes waiting on it instead of acting again. */
export async function recordInflight(
  redis: RedisConnection,
  keys: KeySpace,
  jobId: string,
  op: { operationId: string; action: string; sentAt: number; createdAt: number },
): Promise<void> {
  await redis.set(keys.inflight(jobId), JSON.stringify(op), 'PX', INFLIGHT_TTL_MS);
}

/** The in-flight record of a job: JSON now, a bare operation id in records written before. */
export function parseInflight(raw: string): InflightRecord {
  try {
    const v = JSON.parse(raw) as { operationId?: unknown; finished?: { result?: unknown; summary?: unknown } };
    if (v && typeof v.finished?.summary === 'string' && typeof v.finished.result === 'string') return v as { finished: FinishedJob };
    if (v && typeof v.operationId === 'string') return v as { operationId: string };
  } catch {
    // A bare id.
  }
  return { operationId: raw };
}
