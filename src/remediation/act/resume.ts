import type { ActionOutcome } from '../../actions/action.js';
import type { ActionJob } from '../../actions/action-job.js';
import { isApiStatus } from '../../client/api-error.js';
import type { InstanceClient } from '../../client/client.js';
import type { OperationObject } from '../../client/envelope.js';
import { OWN_OPERATION_MAX_MS } from '../../events/intent.js';
import type { OwnOperations } from '../../events/own-operations.js';
import type { RedisConnection } from '../../redis/connect.js';
import type { KeySpace } from '../../redis/key-space.js';
import type { Trail } from '../trail.js';
import { daemonTime } from './acting-client.js';
import { refOf, type BranchedOutcome } from './job-failure.js';
import { parseInflight } from './inflight.js';

/** What resuming a killed worker's operation needs. */
export interface ResumeDeps {
  redis: RedisConnection;
  keys: KeySpace;
  ownOperations: OwnOperations;
}

/**
 * A previous run of this job (killed mid-action) left the id of the operation it was waiting on
 * (the acting client persists it before anyone waits; `raw` is its in-flight record, read under
 * the instance's lock): wait on that one and record its outcome
 * instead of acting again. When the operation is already gone, answers undefined: the re-check and
 * the action's own read of the instance decide again.
 */
export async function resumeLeftOperation(
  deps: ResumeDeps,
  job: ActionJob,
  jobId: string,
  client: InstanceClient,
  trail: Trail,
  raw: string,
): Promise<ActionOutcome | BranchedOutcome | undefined> {
  const { redis, keys, ownOperations } = deps;
  const left = parseInflight(raw);
  if ('finished' in left) {
    // The earlier run ended the job (acted, or decided not to) and died before the queue heard:
    // the job is not run again, whatever was decided since, and its end is on the trail once.
    const end = left.finished;
    const said = `${job.action}: an earlier run of this job ended it (its worker stopped before the queue recorded the end): ${end.summary}`;
    await trail.outcome(said, end.result, { operationId: end.operationId, resumed: true }, `finished:${jobId}`);
    return { ...end, summary: said };
  }
  let final: OperationObject;
  try {
    final = await (await client.getOperation(left.operationId)).wait({ timeoutMs: OWN_OPERATION_MAX_MS });
  } catch (err) {
    if (isApiStatus(err, 404) || (err as { code?: string }).code === 'OPERATION_VANISHED') {
      await redis.del(keys.inflight(jobId));
      await trail.call(`operation ${left.operationId} of an earlier attempt is gone; re-checking the instance`);
      return undefined;
    }
    throw err;
  }
  if (left.action)
    await ownOperations.record(refOf(job), left.operationId, {
      action: left.action,
      state: final.status_code === 200 ? 'done' : 'failed',
      sentAt: left.sentAt ?? Date.now(),
      createdAt: left.createdAt,
      endedAt: daemonTime(final.updated_at) ?? Date.now(),
    });
  await redis.del(keys.inflight(jobId));
  // An exec's exit code is in the operation; its output went with the dead worker's sockets.
  const ret = (final.metadata as { return?: unknown } | null | undefined)?.return;
  const summary = `resumed after a restart of the worker: operation ${left.operationId} ended ${final.status}${typeof ret === 'number' ? ` (exit code ${ret}; its output is lost)` : ''}`;
  await trail.outcome(`${job.action}: ${summary}`, 'done', { operationId: left.operationId, resumed: true });
  return { result: 'done', summary, operationId: left.operationId };
}
