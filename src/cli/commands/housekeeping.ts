import type { Command } from 'commander';
import { InstanceClient } from '../../client/client.js';
import { RecordingTransport } from '../../client/recording-transport.js';
import { targetsOf } from '../../config/config-target.js';
import { ReflexError } from '../../errors/reflex-error.js';
import { loadRulesFolder } from '../../rules/rules-folder.js';
import { formatPlan } from '../../schedules/housekeeping/plan-format.js';
import { connectRedis } from '../../redis/connect.js';
import { keySpace } from '../../redis/key-space.js';
import { nextDue } from '../../schedules/next-due.js';
import { planSources } from '../../schedules/plan-source.js';
import { planTick } from '../../schedules/schedule-plan.js';
import { resolveConfig, withConnectionOptions } from '../config-options.js';
import { printJson } from '../option-values.js';

/** `reflex housekeeping plan`: what the next tick of each schedule would do, changing nothing. */
export function registerHousekeeping(program: Command): void {
  const hk = program.command('housekeeping').description('scheduled snapshots, retention and cleanup');
  withConnectionOptions(
    hk
      .command('plan')
      .description('print what the next tick would create, keep (and why) and delete; reads only')
      .argument('[schedule]', 'one schedule (default: every enabled schedule)'),
  )
    .option('--instance <name>', 'only this instance')
    .option('--json', 'one JSON document: { schedules: [{ name, tickAt, tickFrom, target, plans }], skipped }')
    .action(async (name: string | undefined, opts: { instance?: string; json?: boolean } & Record<string, unknown>) => {
      const config = resolveConfig(opts);
      const loaded = await loadRulesFolder(config.rulesDir);
      const schedules = loaded.schedules.filter((s) => (name === undefined ? s.enabled : s.name === name));
      if (name !== undefined && schedules.length === 0)
        throw new ReflexError(
          'RULE_INVALID',
          `no schedule "${name}" in ${config.rulesDir} (have: ${loaded.schedules.map((s) => s.name).join(', ') || 'none'})`,
        );
      const keys = keySpace(config.prefix);
      const redis = await connectRedis(config.redisUrl);
      const sources = planSources(redis, keys);
      const clients: InstanceClient[] = [];
      const out: { name: string; tickAt: string; tickFrom: string; target: string; plans: unknown[] }[] = [];
      try {
        for (const schedule of schedules) {
          const due = await nextDue(redis, keys, schedule);
          for (const t of targetsOf(config)) {
            // Reads only: a mutating call would be refused unsent.
            const client = new InstanceClient(new RecordingTransport(t.target));
            clients.push(client);
            const plans = await planTick(schedule, client, due.at, sources.source(t.id), { instance: opts.instance });
            out.push({ name: schedule.name, tickAt: new Date(due.at).toISOString(), tickFrom: due.from, target: t.name, plans });
            if (opts.json) continue;
            process.stdout.write(
              `${schedule.name} on ${t.name}: next tick ${new Date(due.at).toISOString()}${due.from === 'computed' ? ' (computed: no job scheduler in Redis yet)' : ''}${schedule.dryRun ? ' [dry-run]' : ''}\n`,
            );
            if (plans.length === 0) process.stdout.write(`  no instance in scope${opts.instance ? ` named ${opts.instance}` : ''}\n`);
            for (const p of plans) process.stdout.write(`${formatPlan(p).replace(/^/gm, '  ')}\n`);
          }
        }
      } finally {
        for (const c of clients) await c.close();
        await sources.close();
        redis.disconnect();
      }
      if (opts.json) printJson({ schedules: out, skipped: loaded.errors });
      else for (const e of loaded.errors) process.stderr.write(`skipped ${e.file}: ${e.message}\n`);
    });
}
