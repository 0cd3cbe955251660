import { UnrecoverableError, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit-log.js';
import type { InstanceClient } from '../client/client.js';
import { ApiError, isApiStatus } from '../client/api-error.js';
import { isRetryable } from '../errors/reflex-error.js';
import type { ActionJob, EventJob } from '../events/event-job.js';
import type { ActionContext, ActionOutcome } from '../actions/action.js';
import { getAction } from '../actions/registry.js';
import type { SelfActions } from '../events/self-marks.js';
import type { InstanceLock } from '../redis/token-lock.js';
import type { KeySpace } from '../redis/key-space.js';
import type { Metrics } from '../metrics/metrics.js';
import { isFinalOperationCode } from '../client/status-code.js';
import { parseSource } from '../events/normalize.js';
import type { OperationObject } from '../client/envelope.js';

/** How old a listing of the server's operations may be when an action checks for others' work on its instance. */
const OPERATIONS_MAX_AGE_MS = 250;

/** Returned instead of an outcome when another action holds the instance: the caller re-queues the job shortly. */
export const instanceBusy = Symbol('instance-busy');

/**
 * Runs one action job: marks the instance as being acted on by us, audits each API call and the
 * outcome, and decides whether a failure is worth a retry. The retry policy lives here, not in actions.
 */
export class ActionExecutor {
  constructor(
    private readonly deps: {
      client: (target: string) => InstanceClient;
      audit: AuditLog;
      selfActions: SelfActions;
      lock: InstanceLock;
      keys: KeySpace;
      redis: Redis;
      logger: Logger;
      /** Counts outcomes and retries; none: not counted. */
      metrics?: Metrics;
      /** Where the `emit` action publishes follow-up events; none: `emit` fails. */
      events?: Queue;
      /** Forwards the alert of an action that gave up to the notification receivers; none: audited only. */
      raiseAlert?: (alert: { kind: string; severity: 'critical'; summary: string; target: string; project: string; instance: string; correlationId: string }) => Promise<unknown>;
    },
  ) {}

  /**
   * An action job failed for good (a 4xx, retries exhausted, or its worker killed more often than
   * the queue allows): it now waits in the dead-letter queue. Records the give-up and raises one
   * alert, so it is neither silent nor lost (`reflex dlq list|retry`).
   */
  async gaveUp(job: ActionJob, jobId: string, reason: string, attempts: number): Promise<void> {
    const { audit } = this.deps;
    const base = { correlationId: job.correlationId, instance: job.instance, target: job.target, rule: job.rule };
    const summary = `${job.action} on ${job.instance} gave up after ${attempts} attempt(s): ${reason}; job ${jobId} is in the dead-letter queue (reflex dlq list, reflex dlq retry)`;
    await audit.append({ ...base, type: 'give-up', summary, jobId, attempts });
    await audit.append({ ...base, type: 'alert', summary, severity: 'critical' });
    await this.deps.raiseAlert?.({ kind: 'action-failed', severity: 'critical', summary, target: job.target, project: job.project, instance: job.instance, correlationId: job.correlationId });
  }

  /**
   * Executes the job under the instance's lock; throws to let BullMQ retry, or UnrecoverableError
   * when a retry cannot help. Returns {@link instanceBusy} when another action holds the instance.
   */
  async execute(job: ActionJob, jobId: string, attempt: number, maxAttempts: number): Promise<ActionOutcome | typeof instanceBusy> {
    const { keys } = this.deps;
    const held = await this.deps.lock.tryAcquire(keys.instanceLock(job.target, job.project, job.instance));
    if (!held) return instanceBusy;
    try {
      const outcome = await this.executeLocked(job, jobId, attempt, maxAttempts);
      this.deps.metrics?.actions.inc({ action: job.action, outcome: outcome.result });
      return outcome;
    } catch (err) {
      const retrying = !(err instanceof UnrecoverableError) && attempt < maxAttempts;
      this.deps.metrics?.actions.inc({ action: job.action, outcome: retrying ? 'retrying' : 'failed' });
      if (retrying) this.deps.metrics?.actionRetries.inc({ action: job.action });
      throw err;
    } finally {
      await held.release();
    }
  }

  private async executeLocked(job: ActionJob, jobId: string, attempt: number, maxAttempts: number): Promise<ActionOutcome> {
    const { audit, selfActions, logger, redis, keys, events } = this.deps;
    const client = this.deps.client(job.target).withProject(job.project);
    const base = { correlationId: job.correlationId, instance: job.instance, target: job.target, rule: job.rule };
    const resumed = await this.resume(job, jobId, client, base);
    if (resumed) return resumed;
    await this.waitForOthersOperations(client, job.instance, job.target, job.project);
    const action = getAction(job.action);
    const ctx: ActionContext = {
      client,
      instance: job.instance,
      params: job.params,
      dryRun: job.dryRun,
      audit: (r) => audit.append({ ...base, ...r }).then(() => undefined),
      job: { rule: job.rule, correlationId: job.correlationId, target: job.target, project: job.project, location: job.location ?? 'none', chain: job.chain ?? [] },
      ...(events ? { publish: async (event, id) => void (await events.add(event.kind, { kind: 'synthetic', target: event.target, event, receivedAt: Date.now() } satisfies EventJob, { jobId: id })) } : {}),
      call: async (d, send) => {
        if (job.dryRun) {
          await audit.append({ ...base, type: 'call', summary: `dry-run: would ${d.method} ${d.path} (${d.action})`, method: d.method, path: d.path, dryRun: true });
          return undefined;
        }
        await selfActions.mark(job.target, job.instance, { action: d.action, state: 'in-flight', at: Date.now() });
        try {
          const op = await send();
          if (!op) {
            // A synchronous call (e.g. PATCH): done when it answered.
            await selfActions.mark(job.target, job.instance, { action: d.action, state: 'done', at: Date.now() });
            await audit.append({ ...base, type: 'call', summary: `${d.method} ${d.path} (${d.action}) → done`, method: d.method, path: d.path, attempt });
            return undefined;
          }
          // Persisted before waiting: a worker killed now resumes waiting on this operation instead of acting again.
          await redis.set(keys.inflight(jobId), op.id, 'PX', 3_600_000);
          await audit.append({ ...base, type: 'call', summary: `${d.method} ${d.path} (${d.action}) → operation ${op.id}`, method: d.method, path: d.path, operationId: op.id, attempt });
          try {
            await op.wait({ timeoutMs: 120_000 });
          } finally {
            const failed = op.value.status_code !== 200;
            await selfActions.mark(job.target, job.instance, { action: d.action, state: failed ? 'failed' : 'done', at: Date.now(), operationId: op.id });
          }
          return op;
        } catch (err) {
          await selfActions.mark(job.target, job.instance, { action: d.action, state: 'failed', at: Date.now() });
          if (err instanceof ApiError && err.path === d.path) {
            await audit.append({ ...base, type: 'call', summary: `${d.method} ${d.path} (${d.action}) refused: ${err.message}`, method: d.method, path: d.path, status: err.status, attempt });
          }
          throw err;
        }
      },
    };
    try {
      const outcome = await action.run(ctx);
      await redis.del(keys.inflight(jobId));
      await audit.append({ ...base, type: 'outcome', summary: `${job.action}: ${outcome.summary}`, result: outcome.result, operationId: outcome.operationId, attempt });
      logger.info({ instance: job.instance, rule: job.rule, action: job.action, result: outcome.result }, outcome.summary);
      return outcome;
    } catch (err) {
      const retry = isRetryable(err) && attempt < maxAttempts;
      const code = (err as { code?: string }).code ?? 'UNKNOWN';
      await audit.append({
        ...base,
        type: 'outcome',
        summary: `${job.action} failed (${code}): ${(err as Error).message}${retry ? `; retrying (attempt ${attempt} of ${maxAttempts})` : '; giving up'}`,
        result: retry ? 'retrying' : 'failed',
        code,
        attempt,
      });
      logger.warn({ instance: job.instance, action: job.action, err: (err as Error).message, retry }, 'action failed');
      await redis.del(keys.inflight(jobId));
      if (!retry) throw new UnrecoverableError(`${code}: ${(err as Error).message}`);
      throw err;
    }
  }

  /**
   * A previous run of this job (killed mid-action) left the id of the operation it was waiting on:
   * wait on that one and record its outcome instead of acting again. When the operation is already
   * gone, fall through: the action re-reads the instance and does nothing if the goal holds.
   */
  private async resume(job: ActionJob, jobId: string, client: InstanceClient, base: Record<string, string>): Promise<ActionOutcome | undefined> {
    const { redis, keys, audit } = this.deps;
    const opId = await redis.get(keys.inflight(jobId));
    if (!opId) return undefined;
    let summary: string;
    try {
      const op = await client.getOperation(opId);
      const final = await op.wait({ timeoutMs: 120_000 });
      summary = `resumed after a restart of the worker: operation ${opId} ended ${final.status}`;
    } catch (err) {
      if (isApiStatus(err, 404) || (err as { code?: string }).code === 'OPERATION_VANISHED') {
        await redis.del(keys.inflight(jobId));
        await audit.append({ ...base, type: 'call', summary: `operation ${opId} of an earlier attempt is gone; re-checking the instance` });
        return undefined;
      }
      throw err;
    }
    await redis.del(keys.inflight(jobId));
    const outcome: ActionOutcome = { result: 'done', summary, operationId: opId };
    await audit.append({ ...base, type: 'outcome', summary: `${job.action}: ${summary}`, result: 'done', operationId: opId, resumed: true });
    return outcome;
  }

  private readonly operationListings = new Map<string, { at: number; list: Promise<OperationObject[]> }>();

  private recentOperations(client: InstanceClient, key: string): Promise<OperationObject[]> {
    const cached = this.operationListings.get(key);
    if (cached && Date.now() - cached.at < OPERATIONS_MAX_AGE_MS) return cached.list;
    const list = client.listOperations();
    this.operationListings.set(key, { at: Date.now(), list });
    list.catch(() => this.operationListings.delete(key));
    return list;
  }

  /**
   * Waits (bounded) for operations someone else is running on the instance, so we act on the
   * settled state. The server lists every operation of the last seconds, whatever its instance; in
   * a storm of actions each listing would grow with the others, so concurrent actions on one
   * target share a listing up to {@link OPERATIONS_MAX_AGE_MS} old. An operation started since is
   * caught by the daemon's own instance lock: the call is refused as busy, and retried.
   */
  private async waitForOthersOperations(client: InstanceClient, instance: string, target: string, project: string): Promise<void> {
    let ops;
    try {
      ops = await this.recentOperations(client, `${target}\u0000${project}`);
    } catch {
      return; // listing is an optimisation: the action re-reads state anyway
    }
    for (const op of ops) {
      if (isFinalOperationCode(op.status_code) || op.class !== 'task') continue;
      const paths = Object.values(op.resources ?? {}).flat();
      if (!paths.some((p) => parseSource(p).instance === instance)) continue;
      try {
        await (await client.getOperation(op.id)).wait({ timeoutMs: 30_000 });
      } catch {
        // Its failure is its own business; the action re-reads the state next.
      }
    }
  }
}
