import { Queue, QueueEvents } from 'bullmq';
import { Option, type Command } from 'commander';
import { AuditLog } from '../../audit/audit-log.js';
import { targetsOf } from '../../config/config-target.js';
import { queueHistory } from '../../config/queue-history.js';
import { dedupeWindowMs } from '../../errors/retry-policy.js';
import { connectRedis, duplicateConnection } from '../../redis/connect.js';
import { keySpace } from '../../redis/key-space.js';
import { InstanceClient } from '../../client/client.js';
import { formatDuration } from '../../schedules/housekeeping/duration-text.js';
import { ReflexError } from '../../errors/reflex-error.js';
import { checkHealRequest, withdrawUnclaimedHeal } from '../../remediation/heal-request.js';
import { queueHeal } from '../../remediation/operator-actions.js';
import { resolveConfig, withConnectionOptions } from '../config-options.js';
import { durationValue, operatorName, usageError } from '../option-values.js';

/**
 * `reflex heal NAME`: an operator's decision to bring an instance back (after an unknown-cause stop
 * Reflex would not guess about, or a quarantine). Queued as a `start` through the same executor as
 * every action (instance lock, fresh read, audit); as the operator's own decision, no rule, silence
 * or quarantine holds it back. Waits for the outcome.
 */
export function registerHeal(program: Command): void {
  withConnectionOptions(
    program
      .command('heal')
      .description("start an instance now through Reflex (an operator's decision, audited)")
      .argument('<instance>', 'instance name'),
  )
    .option('--project <name>', 'project of the instance', 'default')
    .option('--target-name <name>', 'which configured target (with a targets list)')
    .addOption(
      new Option('--wait <duration>', 'how long to wait for the outcome, e.g. 90s, 5m (0: do not wait)')
        .argParser(durationValue)
        .default(60_000, '60s'),
    )
    .action(async (instance: string, opts, cmd: Command) => {
      const config = resolveConfig(opts);
      const targets = targetsOf(config);
      const t = opts.targetName ? targets.find((x) => x.name === opts.targetName) : targets[0];
      if (!t) usageError(cmd, `--target-name: no configured target named ${opts.targetName} (have ${targets.map((x) => x.name).join(', ')})`);
      const client = new InstanceClient(t.target);
      const checked = await checkHealRequest(
        [{ id: t.id, name: t.name, client }],
        { target: t.id, project: opts.project, instance },
        { signal: AbortSignal.timeout(10_000) },
      ).finally(() => client.close());
      if ('problem' in checked) {
        if (checked.problem === 'invalid') usageError(cmd, checked.error);
        throw new ReflexError(checked.problem === 'missing' ? 'API_NOT_FOUND' : 'TARGET_UNREACHABLE', `${checked.error}; nothing queued`);
      }
      const keys = keySpace(config.prefix);
      const redis = await connectRedis(config.redisUrl);
      // Kept as the running Reflex keeps its jobs: the job options are fixed when it is added.
      const queue = new Queue(keys.actionsQueue, { connection: redis, prefix: keys.bullPrefix, defaultJobOptions: queueHistory(config) });
      const audit = new AuditLog(redis, keys.audit, {
        maxRecords: config.auditMaxRecords,
        maxAgeMs: config.auditMaxAgeMs,
        onceTtlMs: dedupeWindowMs(config.jobsKeepCompletedMs),
      });
      const blocking = duplicateConnection(redis);
      const events = new QueueEvents(keys.actionsQueue, { connection: blocking, prefix: keys.bullPrefix });
      try {
        await events.waitUntilReady();
        const by = { origin: 'cli', actor: operatorName() };
        const { jobId, correlationId } = await queueHeal({ queue, audit }, checked.ref, by, checked.identity);
        const job = (await queue.getJob(jobId))!;
        const waitMs = opts.wait as number;
        if (waitMs === 0) return void process.stdout.write(`queued ${job.id}\n`);
        const named = `${opts.project}/${instance}`;
        try {
          const outcome = (await job.waitUntilFinished(events, waitMs)) as { result?: string; summary?: string };
          process.stdout.write(`${named}: ${outcome?.result ?? 'done'}: ${outcome?.summary ?? ''}\n`);
        } catch (err) {
          process.exitCode = 1;
          if ((await job.getState()) === 'failed')
            return void process.stderr.write(`${named}: ${(err as Error).message} (reflex audit --instance ${instance})\n`);
          const within = formatDuration(waitMs);
          if (await withdrawUnclaimedHeal({ queue, audit }, { jobId, correlationId, ref: checked.ref, by }, `no worker took it within ${within}`)) {
            return void process.stderr.write(
              `reflex: ${named}: no worker took the heal within ${within} (is a reflex run with role worker or all running on prefix ${config.prefix}?); withdrawn, nothing started\n`,
            );
          }
          process.stderr.write(
            `reflex: ${named}: a worker has the heal, with no outcome within ${within}; it goes on (reflex audit --instance ${instance})\n`,
          );
        }
      } finally {
        await events.close();
        await queue.close();
        blocking.disconnect();
        redis.disconnect();
      }
    });
}
