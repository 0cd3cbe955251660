import type { ActionOutcome } from '../../actions/action.js';
import type { ActionJob } from '../../actions/action-job.js';
import { isApiStatus } from '../../client/api-error.js';
import type { InstanceClient } from '../../client/client.js';
import type { OperationObject } from '../../client/envelope.js';
import type { Instance } from '../../client/instance.js';
import { causedBy, OWN_OPERATION_MAX_MS, type OwnOperation } from '../../events/intent.js';
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
      job: jobId,
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

/**
 * Whether an earlier run of this job started the instance and died before it recorded the call's
 * outcome (killed between the daemon taking the call and its reply, or while the operation ran
 * and long enough for the daemon to forget it): the calls of the job still `sending` or `running`
 * in Reflex's own operations (`own`, the instance's record as read at the moment of acting), and
 * the in-flight record's operation found gone (`gone`), one of
 * which the instance's last start (`last_used_at`) falls in. That run answered the incident; the
 * instance is down again by a decision this run may not see (an operator's stop whose frames died
 * with the worker): the job ends without acting. Answers the summary to record, or undefined.
 */
export function startedByEarlierRun(
  own: readonly OwnOperation[],
  jobId: string,
  instance: Pick<Instance, 'last_used_at' | 'status'>,
  gone?: Partial<OwnOperation> & { operationId: string },
): string | undefined {
  const at = instance.last_used_at;
  if (!at || Number.isNaN(Date.parse(at))) return undefined;
  const unsettled = own.filter((o) => o.job === jobId && (o.state === 'sending' || o.state === 'running'));
  if (gone?.action && gone.sentAt !== undefined)
    unsettled.push({ action: gone.action, state: 'running', sentAt: gone.sentAt, createdAt: gone.createdAt });
  // A start's or a restart's: each sets last_used_at.
  const started = unsettled.find((o) =>
    causedBy(o, { intent: 'requested', action: o.action === 'restart' ? 'instance-restarted' : 'instance-started', timestamp: at }),
  );
  if (!started) return undefined;
  return `an earlier run of this job sent ${started.action} at ${new Date(started.sentAt).toISOString()} and its worker stopped before the outcome was recorded; the instance last started at ${at}, by that call: the incident was answered, and it is ${instance.status} again since by a decision not seen here; not acting again`;
}
