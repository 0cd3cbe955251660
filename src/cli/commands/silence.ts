import { InvalidArgumentError, Option, type Command } from 'commander';
import { parseFilter } from '../../filter/parser.js';
import { keySpace } from '../../redis/key-space.js';
import { connectRedis } from '../../redis/connect.js';
import { Silences } from '../../rules/silences.js';
import { resolveConfig, withConnectionOptions } from '../config-options.js';
import { durationValue, printJson, usageError } from '../option-values.js';

async function withSilences<T>(opts: Record<string, unknown>, fn: (s: Silences) => Promise<T>): Promise<T> {
  const config = resolveConfig(opts);
  const redis = await connectRedis(config.redisUrl);
  try {
    return await fn(new Silences(redis, keySpace(config.prefix).silences));
  } finally {
    redis.disconnect();
  }
}

function filterValue(text: string): string {
  try {
    parseFilter(text);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  return text;
}

/** `reflex silence add|list|remove`: maintenance windows that suppress actions (recorded as suppressed). */
export function registerSilence(program: Command): void {
  const silence = program.command('silence').description('maintenance windows: suppress rule actions in a scope for a while');
  withConnectionOptions(silence.command('add').description('add a silence; at least one scope option, or --all'))
    .option('--instance <name>', 'only this instance')
    .option('--project <name>', 'only this project')
    .option('--member <name>', 'only this cluster member (location)')
    .option('--filter <expr>', 'filter-language expression on the instance, e.g. "config.user.tier eq db"', filterValue)
    .addOption(new Option('--all', 'everything (a global maintenance window)').conflicts(['instance', 'project', 'member', 'filter']))
    .addOption(new Option('--duration <time>', 'how long, e.g. 30m, 2h, 1h30m, 1w').argParser(durationValue).makeOptionMandatory())
    .requiredOption('--reason <text>', 'why (shown in the audit log)')
    .action(async (opts, cmd: Command) => {
      const scope = { instance: opts.instance, project: opts.project, location: opts.member, filter: opts.filter };
      if (!opts.all && !Object.values(scope).some(Boolean)) usageError(cmd, 'give a scope (--instance, --project, --member, --filter) or --all');
      const s = await withSilences(opts, (silences) => silences.add({ scope, reason: opts.reason, durationMs: opts.duration as number }));
      process.stdout.write(`silence ${s.id} until ${s.until}\n`);
    });
  withConnectionOptions(silence.command('list').description('list the active silences'))
    .option('--json', 'print one JSON array of {id, scope, reason, createdBy, createdAt, until}')
    .action(async (opts) => {
      const list = await withSilences(opts, (s) => s.list());
      if (opts.json) return printJson(list);
      for (const s of list) {
        const scope = Object.entries(s.scope).filter(([, v]) => v).map(([k, v]) => `${k}=${v}`).join(' ') || 'everything';
        process.stdout.write(`${s.id}  until ${s.until}  ${scope}  (${s.reason}, by ${s.createdBy})\n`);
      }
    });
  withConnectionOptions(silence.command('remove').description('remove a silence').argument('<id>'))
    .action(async (id: string, opts) => {
      const removed = await withSilences(opts, (s) => s.remove(id));
      if (!removed) {
        process.stderr.write(`no silence ${id}\n`);
        process.exitCode = 1;
      }
    });
}
