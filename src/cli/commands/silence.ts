import { InvalidArgumentError, Option, type Command } from 'commander';
import { parseFilter } from '../../filter/parser.js';
import { keySpace } from '../../redis/key-space.js';
import { connectRedis } from '../../redis/connect.js';
import { AuditLog } from '../../audit/audit-log.js';
import { scopeText, silenceMutes, Silences, type SilenceMute } from '../../silences/silences.js';
import { resolveConfig, withConnectionOptions } from '../config-options.js';
import { durationValue, printJson, usageError } from '../option-values.js';

async function withSilences<T>(opts: Record<string, unknown>, fn: (s: Silences) => Promise<T>): Promise<T> {
  const config = resolveConfig(opts);
  const redis = await connectRedis(config.redisUrl);
  try {
    const keys = keySpace(config.prefix);
    return await fn(new Silences(redis, keys.silences, new AuditLog(redis, keys.audit)));
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

function mutesValue(text: string): SilenceMute[] {
  const list = text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  const bad = list.find((m) => !(silenceMutes as readonly string[]).includes(m));
  if (bad !== undefined || !list.length) throw new InvalidArgumentError(`one or both of ${silenceMutes.join(', ')} (comma-separated)`);
  return list as SilenceMute[];
}

/** `reflex silence add|list|remove`: maintenance windows that suppress actions (recorded as suppressed). */
export function registerSilence(program: Command): void {
  const silence = program.command('silence').description('maintenance windows: suppress rule actions and mute notifications in a scope for a while');
  withConnectionOptions(silence.command('add').description('add a silence; at least one scope option, or --all'))
    .option('--instance <name>', 'only this instance')
    .option('--project <name>', 'only this project')
    .option('--member <name>', 'only this cluster member (location)')
    .option('--filter <expr>', 'filter-language expression on the instance, e.g. "config.user.tier eq db"', filterValue)
    .addOption(new Option('--all', 'everything (a global maintenance window)').conflicts(['instance', 'project', 'member', 'filter']))
    .addOption(new Option('--duration <time>', 'how long, e.g. 30m, 2h, 1h30m, 1w').argParser(durationValue).makeOptionMandatory())
    .requiredOption('--reason <text>', 'why (shown in the audit log)')
    .option('--mutes <what>', 'what it mutes: actions, notifications or actions,notifications (default both; actions with --filter)', mutesValue)
    .action(async (opts, cmd: Command) => {
      const scope = { instance: opts.instance, project: opts.project, location: opts.member, filter: opts.filter };
      if (!opts.all && !Object.values(scope).some(Boolean)) usageError(cmd, 'give a scope (--instance, --project, --member, --filter) or --all');
      const mutes = opts.mutes as SilenceMute[] | undefined;
      if (opts.filter && mutes?.includes('notifications'))
        usageError(
          cmd,
          '--filter cannot mute notifications (alerts do not carry the instance object the filter reads); scope by --instance, --project or --member',
        );
      const s = await withSilences(opts, (silences) =>
        silences.add({ scope, reason: opts.reason, durationMs: opts.duration as number, mutes, origin: 'cli' }),
      );
      process.stdout.write(`silence ${s.id} until ${s.until} (mutes ${s.mutes.join(', ')})\n`);
    });
  withConnectionOptions(silence.command('list').description('list the active silences'))
    .option('--json', 'print one JSON array of {id, scope, mutes, reason, createdBy, createdAt, until, origin?}')
    .action(async (opts) => {
      const list = await withSilences(opts, (s) => s.list());
      if (opts.json) return printJson(list);
      for (const s of list)
        process.stdout.write(`${s.id}  until ${s.until}  ${scopeText(s.scope)}  (${s.reason}, by ${s.createdBy})  mutes ${s.mutes.join(',')}\n`);
    });
  withConnectionOptions(silence.command('remove').description('remove a silence').argument('<id>')).action(async (id: string, opts) => {
    const removed = await withSilences(opts, (s) => s.remove(id, { origin: 'cli' }));
    if (!removed) {
      process.stderr.write(`no silence ${id}\n`);
      process.exitCode = 1;
    }
  });
}
