import { Option, type Command } from 'commander';
import { InstanceClient } from '../../client/client.js';
import { RecordingTransport } from '../../client/recording-transport.js';
import { targetsOf } from '../../config/config-target.js';
import { connectRedis } from '../../redis/connect.js';
import { replayAudit } from '../../rules/replay.js';
import { loadRulesFolder } from '../../rules/rules-folder.js';
import { openAuditReading } from '../audit-history.js';
import { configFileOf, resolveConfig, withConnectionOptions } from '../config-options.js';
import { timeValue } from '../option-values.js';

/** `reflex replay`: recorded events through (new or changed) rules, in dry-run. */
export function registerReplay(program: Command): void {
  withConnectionOptions(program.command('replay').description('run recorded events through rules in dry-run; compare with what was done'))
    .addOption(
      new Option('--since <when>', 'how far back: a duration (24h, 1h30m, 2w) or an ISO timestamp')
        .argParser(timeValue)
        .default(new Date(Date.now() - 86_400_000), '24h'),
    )
    .option('--json', 'JSON Lines: one {rule, wouldDo, didDo} object per rule, no header line')
    .action(async (opts) => {
      const config = resolveConfig(opts);
      const { rules, errors } = await loadRulesFolder(config.rulesDir);
      for (const e of errors) process.stderr.write(`skipped ${e.file}: ${e.message}\n`);
      const redis = await connectRedis(config.redisUrl);
      const audit = openAuditReading(config, redis, configFileOf(opts));
      // Reads go to each server (rules see instances as they are now); any mutating request is refused unsent.
      const readers = new Map(
        targetsOf(config).map((t) => [t.id, { transport: new RecordingTransport(t.target), client: undefined as InstanceClient | undefined }]),
      );
      for (const r of readers.values()) r.client = new InstanceClient(r.transport);
      // One target: every recorded event is read there (as the events may name it by another spelling).
      const only = readers.size === 1 ? [...readers.values()][0]!.client : undefined;
      const client = (target: string) => only ?? readers.get(target)?.client;
      try {
        const records = await audit.log.read({ since: opts.since as Date });
        const { events, rows } = await replayAudit(records, rules, client);
        const refused = [...readers.values()].reduce((n, r) => n + r.transport.recorded.length, 0);
        process.stdout.write(opts.json ? '' : `replayed ${events} event(s) through ${rules.length} rule(s), dry-run\n`);
        for (const r of rows) {
          if (opts.json) process.stdout.write(`${JSON.stringify(r)}\n`);
          else process.stdout.write(`${r.rule}\n  would do: ${r.wouldDo.join(', ') || 'nothing'}\n  was done: ${r.didDo.join(', ') || 'nothing'}\n`);
        }
        if (refused) process.stderr.write(`refused ${refused} mutating request(s) (dry-run)\n`);
      } finally {
        for (const r of readers.values()) await r.client?.close();
        redis.disconnect();
        await audit.close();
      }
    });
}
