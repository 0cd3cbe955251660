import { Queue } from 'bullmq';
import type { Command } from 'commander';
import { AuditLog } from '../../audit/audit-log.js';
import { keySpace } from '../../redis/key-space.js';
import { retryDeadLetter } from '../../remediation/operator-actions.js';
import { connectRedis } from '../../redis/connect.js';
import { resolveConfig, withConnectionOptions } from '../config-options.js';
import { operatorName, printJson, usageError } from '../option-values.js';

async function withActionsQueue<T>(opts: Record<string, unknown>, fn: (q: Queue, audit: AuditLog) => Promise<T>): Promise<T> {
  const config = resolveConfig(opts);
  const keys = keySpace(config.prefix);
  const redis = await connectRedis(config.redisUrl);
  const queue = new Queue(keys.actionsQueue, { connection: redis, prefix: keys.bullPrefix });
  try {
    return await fn(queue, new AuditLog(redis, keys.audit));
  } finally {
    await queue.close();
    redis.disconnect();
  }
}

/**
 * `reflex dlq list|retry`: action jobs that gave up (a 4xx, or retries exhausted). They stay in
 * the actions queue's failed set, which is the dead-letter queue.
 */
export function registerDlq(program: Command): void {
  const dlq = program.command('dlq').description('dead-letter queue: actions that gave up');
  withConnectionOptions(dlq.command('list').description('list failed action jobs, newest first'))
    .option('--json', 'print one JSON array of {id, action, target, project, instance, rule, attempts, failedAt, reason}')
    .action(async (opts) => {
      const rows = await withActionsQueue(opts, async (q) =>
        (await q.getFailed(0, 999)).map((job) => ({
          id: job.id,
          action: job.data.action,
          target: job.data.target,
          project: job.data.project,
          instance: job.data.instance,
          rule: job.data.rule,
          attempts: job.attemptsMade,
          failedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
          reason: job.failedReason,
        })),
      );
      if (opts.json) return printJson(rows);
      for (const row of rows)
        process.stdout.write(
          `${row.id}  ${row.failedAt}  ${row.instance}  ${row.rule}/${row.action}  after ${row.attempts} attempt(s): ${row.reason}\n`,
        );
    });
  withConnectionOptions(dlq.command('retry').description('run failed action jobs again').argument('[id]', 'one job id (default: all, with --all)'))
    .option('--all', 'retry every failed job')
    .action(async (id: string | undefined, opts, cmd: Command) => {
      if (!id && !opts.all) usageError(cmd, 'give a job id, or --all');
      if (id && opts.all) usageError(cmd, 'give a job id or --all, not both');
      const n = await withActionsQueue(opts, async (queue, audit) => {
        const ids = id ? [id] : (await queue.getFailed(0, 9999)).map((j) => j.id!);
        let retried = 0;
        for (const jobId of ids) if (await retryDeadLetter({ queue, audit }, jobId, { origin: 'cli', actor: operatorName() })) retried++;
        return retried;
      });
      process.stdout.write(`retried ${n} job(s)\n`);
      if (id && n === 0) process.exitCode = 1;
    });
}
