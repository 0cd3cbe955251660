import { Option, type Command } from 'commander';
import type { Probe } from '../../probes/probe.js';
import { readProbeStatus } from '../../probes/probe-status.js';
import { keySpace } from '../../redis/key-space.js';
import { connectRedis } from '../../redis/connect.js';
import { loadRuleSet } from '../../rules/rule-set.js';
import { resolveConfig, withConnectionOptions } from '../config-options.js';
import { printJson } from '../option-values.js';

/** `reflex probes list|status`: the health probes of the rules folder, and each instance's health as last checked. */
export function registerProbes(program: Command): void {
  const p = program.command('probes').description('health probes: those of the rules folder, and what they last found (docs/probes.md)');
  p.command('list')
    .description('list the probes of the rules folder')
    .argument('[dir]', "rules folder (default: --rules, REFLEX_RULES or the config file's rulesDir)")
    .option('--json', 'print one JSON array of the probes')
    .action(async (dir: string | undefined, opts: { json?: boolean }) => {
      const set = await loadRuleSet({ dir: dir ?? resolveConfig({}).rulesDir });
      for (const e of set.errors) process.stderr.write(`${e.file}${e.line ? `:${e.line}` : ''}: ${e.message}\n`);
      const rows = set.loaded.probes.map(({ scopeFilter: _, ...rest }) => rest);
      if (opts.json) return printJson(rows);
      for (const r of set.loaded.probes)
        process.stdout.write(
          `${r.name}  ${r.check} ${what(r)}  every ${r.periodMs} ms, timeout ${r.timeoutMs} ms, unhealthy after ${r.failureThreshold}, healthy after ${r.successThreshold}${r.initialDelayMs ? `, grace ${r.initialDelayMs} ms` : ''}${r.enabled ? '' : '  (disabled)'}\n  scope: ${scopeOf(r)}\n`,
        );
      if (set.errors.length) process.exitCode = 3;
    });
  withConnectionOptions(p.command('status').description('each probe of each instance as last checked'))
    .option('--instance <name>', 'only this instance')
    .addOption(new Option('--health <health>', 'only the probes of this health').choices(['healthy', 'unhealthy', 'unknown']))
    .option(
      '--json',
      'print one JSON array of {target, project, identity, instance, probe, health, failures, successes, lastAt, lastOutcome, lastOutput, changedAt, notRunning}',
    )
    .action(async (opts: Record<string, unknown> & { instance?: string; health?: string; json?: boolean }) => {
      const config = resolveConfig(opts);
      const redis = await connectRedis(config.redisUrl);
      try {
        const all = await readProbeStatus(redis, keySpace(config.prefix));
        const rows = all.filter((r) => (!opts.instance || r.instance === opts.instance) && (!opts.health || r.health === opts.health));
        // Nothing under the prefix, or no such instance, is a question asked of the wrong place: said, exit 1.
        const missing =
          all.length === 0
            ? `no probe state under prefix ${config.prefix}: no probe has run there (is the prefix right? probes run in the scheduler role)`
            : opts.instance && !all.some((r) => r.instance === opts.instance)
              ? `no probe state for instance ${opts.instance} under prefix ${config.prefix}`
              : undefined;
        if (missing) {
          process.stderr.write(`reflex: ${missing}\n`);
          process.exitCode = 1;
        }
        if (opts.json) return printJson(rows);
        for (const r of rows)
          process.stdout.write(
            `${r.project}/${r.instance}  ${r.probe}  ${r.health}${r.notRunning ? ` (not Running: ${r.notRunning})` : ''}  (${r.failures} failure(s), ${r.successes} success(es) in a row; last ${r.lastOutcome ?? '-'} at ${r.lastAt ?? '-'}: ${(r.lastOutput ?? '').split('\n')[0]})\n`,
          );
        if (!missing && rows.length === 0)
          process.stderr.write(`no probe is ${opts.health} (${all.length} probe state(s) under prefix ${config.prefix})\n`);
      } finally {
        redis.disconnect();
      }
    });
}

/** What a probe checks: its command, its URL or port, and where when not the instance's own address. */
function what(p: Probe): string {
  if (p.check === 'exec') return p.command!.join(' ');
  const on = p.host ? ` on ${p.host}` : '';
  if (p.check === 'tcp') return `port ${p.port}${on}`;
  return `${p.url ?? '/'} port ${p.port ?? 80}${on}`;
}

/** Which instances a probe covers, as declared. */
function scopeOf(p: Probe): string {
  const parts = [p.projects && `projects ${p.projects.join(', ')}`, p.targets && `targets ${p.targets.join(', ')}`, p.filter && `filter ${p.filter}`];
  return parts.filter(Boolean).join('; ') || 'every instance of every project and target';
}
