import { UnrecoverableError } from 'bullmq';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit-log.js';
import type { InstanceClient } from '../client/client.js';
import { ApiError } from '../client/api-error.js';
import { isRetryable } from '../errors/reflex-error.js';
import type { ActionJob } from '../queue/payloads.js';
import type { ActionContext, ActionOutcome } from './action.js';
import { getAction } from './registry.js';
import type { SelfActions } from './self-actions.js';

/**
 * Runs one action job: marks the instance as being acted on by us, audits each API call and the
 * outcome, and decides whether a failure is worth a retry. The retry policy lives here, not in actions.
 */
export class ActionExecutor {
  constructor(
    private readonly deps: { client: (target: string) => InstanceClient; audit: AuditLog; selfActions: SelfActions; logger: Logger },
  ) {}

  /** Executes the job; throws to let BullMQ retry, or UnrecoverableError when a retry cannot help. */
  async execute(job: ActionJob, attempt: number, maxAttempts: number): Promise<ActionOutcome> {
    const { audit, selfActions, logger } = this.deps;
    const client = this.deps.client(job.target).withProject(job.project);
    const base = { correlationId: job.correlationId, instance: job.instance, target: job.target, rule: job.rule };
    const action = getAction(job.action);
    const ctx: ActionContext = {
      client,
      instance: job.instance,
      params: job.params,
      dryRun: job.dryRun,
      audit: (r) => audit.append({ ...base, ...r }).then(() => undefined),
      call: async (d, send) => {
        if (job.dryRun) {
          await audit.append({ ...base, type: 'call', summary: `dry-run: would ${d.method} ${d.path} (${d.action})`, method: d.method, path: d.path, dryRun: true });
          return undefined;
        }
        await selfActions.mark(job.target, job.instance, { action: d.action, state: 'in-flight', at: Date.now() });
        try {
          const op = await send();
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
      if (!retry) throw new UnrecoverableError(`${code}: ${(err as Error).message}`);
      throw err;
    }
  }
}
