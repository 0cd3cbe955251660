import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { ReflexError } from '../errors/reflex-error.js';
import { errorText, loadRuleSet, type RuleSetValue } from '../rules/rule-set.js';
import type { RuleErrors } from '../rules/rule-errors.js';

/**
 * The rule set of `dir` (rules, schedules, receivers), type-checked unless `typecheckRules` is
 * off. Any problem — a type error, a file that fails to load, a rule that fails validation — is
 * RULE_INVALID, one line per problem with file:line:column: a worker that silently skipped a rule
 * would not do what its operator wrote (a reload refuses such a folder the same way). For a
 * worker, none loaded — no rule and no schedule — is RULES_MISSING: such a worker would heal nothing.
 */
export async function loadRulesOrFail(config: Config, logger: Logger, ruleErrors: RuleErrors): Promise<RuleSetValue> {
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
  const schedules = loaded.loaded.schedules.length;
  if (config.role !== 'scheduler' && loaded.loaded.rules.length === 0 && schedules === 0) {
    throw new ReflexError('RULES_MISSING', `no rule loaded from ${resolve(dir)}: it holds no rule file (*.ts with export default defineRule(...))`);
  }
  logger.debug({ ms: Date.now() - started, typecheck: config.typecheckRules }, 'rules loaded');
  if (config.role !== 'scheduler')
    logger.info({ rules: loaded.loaded.rules.map((r) => r.name), schedules }, `loaded ${loaded.loaded.rules.length} rule(s) from ${dir}`);
  return loaded;
}
