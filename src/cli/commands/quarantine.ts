import type { Command } from 'commander';
import { AuditLog } from '../../audit/audit-log.js';
import { CrashLoopBudget } from '../../remediation/crash-loop-budget.js';
import { releaseQuarantine } from '../../remediation/operator-actions.js';
import { targetsOf } from '../../config/config-target.js';
import { instanceOfKey, keySpace } from '../../redis/key-space.js';
import { connectRedis } from '../../redis/connect.js';
import { scanKeys } from '../../redis/scan-keys.js';
import { resolveConfig, withConnectionOptions } from '../config-options.js';
import { operatorName, printJson } from '../option-values.js';

/** `reflex quarantine list|release`: instances taken out of remediation after a crash loop. */
export function registerQuarantine(program: Command): void {
  const q = program.command('quarantine').description('instances Reflex stopped restarting after a crash loop');
  withConnectionOptions(q.command('list').description('list quarantined instances'))
    .option('--json', 'print one JSON array of {target, project, instance, identity, since, until}')
    .action(async (opts) => {
      const config = resolveConfig(opts);
      const redis = await connectRedis(config.redisUrl);
      const rows: { target: string; project: string; instance: string; identity: string | null; since: string; until: string | null }[] = [];
      try {
        const keys = keySpace(config.prefix);
        const budget = new CrashLoopBudget(redis);
        for await (const k of scanKeys(redis, keys.quarantinePattern)) {
          const ref = instanceOfKey(config.prefix, k);
          if (!ref) continue;
          const [q, ttl] = await Promise.all([budget.quarantine({ restarts: keys.restarts(ref), quarantine: k }), redis.pttl(k)]);
          if (!q) continue; // expired between SCAN and GET
          // The instance it was imposed on: a new instance under the name is not held by it.
          rows.push({
            ...ref,
            identity: q.holder,
            since: new Date(q.since).toISOString(),
            until: ttl > 0 ? new Date(Date.now() + ttl).toISOString() : null,
          });
        }
      } finally {
        redis.disconnect();
      }
      rows.sort((a, b) => a.since.localeCompare(b.since));
      if (opts.json) return printJson(rows);
      for (const r of rows)
        process.stdout.write(
          `${r.project}/${r.instance}  since ${r.since}${r.until ? `  until ${r.until}` : ''}  (${r.target}${r.identity ? `, instance ${r.identity}` : ''})\n`,
        );
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
        const audit = new AuditLog(redis, keys.audit);
        let released = false;
        for (const target of targets) {
          if (await releaseQuarantine({ redis, keys, audit }, { target, project: opts.project, instance }, { origin: 'cli', actor: operatorName() }))
            released = true;
        }
        process.stdout.write(released ? `released ${opts.project}/${instance}\n` : `${opts.project}/${instance} was not quarantined\n`);
      } finally {
        redis.disconnect();
      }
    });
}
