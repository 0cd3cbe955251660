import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Instance } from '../../client/instance.js';
import { ReflexError } from '../../errors/reflex-error.js';
import type { CanonicalEvent } from '../../events/canonical-event.js';
import { resolveConfig, withConnectionOptions } from '../config-options.js';
import { durationValue, printJson, readOptionJson, usageError } from '../option-values.js';

// Each sub-command imports what it uses when it runs: `rules check` (run on every edit) loads the
// type-checker and the rules, not the API client, the rule engine or the Redis client.

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A test event file holds a canonical event, or a raw frame as the daemon sends it. */
async function readEvent(path: string, target: string): Promise<CanonicalEvent> {
  const [{ canonicalEventSchema }, { decodeFrame }, { normalizeFrame }] = await Promise.all([
    import('../../events/canonical-event.js'),
    import('../../events/frame.js'),
    import('../../events/normalize.js'),
  ]);
  const text = readFileSync(path, 'utf8');
  // Text that is not JSON is not a canonical event; decodeFrame below says what is wrong with it.
  const canonical = canonicalEventSchema.safeParse(jsonOrUndefined(text));
  if (canonical.success) return canonical.data;
  const decoded = decodeFrame(text);
  if (!decoded.ok)
    throw new ReflexError('EVENT_MALFORMED', `${path}: neither a canonical event nor a valid frame: ${decoded.reason.replace(/\s+/g, ' ')}`);
  const event = normalizeFrame(decoded.frame, target);
  if (!event) throw new ReflexError('EVENT_MALFORMED', `${path}: a logging frame; rules never see those`);
  return event;
}

/** `reflex rules check|list|init|test|reload`. */
export function registerRules(program: Command): void {
  const rules = program.command('rules').description('check, list and try out rules');
  rules
    .command('check')
    .description('type-check and validate the rule files; file:line:column for every problem')
    .argument('[dir]', "rules folder (default: --rules, REFLEX_RULES or the config file's rulesDir)")
    .option('--json', 'one JSON document: { rules, probes, problems }')
    .action(async (dir: string | undefined, opts: { json?: boolean }) => {
      const folder = dir ?? resolveConfig({}).rulesDir;
      // The TypeScript compiler is big: load it only for the commands that type-check.
      const { checkRules, formatProblem } = await import('../../rules/rule-checker.js');
      const { rules: ok, probes, problems } = await checkRules(folder);
      if (opts.json) printJson({ rules: ok, probes, problems });
      else {
        for (const p of problems) process.stderr.write(`${formatProblem(p)}\n`);
        process.stdout.write(
          `${ok.length} rule(s) valid${ok.length ? `: ${ok.join(', ')}` : ''}; ${probes.length} probe(s)${probes.length ? `: ${probes.join(', ')}` : ''}; ${problems.length} problem(s)\n`,
        );
      }
      if (problems.length) process.exitCode = 1;
    });
  rules
    .command('list')
    .description(
      'list the rules that load (triggers and actions), the schedules (timing and tasks), the health probes (check and period) and the notification receivers (names and kinds)',
    )
    .argument('[dir]', "rules folder (default: --rules, REFLEX_RULES or the config file's rulesDir)")
    .option(
      '--json',
      "one JSON document: { rules: [{ name, enabled, dryRun, triggers, actions }], schedules: [{ name, enabled, dryRun, every, cron, tz, tasks }], probes: [{ name, enabled, check, periodMs }] (reflex probes list says more), receivers: [{ name, kind }], actions: [{ name, describe, touchesInstance, restarts }] (the folder's own, defineAction), skipped }",
    )
    .action(async (dir: string | undefined, opts: { json?: boolean }) => {
      const config = resolveConfig({});
      const folder = dir ?? config.rulesDir;
      const [{ loadRulesFolder }, { chooseNotifyConfig }] = await Promise.all([
        import('../../rules/rules-folder.js'),
        import('../../notify/notify-config.js'),
      ]);
      const { rules: loaded, errors, schedules, probes, notifications, actions } = await loadRulesFolder(folder);
      const probeRows = probes.map((p) => ({ name: p.name, enabled: p.enabled, check: p.check, periodMs: p.periodMs }));
      const ownActions = actions
        .userDefined()
        .map((a) => ({ name: a.name, describe: a.describe, touchesInstance: a.touchesInstance !== false, restarts: a.restarts === true }));
      const notify = chooseNotifyConfig({ config: config.notifications, rulesFolder: notifications });
      const receivers = (notify?.settings.receivers ?? []).map((r) => ({ name: r.name, kind: r.kind }));
      const scheduleRows = schedules.map((s) => ({
        name: s.name,
        description: s.description,
        enabled: s.enabled,
        dryRun: s.dryRun,
        every: s.definition.every,
        cron: s.cron,
        tz: s.tz,
        tasks: s.tasks.map((t) => t.task),
      }));
      if (opts.json) {
        const list = loaded.map((r) => ({
          name: r.name,
          description: r.description,
          enabled: r.enabled !== false,
          dryRun: Boolean(r.dryRun),
          triggers: r.triggers,
          actions: r.actions.map((a) => a.action),
        }));
        printJson({ rules: list, schedules: scheduleRows, probes: probeRows, receivers, actions: ownActions, skipped: errors });
        return;
      }
      for (const r of loaded) {
        const on = r.triggers
          .map((t) =>
            [
              t.kind,
              t.to && `to ${t.to.join('|')}`,
              t.intent && `intent ${t.intent.join('|')}`,
              t.action && t.action.join('|'),
              t.name && `name ${t.name.join('|')}`,
            ]
              .filter(Boolean)
              .join(' '),
          )
          .join('; ');
        process.stdout.write(
          `${r.name}${r.enabled === false ? ' (disabled)' : ''}${r.dryRun ? ' (dry-run)' : ''}\n  on: ${on}\n  do: ${r.actions.map((a) => a.action).join(', ')}\n`,
        );
      }
      for (const s of scheduleRows) {
        const when = s.cron ? `cron ${s.cron} (${s.tz})` : `every ${s.every}`;
        process.stdout.write(
          `schedule ${s.name}${s.enabled ? '' : ' (disabled)'}${s.dryRun ? ' (dry-run)' : ''}\n  when: ${when}\n  tasks: ${s.tasks.join(', ')}\n`,
        );
      }
      for (const p of probeRows)
        process.stdout.write(`probe ${p.name}${p.enabled ? '' : ' (disabled)'}: ${p.check} every ${p.periodMs} ms (reflex probes list)\n`);
      for (const r of receivers) process.stdout.write(`receiver ${r.name} (${r.kind})\n`);
      for (const a of ownActions)
        process.stdout.write(`action ${a.name}${a.touchesInstance ? '' : ' (does not touch the instance)'}: ${a.describe}\n`);
      for (const e of errors) process.stderr.write(`skipped ${e.file}: ${e.message}\n`);
    });
  rules
    .command('init')
    .description('start a rules folder anywhere: a tsconfig.json that resolves reflex-lxd to this installation, and an example rule')
    .argument('<dir>', 'the folder to create or complete (existing files are left alone)')
    .action(async (dir: string) => {
      const { initRulesFolder } = await import('../../rules/rules-init.js');
      for (const line of initRulesFolder(dir)) process.stdout.write(`${line}\n`);
    });
  withConnectionOptions(
    rules
      .command('reload')
      .description(
        'reload the rules, schedules and receivers of every running replica (worker, scheduler): each takes the new set whole or refuses it and keeps its own',
      ),
  )
    .option('--timeout <duration>', "how long to wait for every replica's answer (default 30s)", durationValue)
    .option('--json', 'one JSON document: { answers: [{ replica, role, result, summary, rules, schedules, probes, receivers, errors }], missing }')
    .action(async (opts) => {
      const config = resolveConfig(opts);
      const timeoutMs = (opts.timeout as number | undefined) ?? 30_000;
      const [{ connectRedis }, { keySpace }, { requestReload }] = await Promise.all([
        import('../../redis/connect.js'),
        import('../../redis/key-space.js'),
        import('../../rules/reload-channel.js'),
      ]);
      const redis = await connectRedis(config.redisUrl);
      let report;
      try {
        report = await requestReload(redis, keySpace(config.prefix).reload, { timeoutMs });
      } finally {
        redis.disconnect();
      }
      if (opts.json) printJson({ answers: report.answers, missing: report.missing });
      else {
        for (const a of report.answers) {
          const what =
            a.result === 'reloaded'
              ? `reloaded: ${a.rules} rule(s), ${a.schedules} schedule(s), ${a.probes ?? 0} probe(s), ${a.receivers} receiver(s)`
              : `refused, keeps its previous rules: ${a.errors?.length ? `${a.errors.length} problem(s)` : a.summary.replace(/^.*?keeps running: /, '')}`;
          process.stdout.write(`${a.replica} (${a.role}): ${what}\n`);
          for (const e of a.errors ?? []) process.stdout.write(`  ${e}\n`);
        }
        for (const m of report.missing) process.stdout.write(`${m}: no answer within ${timeoutMs} ms\n`);
      }
      const refused = report.answers.filter((a) => a.result === 'refused').length;
      if (report.answers.length === 0 && report.missing.length === 0)
        throw new ReflexError(
          'RELOAD_REFUSED',
          `no running replica holds rules under prefix ${config.prefix} (worker, scheduler or all roles): nothing reloaded`,
        );
      if (refused || report.missing.length)
        throw new ReflexError(
          'RELOAD_REFUSED',
          `${refused} replica(s) refused the new rules and ${report.missing.length} did not answer; ${report.answers.length - refused} reloaded`,
        );
    });
  withConnectionOptions(rules.command('test').description('show what a rule decides for an event, without acting').argument('<rule>'))
    .requiredOption('--event <file>', 'a canonical event or a raw daemon frame (JSON)')
    .option('--instance <file>', 'the instance object (JSON) the rule sees; default: read it from --target')
    .action(async (ruleName: string, opts, cmd: Command) => {
      const config = resolveConfig(opts);
      const [{ loadRulesFolder }, { RuleEngine }, { instanceSchema }, { InstanceClient }, { RecordingTransport }, { targetsOf }] = await Promise.all([
        import('../../rules/rules-folder.js'),
        import('../../rules/engine.js'),
        import('../../client/instance.js'),
        import('../../client/client.js'),
        import('../../client/recording-transport.js'),
        import('../../config/config-target.js'),
      ]);
      const { rules: loaded } = await loadRulesFolder(config.rulesDir);
      const rule = loaded.find((r) => r.name === ruleName);
      if (!rule) throw new ReflexError('RULE_INVALID', `no rule "${ruleName}" in ${config.rulesDir} (have: ${loaded.map((r) => r.name).join(', ')})`);
      const target = config.target ?? 'unix:///var/lib/lxd/unix.socket';
      const event = await readEvent(opts.event, target);
      let instance: Instance | undefined;
      if (opts.instance) {
        const given = instanceSchema.safeParse(readOptionJson(cmd, '--instance', opts.instance));
        if (!given.success)
          usageError(
            cmd,
            `--instance ${opts.instance}: not an instance object (${given.error.issues.map((i) => `${i.path.join('.') || '(object)'}: ${i.message}`).join('; ')})`,
          );
        instance = given.data;
      } else if ('instance' in event && event.instance) {
        // With a targets list, the server the event names (else the first); reads only, a mutating call is refused unsent.
        const targets = targetsOf(config);
        const client = new InstanceClient(new RecordingTransport((targets.find((t) => t.id === event.target) ?? targets[0]!).target));
        instance = (
          await client
            .withProject(event.project)
            .getInstance(event.instance)
            .catch(() => undefined)
        )?.value;
        await client.close();
      }
      const decisions = await new RuleEngine([rule]).decide(event, instance);
      process.stdout.write(`event: ${JSON.stringify(event)}\n`);
      if (!decisions.length) process.stdout.write(`${ruleName}: does not listen to this event\n`);
      for (const d of decisions) {
        process.stdout.write(`${d.rule}: ${d.summary}\n`);
        if (d.matched)
          for (const a of d.actions)
            process.stdout.write(
              `  would run ${a.action}${a.params ? ` ${JSON.stringify(a.params)}` : ''} on ${'instance' in event ? event.instance : '?'}\n`,
            );
      }
    });
}
