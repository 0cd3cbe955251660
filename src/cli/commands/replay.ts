import type { Command } from 'commander';
import { AuditLog } from '../../audit/audit-log.js';
import { InstanceClient } from '../../client/client.js';
import { RecordingTransport } from '../../client/recording-transport.js';
import { targetOf } from '../../config/config-target.js';
import { keySpace } from '../../queue/names.js';
import { connectRedis } from '../../redis/connect.js';
import { replayAudit } from '../../rules/replay.js';
import { loadRules } from '../../rules/rule-loader.js';
import { resolveConfig, withConnectionOptions } from '../config-options.js';
import { parseDuration } from '../../config/duration.js';

/** `reflex replay`: recorded events through (new or changed) rules, in dry-run. */
export function registerReplay(program: Command): void {
  withConnectionOptions(program.command('replay').description('run recorded events through rules in dry-run; compare with what was done'))
    .option('--since <time>', 'how far back, e.g. 24h', '24h')
    .option('--json', 'one JSON object per rule')
    .action(async (opts) => {
      const config = resolveConfig(opts);
      const { rules, errors } = await loadRules(config.rulesDir);
      for (const e of errors) process.stderr.write(`skipped ${e.file}: ${e.message}\n`);
      const redis = await connectRedis(config.redisUrl);
      // Reads go to the server (rules see instances as they are now); any mutating request is refused unsent.
      const transport = new RecordingTransport(targetOf(config));
      const client = new InstanceClient(transport);
      try {
        const records = await new AuditLog(redis, keySpace(config.prefix).audit).read({ since: new Date(Date.now() - parseDuration(opts.since)) });
        const { events, rows } = await replayAudit(records, rules, client);
        process.stdout.write(opts.json ? '' : `replayed ${events} event(s) through ${rules.length} rule(s), dry-run\n`);
        for (const r of rows) {
          if (opts.json) process.stdout.write(`${JSON.stringify(r)}\n`);
          else process.stdout.write(`${r.rule}\n  would do: ${r.wouldDo.join(', ') || 'nothing'}\n  was done: ${r.didDo.join(', ') || 'nothing'}\n`);
        }
        if (transport.recorded.length) process.stderr.write(`refused ${transport.recorded.length} mutating request(s) (dry-run)\n`);
      } finally {
        await client.close();
        redis.disconnect();
      }
    });
}
