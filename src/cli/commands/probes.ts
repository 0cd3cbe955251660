import type { Command } from 'commander';
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
          `${r.name}  ${r.check} ${r.command?.join(' ') ?? r.url ?? `port ${r.port}`}  every ${r.periodMs} ms, timeout ${r.timeoutMs} ms, unhealthy after ${r.failureThreshold}, healthy after ${r.successThreshold}${r.enabled ? '' : '  (disabled)'}\n`,
        );
      if (set.errors.length) process.exitCode = 3;
    });
  withConnectionOptions(p.command('status').description('each probe of each instance as last checked'))
    .option('--instance <name>', 'only this instance')
    .option(
      '--json',
      'print one JSON array of {target, project, identity, instance, probe, health, failures, successes, lastAt, lastOutcome, lastOutput, changedAt}',
    )
    .action(async (opts: Record<string, unknown> & { instance?: string; json?: boolean }) => {
      const config = resolveConfig(opts);
      const redis = await connectRedis(config.redisUrl);
      try {
        const rows = (await readProbeStatus(redis, keySpace(config.prefix))).filter((r) => !opts.instance || r.instance === opts.instance);
        if (opts.json) return printJson(rows);
        for (const r of rows)
          process.stdout.write(
            `${r.project}/${r.instance}  ${r.probe}  ${r.health}  (${r.failures} failure(s), ${r.successes} success(es) in a row; last ${r.lastOutcome ?? '-'} at ${r.lastAt ?? '-'}: ${(r.lastOutput ?? '').split('\n')[0]})\n`,
          );
      } finally {
        redis.disconnect();
      }
    });
}
