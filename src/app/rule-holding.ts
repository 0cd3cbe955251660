import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit-log.js';
import type { Config } from '../config/config.js';
import { ReflexError } from '../errors/reflex-error.js';
import type { RedisConnection } from '../redis/connect.js';
import type { KeySpace } from '../redis/key-space.js';
import { ReloadListener } from '../rules/reload-channel.js';
import type { RuleErrors } from '../rules/rule-errors.js';
import { errorText, loadRuleSet, ruleErrorsPart, RuleSet, type RuleSetValue } from '../rules/rule-set.js';
import type { RoleNeeds } from './role-root.js';

/**
 * The first load of the rules folder, for a process whose roles hold rules (none for one that
 * holds none), type-checked unless `typecheckRules` is off. Any problem — a type error, a file
 * that fails to load, a rule that fails validation — is RULE_INVALID, one line per problem with
 * file:line:column: a worker that silently skipped a rule would not do what its operator wrote (a
 * reload refuses such a folder the same way). When a role requires rules (the worker), none
 * loaded — no rule and no schedule — is RULES_MISSING: such a worker would heal nothing.
 */
export async function loadRulesOrFail(config: Config, logger: Logger, needs: RoleNeeds, ruleErrors: RuleErrors): Promise<RuleSetValue | undefined> {
  if (!needs.rules) return undefined;
  const dir = config.rulesDir;
  const started = Date.now();
  const loaded = await loadRuleSet({
    dir,
    notifications: config.notifications,
    conditionTimeoutMs: config.ruleTimeoutMs,
    typecheck: config.typecheckRules,
    ruleErrors,
  });
  for (const e of loaded.errors) logger.error({ file: e.file, line: e.line, column: e.column }, `rule problem: ${errorText(e)}`);
  if (loaded.errors.length)
    throw new ReflexError(
      'RULE_INVALID',
      `${loaded.errors.length} problem(s) in the rules of ${resolve(dir)}; not starting:\n${loaded.errors.map(errorText).join('\n')}`,
    );
  const { rules, schedules, probes } = loaded.loaded;
  logger.debug({ ms: Date.now() - started, typecheck: config.typecheckRules }, 'rules loaded');
  if (needs.rules === 'held') return loaded;
  if (rules.length === 0 && schedules.length === 0)
    throw new ReflexError('RULES_MISSING', `no rule loaded from ${resolve(dir)}: it holds no rule file (*.ts with export default defineRule(...))`);
  logger.info(
    { rules: rules.map((r) => r.name), schedules: schedules.length, probes: probes.map((p) => p.name) },
    `loaded ${rules.length} rule(s) and ${probes.length} probe(s) from ${dir}`,
  );
  return loaded;
}

/** The rule set a process holds, reloadable from its first load; none when its roles hold no rules. */
export function holdRules(
  first: RuleSetValue | undefined,
  opts: { config: Config; audit: AuditLog; logger: Logger; replica: string; ruleErrors: RuleErrors },
): RuleSet | undefined {
  if (!first) return undefined;
  const { config, ...parts } = opts;
  const ruleSet = new RuleSet(first, {
    ...parts,
    dir: config.rulesDir,
    notifications: config.notifications,
    conditionTimeoutMs: config.ruleTimeoutMs,
    typecheck: config.typecheckRules,
  });
  ruleSet.attach(ruleErrorsPart(opts.ruleErrors));
  return ruleSet;
}

/**
 * Makes a replica holding rules answer `reflex rules reload` (the reload channel, the roster of
 * such replicas); nothing for one that holds none. Returns the stop.
 */
export async function listenForReloads(
  ruleSet: RuleSet | undefined,
  opts: { redis: RedisConnection; keys: KeySpace; logger: Logger; replica: string; role: string },
): Promise<() => Promise<void>> {
  if (!ruleSet) return async () => undefined;
  const listener = new ReloadListener({ ...opts, keys: opts.keys.reload, reload: (request) => ruleSet.reload(request) });
  await listener.start();
  return () => listener.stop();
}
