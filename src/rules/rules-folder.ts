import { paramsProblem } from '../actions/action.js';
import { isDefinedAction, type DefinedAction } from '../actions/define-action.js';
import { createActionRegistry, nameClash, type ActionRegistry } from '../actions/registry.js';
import type { NotifyConfig } from '../notify/notify-config.js';
import { isProbe, type Probe } from '../probes/probe.js';
import { isSchedule, type Schedule } from '../schedules/schedule.js';
import { importRuleFiles, type RuleLoadError } from './rule-files.js';
import { placeOfActionParam } from './rule-location.js';
import type { Rule } from './rule.js';

/**
 * One load of a rules folder: every definition its files export, each file compiled and imported
 * once, sorted by kind. A reload is a new load.
 */
export interface RulesFolder {
  rules: Rule[];
  /**
   * The actions these rules may name: the built-ins and the folder's own (`defineAction`). One
   * registry per load, swapped with the rules on a reload; the executor, the gate and the
   * re-check look actions up in it.
   */
  actions: ActionRegistry;
  /** Every schedule (`defineSchedule`, exported under any name), disabled ones included. */
  schedules: Schedule[];
  /** Every health probe (`defineProbe`), disabled ones included. */
  probes: Probe[];
  /** The folder's notification settings (`defineNotifications`), when a file exports them. */
  notifications?: NotifyConfig;
  /** Files that failed to compile or import, and definitions that failed their checks: reported and left out. */
  errors: RuleLoadError[];
}

function isRule(value: unknown): value is Rule {
  return Boolean(value) && typeof value === 'object' && Array.isArray((value as Rule).triggers) && typeof (value as Rule).name === 'string';
}

function isNotifications(value: unknown): value is NotifyConfig {
  const o = value as { receivers?: unknown; route?: unknown } | undefined;
  return Boolean(o) && typeof o === 'object' && Array.isArray(o!.receivers) && typeof o!.route === 'object';
}

/** A definition a default export may hold beside its rules: a schedule, a health probe or notification settings. */
function isOtherDefinition(v: unknown): boolean {
  return isSchedule(v) || isProbe(v) || isNotifications(v);
}

/** The probe name an instance's own config (user.reflex.probe.*) uses. */
const configProbeName = 'config';

/**
 * Loads a rules folder: each `.ts` file compiled and imported once ({@link importRuleFiles}), in
 * name order. A file's default export is a rule made with `defineRule`, or an array of rules,
 * schedules, probes, actions and notification settings. Actions (`defineAction`), schedules
 * (`defineSchedule`) and probes (`defineProbe`) are collected from every export of every file, default or named; the actions
 * join the built-ins in the registry of this load. Then each rule's actions are checked against
 * that registry: an unknown name, or params their action's schema refuses, is an error with the
 * file and line of the offending param. A file that fails to compile, throws, or exports
 * something else is reported in `errors` and skipped; so is a definition that fails its checks (a
 * name used twice, a probe named `config`). A folder that does not exist throws RULES_MISSING.
 */
export async function loadRulesFolder(dir: string): Promise<RulesFolder> {
  const errors: RuleLoadError[] = [];
  const candidates: { file: string; rule: Rule }[] = [];
  const userActions = new Map<string, DefinedAction>();
  const others: unknown[] = [];
  const scheduleErrors: RuleLoadError[] = [];
  const schedules = new Map<string, { schedule: Schedule; file: string }>();
  for await (const loaded of importRuleFiles(dir)) {
    if ('error' in loaded) {
      errors.push(loaded.error);
      continue;
    }
    const { file, mod } = loaded;
    for (const action of exportedOf(mod, isDefinedAction).filter((a) => !a.builtin)) {
      const same = userActions.get(action.name);
      // The same definition seen again: a file that imports another's action and exports it too.
      if (same && sameDefinition(same, action)) continue;
      const clash = nameClash(action, userActions);
      if (clash) {
        errors.push({ file: action.definedAt?.file ?? file, line: action.definedAt?.line, message: clash });
        continue;
      }
      userActions.set(action.name, action);
    }
    for (const schedule of exportedOf(mod, isSchedule)) {
      const other = schedules.get(schedule.name);
      if (other) scheduleErrors.push({ file, message: `schedule name "${schedule.name}" is already used by ${other.file}` });
      else schedules.set(schedule.name, { schedule, file });
    }
    // A CommonJS-looking module may wrap its default once more: unwrap one level.
    let exported = mod.default;
    if (exported && typeof exported === 'object' && 'default' in exported && !isRule(exported)) exported = (exported as { default: unknown }).default;
    // Probes, like actions and schedules, are taken from every export, default or named.
    others.push(...exportedOf(mod, isProbe));
    // A file of actions, schedules or probes alone (named exports) has nothing else to load.
    const named = (v: unknown) => isDefinedAction(v) || isSchedule(v) || isProbe(v);
    if (exported === undefined && Object.values(mod).some((v) => named(v) || (Array.isArray(v) && v.some(named)))) continue;
    const all = Array.isArray(exported) ? exported : [exported];
    const list = all.filter((v) => !isOtherDefinition(v) && !isDefinedAction(v));
    others.push(...all.filter((v) => isOtherDefinition(v) && !isProbe(v)));
    if (list.length === 0 && all.length > 0) continue;
    if (list.length === 0 || !list.every(isRule)) {
      errors.push({
        file,
        message: `${exported === undefined ? 'no default export' : 'default export is not a rule'}: export default defineRule({...}) (or an array of rules, schedules, probes and actions)`,
      });
      continue;
    }
    candidates.push(...list.map((rule) => ({ file, rule })));
  }
  const actions = createActionRegistry([...userActions.values()]);
  const rules = await checkedRules(candidates, actions, errors);
  const probes = probesOf(others.filter(isProbe), dir);
  return {
    rules,
    actions,
    schedules: [...schedules.values()].map((s) => s.schedule),
    probes: probes.probes,
    notifications: others.find(isNotifications),
    errors: [...errors, ...scheduleErrors, ...probes.errors],
  };
}

/** The rules whose actions pass their checks and whose names are free; the others go to `errors`. */
async function checkedRules(candidates: { file: string; rule: Rule }[], actions: ActionRegistry, errors: RuleLoadError[]): Promise<Rule[]> {
  const rules: Rule[] = [];
  const seen = new Map<string, string>();
  for (const { file, rule } of candidates) {
    const problem = await actionProblem(file, rule, actions);
    if (problem) {
      errors.push(problem);
      continue;
    }
    const other = seen.get(rule.name);
    if (other) {
      errors.push({ file, message: `rule name "${rule.name}" is already used by ${other}` });
      continue;
    }
    seen.set(rule.name, file);
    rules.push(rule);
  }
  return rules;
}

/**
 * The probes of the folder, each name once. An invalid definition never gets here: `defineProbe`
 * throws when the file is imported, and the file and line are reported.
 */
function probesOf(defined: Probe[], dir: string): { probes: Probe[]; errors: RuleLoadError[] } {
  const probes: Probe[] = [];
  const errors: RuleLoadError[] = [];
  const seen = new Set<string>();
  for (const p of defined) {
    if (seen.has(p.name)) {
      errors.push({ file: dir, message: `probe name "${p.name}" is used twice in the rules folder` });
    } else if (p.name === configProbeName) {
      errors.push({
        file: dir,
        message: `probe name "${configProbeName}" is reserved for the probe an instance defines in its own config (user.reflex.probe.*)`,
      });
    } else {
      seen.add(p.name);
      probes.push(p);
    }
  }
  return { probes, errors };
}

/** Every value among a module's exports that `is` accepts (one level of arrays; `default` may be wrapped once more), each once. */
function exportedOf<T>(mod: Record<string, unknown>, is: (value: unknown) => value is T): T[] {
  const out = new Set<T>();
  const visit = (value: unknown, depth: number) => {
    if (is(value)) {
      out.add(value);
    } else if (Array.isArray(value)) {
      for (const v of value) if (is(v)) out.add(v);
    } else if (depth === 0 && value && typeof value === 'object' && 'default' in value) {
      visit((value as { default: unknown }).default, 1);
    }
  };
  for (const value of Object.values(mod)) visit(value, 0);
  return [...out];
}

/** Each rule file is bundled on its own, so an action imported by two files is two objects: where it was defined tells them apart. */
function sameDefinition(a: DefinedAction, b: DefinedAction): boolean {
  return a === b || (a.definedAt !== undefined && a.definedAt.file === b.definedAt?.file && a.definedAt.line === b.definedAt?.line);
}

/**
 * The first of a rule's actions that is unknown or whose params its schema refuses, as a load
 * error at the offending param's line (see {@link placeOfActionParam}); undefined when all pass.
 */
async function actionProblem(file: string, rule: Rule, actions: ActionRegistry): Promise<RuleLoadError | undefined> {
  for (const [index, spec] of rule.actions.entries()) {
    if (!actions.has(spec.action)) {
      const at = await placeOfActionParam(file, rule.name, index, []);
      return { file, ...at, message: `rule "${rule.name}": unknown action "${spec.action}"; known: ${actions.names().join(', ')}` };
    }
    // An onFailure branch's actions are checked like the rule's own, at the line of the action they follow.
    for (const branch of spec.onFailure ?? []) {
      const problem = !actions.has(branch.action)
        ? `unknown action "${branch.action}" in onFailure of ${spec.action}; known: ${actions.names().join(', ')}`
        : paramsProblem(actions.get(branch.action).params, branch.params ?? {}) &&
          `onFailure of ${spec.action}: ${branch.action} params: ${paramsProblem(actions.get(branch.action).params, branch.params ?? {})}`;
      if (problem) return { file, ...(await placeOfActionParam(file, rule.name, index, [])), message: `rule "${rule.name}": ${problem}` };
    }
    const schema = actions.get(spec.action).params;
    const parsed = schema.safeParse(spec.params ?? {});
    if (parsed.success) continue;
    const keys = parsed.error.issues.flatMap((i) => [
      ...('keys' in i && Array.isArray(i.keys) ? i.keys.map(String) : []),
      ...(typeof i.path[0] === 'string' ? [i.path[0]] : []),
    ]);
    const at = await placeOfActionParam(file, rule.name, index, keys);
    return { file, ...at, message: `rule "${rule.name}": ${spec.action} params: ${paramsProblem(schema, spec.params ?? {})}` };
  }
  return undefined;
}
