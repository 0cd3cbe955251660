import type { Command } from 'commander';
import { CrashLoopBudget } from '../../remediation/crash-loop-budget.js';
import { targetsOf } from '../../config/config-target.js';
import { keySpace } from '../../redis/key-space.js';
import { connectRedis } from '../../redis/connect.js';
import { resolveConfig, withConnectionOptions } from '../config-options.js';

/** `reflex quarantine list|release`: instances taken out of remediation after a crash loop. */
export function registerQuarantine(program: Command): void {
  const q = program.command('quarantine').description('instances Reflex stopped restarting after a crash loop');
  withConnectionOptions(q.command('list').description('list quarantined instances')).action(async (opts) => {
    const config = resolveConfig(opts);
    const redis = await connectRedis(config.redisUrl);
    try {
      const pattern = `${config.prefix}:quarantine:*`;
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        cursor = next;
        for (const k of keys) {
          const since = Number(await redis.get(k));
          process.stdout.write(`${k.slice(pattern.length - 1)}  since ${new Date(since).toISOString()}\n`);
        }
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  });
  withConnectionOptions(q.command('release').description('lift the quarantine of an instance and forget its restart history').argument('<instance>'))
    .option('--project <name>', 'project of the instance', 'default')
    .action(async (instance: string, opts) => {
      const config = resolveConfig(opts);
      const targets = targetsOf(config).map((t) => t.id);
      const keys = keySpace(config.prefix);
      const redis = await connectRedis(config.redisUrl);
      try {
        // With several targets, the instance is released on whichever holds it.
        let released = false;
        for (const target of targets) {
          if (await new CrashLoopBudget(redis).release({ restarts: keys.restarts({ target, project: opts.project, instance }), quarantine: keys.quarantine({ target, project: opts.project, instance }) })) released = true;
        }
        process.stdout.write(released ? `released ${opts.project}/${instance}\n` : `${opts.project}/${instance} was not quarantined\n`);
      } finally {
        redis.disconnect();
      }
    });
}
