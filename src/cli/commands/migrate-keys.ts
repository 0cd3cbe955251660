import type { Command } from 'commander';
import { targetsOf } from '../../config/config-target.js';
import { ReflexError } from '../../errors/reflex-error.js';
import { connectRedis, redisKind, type RedisConnection } from '../../redis/connect.js';
import { migrateKeyLayout } from '../../redis/key-layout-migration.js';
import { keySpace } from '../../redis/key-space.js';
import { resolveConfig, withConnectionOptions } from '../config-options.js';
import { printJson } from '../option-values.js';

/**
 * Connections of Reflex processes using the queues under the old or the new prefix: BullMQ names
 * its workers' and event readers' connections `<bull prefix>:<queue name in base64>…`. Read with
 * CLIENT LIST rather than through a BullMQ Queue, which would write the queue's meta key.
 */
async function connectedReflexClients(redis: RedisConnection, prefix: string): Promise<number | undefined> {
  const starts = [`${prefix}:bull:`, `${keySpace(prefix).bullPrefix}:`];
  try {
    const list = String(await redis.call('CLIENT', 'LIST'));
    return list.split('\n').filter((line) => {
      const name = /(?:^| )name=(\S*)/.exec(line)?.[1] ?? '';
      return starts.some((s) => name.startsWith(s));
    }).length;
  } catch {
    return undefined; // CLIENT LIST refused (managed Redis)
  }
}

/** `reflex migrate-keys`: renames the keys of the layout before hash tags to their current names. */
export function registerMigrateKeys(program: Command): void {
  withConnectionOptions(
    program
      .command('migrate-keys')
      .description('rename Redis keys of the layout before Redis Cluster hash tags (Reflex before this version) to their current names; stop every Reflex process first'),
  )
    .option('--dry-run', 'print the renames without doing them')
    .option('--json', 'print {renamed, conflicts, unknown} as JSON')
    .action(async (opts) => {
      const config = resolveConfig(opts);
      if (redisKind(config.redisUrl) === 'cluster') {
        throw new ReflexError('CONFIG_INVALID', 'migrate-keys runs on the single Redis or Sentinel master the old version used, not on a Redis Cluster: migrate there, then move the data');
      }
      const targets = targetsOf(config).map((t) => t.id);
      const redis = await connectRedis(config.redisUrl);
      try {
        const workers = await connectedReflexClients(redis, config.prefix);
        if (workers === undefined) process.stderr.write('reflex: could not list Redis clients (CLIENT LIST refused): make sure no Reflex process runs\n');
        else if (workers > 0 && !opts.dryRun) {
          throw new ReflexError('CONFIG_INVALID', `${workers} connection(s) of Reflex workers are open on the queues of prefix ${config.prefix}: stop every Reflex process first (a running one would write old names while the keys move)`);
        }
        const res = await migrateKeyLayout(redis, config.prefix, targets, { dryRun: Boolean(opts.dryRun) });
        if (opts.json) printJson(res);
        else {
          const verb = opts.dryRun ? 'would rename' : 'renamed';
          for (const [from, to] of res.renamed) process.stdout.write(`${verb} ${from} -> ${to}\n`);
          for (const [from, to] of res.conflicts) process.stdout.write(`left ${from}: ${to} exists already\n`);
          for (const key of res.unknown) process.stdout.write(`left ${key}: not explained by the configured targets (${targets.join(', ')})\n`);
          process.stdout.write(`${verb} ${res.renamed.length} key(s); ${res.conflicts.length} conflict(s); ${res.unknown.length} left for other targets\n`);
        }
        if (res.conflicts.length || res.unknown.length) process.exitCode = 1;
      } finally {
        redis.disconnect();
      }
    });
}
