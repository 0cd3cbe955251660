import { Queue } from 'bullmq';
import type { Command } from 'commander';
import { ReflexError } from '../../errors/reflex-error.js';
import { keySpace } from '../../redis/key-space.js';
import { connectRedis } from '../../redis/connect.js';
import { resolveConfig, withConnectionOptions } from '../config-options.js';

async function withActionsQueue<T>(opts: Record<string, unknown>, fn: (q: Queue) => Promise<T>): Promise<T> {
  const config = resolveConfig(opts);
  const keys = keySpace(config.prefix);
  const redis = await connectRedis(config.redisUrl);
  const queue = new Queue(keys.actionsQueue, { connection: redis, prefix: keys.bullPrefix });
  try {
    return await fn(queue);
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
    .option('--json', 'one JSON object per line')
    .action(async (opts) => {
      await withActionsQueue(opts, async (q) => {
        for (const job of await q.getFailed(0, 999)) {
          const row = { id: job.id, action: job.data.action, instance: job.data.instance, rule: job.data.rule, attempts: job.attemptsMade, failedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : undefined, reason: job.failedReason };
          process.stdout.write(opts.json ? `${JSON.stringify(row)}\n` : `${row.id}  ${row.failedAt}  ${row.instance}  ${row.rule}/${row.action}  after ${row.attempts} attempt(s): ${row.reason}\n`);
        }
      });
    });
  withConnectionOptions(dlq.command('retry').description('run failed action jobs again').argument('[id]', 'one job id (default: all, with --all)'))
    .option('--all', 'retry every failed job')
    .action(async (id: string | undefined, opts) => {
      if (!id && !opts.all) throw new ReflexError('CONFIG_INVALID', 'give a job id, or --all');
      const n = await withActionsQueue(opts, async (q) => {
        const jobs = id ? [await q.getJob(id)].filter((j) => j) : await q.getFailed(0, 9999);
        for (const job of jobs) await job!.retry('failed');
        return jobs.length;
      });
      process.stdout.write(`retried ${n} job(s)\n`);
      if (id && n === 0) process.exitCode = 1;
    });
}
