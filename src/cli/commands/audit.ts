import type { Command } from 'commander';
import { AuditLog, type StoredAuditRecord } from '../../audit/audit-log.js';
import { keySpace } from '../../queue/names.js';
import { connectRedis } from '../../redis/connect.js';

function line(r: StoredAuditRecord): string {
  const who = [r.instance, r.rule].filter(Boolean).join(' ');
  return `${r.at}  ${r.type.padEnd(8)} ${who.padEnd(30)} ${r.summary}`;
}

/** `reflex audit`: prints the audit trail, oldest first. */
export function registerAudit(program: Command): void {
  program
    .command('audit')
    .description('print the audit log, oldest first')
    .option('--redis <url>', 'Redis URL (env REDIS_URL)', process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
    .option('--prefix <prefix>', 'Redis key prefix (env REFLEX_PREFIX)', process.env.REFLEX_PREFIX ?? 'reflex')
    .option('--instance <name>', 'only records about this instance')
    .option('--json', 'one JSON object per line')
    .action(async (opts) => {
      const redis = await connectRedis(opts.redis);
      try {
        const records = await new AuditLog(redis, keySpace(opts.prefix).audit).read({ instance: opts.instance });
        const out = records.map((r) => (opts.json ? JSON.stringify(r) : line(r))).join('\n');
        if (out) process.stdout.write(`${out}\n`);
      } finally {
        redis.disconnect();
      }
    });
}
