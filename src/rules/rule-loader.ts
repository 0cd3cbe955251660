import { readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, stop as stopCompiler, type Message } from 'esbuild';
import { ReflexError } from '../errors/reflex-error.js';
import { stackPlaces } from '../errors/stack-place.js';
import { paramsProblem } from '../actions/action.js';
import { isDefinedAction, type DefinedAction } from '../actions/define-action.js';
import { createActionRegistry, nameClash, type ActionRegistry } from '../actions/registry.js';
import { packageEntry, packageName } from './package-entry.js';
import { isRuleDefinitionError, type Rule } from './rule.js';
import { placeOfActionParam, placeOfRuleField } from './rule-location.js';

/** A rule file that could not be loaded: reported, skipped, never fatal. */
export interface RuleLoadError {
  file: string;
  /** Where in the file, when the compiler located it. */
  line?: number;
  column?: number;
  message: string;
}

export interface LoadedRules {
  rules: Rule[];
  errors: RuleLoadError[];
  /** Other definitions found beside the rules (schedules, notification settings), for their loaders. */
  others: unknown[];
  /**
   * The actions these rules may name: the built-ins and the folder's own (`defineAction`). One
   * registry per load, swapped with the rules on a reload; the executor, the gate and the
   * re-check look actions up in it.
   */
  actions: ActionRegistry;
}

function isRule(value: unknown): value is Rule {
  return Boolean(value) && typeof value === 'object' && Array.isArray((value as Rule).triggers) && typeof (value as Rule).name === 'string';
}

/** A schedule, a health probe or notification settings exported from a file in the rules folder. */
export function isOtherDefinition(v: unknown): boolean {
  if (!v || typeof v !== 'object') return false;
  const o = v as { kind?: unknown; receivers?: unknown; route?: unknown };
  return o.kind === 'schedule' || o.kind === 'probe' || (Array.isArray(o.receivers) && typeof o.route === 'object');
}

/**
 * The `.ts` files directly in a rules folder (sub-folders such as examples/ are not loaded). A
 * folder that does not exist is an error (RULES_MISSING), never an empty rule set.
 */
export function ruleFiles(dir: string): string[] {
  const abs = resolve(dir);
  const stat = statSync(abs, { throwIfNoEntry: false });
  if (!stat)
    throw new ReflexError('RULES_MISSING', `rules folder ${abs} does not exist (give --rules DIR, REFLEX_RULES or rulesDir in the config file)`);
  if (!stat.isDirectory()) throw new ReflexError('RULES_MISSING', `rules folder ${abs} is not a folder`);
  return readdirSync(abs)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.endsWith('.test.ts'))
    .map((f) => join(abs, f))
    .filter((f) => statSync(f).isFile())
    .sort();
}

/** Where a file of a rules folder failed to compile, when the compiler knows. */
interface CompileFailure {
  file: string;
  line?: number;
  column?: number;
  message: string;
}

function compileFailures(err: unknown, file: string): CompileFailure[] {
  const errors = (err as { errors?: Message[] }).errors;
  if (!Array.isArray(errors) || errors.length === 0) return [{ file, message: (err as Error).message.split('\n').slice(0, 6).join('\n') }];
  return errors.map((e) => ({
    // esbuild names files relative to absWorkingDir, the rule file's folder.
    file: e.location?.file ? resolve(dirname(file), e.location.file) : file,
    line: e.location?.line,
    column: e.location ? e.location.column + 1 : undefined,
    message: e.text,
  }));
}

/**
 * Compiles one rule file to a single ES module: TypeScript stripped, its relative imports and
 * libraries bundled in (found beside the rules, then in this installation), and `reflex-lxd`
 * left as an import of the running installation's entry, so every rule shares one Reflex.
 * esbuild does the work; no loader thread stays resident.
 */
async function compileRuleFile(file: string, outfile: string): Promise<string> {
  const result = await build({
    entryPoints: [file],
    // The source map's paths are relative to where the module is written: the rule file's own path.
    outfile,
    absWorkingDir: dirname(file),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node.split('.')[0]}`,
    sourcemap: 'inline',
    sourcesContent: false,
    write: false,
    logLevel: 'silent',
    nodePaths: [join(dirname(dirname(packageEntry)), 'node_modules'), join(dirname(dirname(dirname(packageEntry))))],
    plugins: [
      {
        name: packageName,
        setup(b) {
          b.onResolve({ filter: new RegExp(`^${packageName}$`) }, () => ({ path: pathToFileURL(packageEntry).href, external: true }));
        },
      },
    ],
  });
  return result.outputFiles[0]!.text;
}

/**
 * Each `.ts` file of a rules folder, compiled ({@link compileRuleFile}) and imported, in name
 * order. A file that fails to compile comes back as its error with file:line:column; one that
 * throws on import, as its message (first lines). Each load imports fresh modules.
 */
export async function* importRuleFiles(
  dir: string,
): AsyncGenerator<{ file: string; mod: Record<string, unknown> } | { file: string; error: RuleLoadError }> {
  const files = ruleFiles(dir);
  if (files.length === 0) return;
  const out = await mkdtemp(join(tmpdir(), 'reflex-rules-'));
  process.setSourceMapsEnabled(true);
  compiling++;
  try {
    // Every file is handed to esbuild at once (it compiles them in parallel); they are imported in name order.
    const compiles = files.map((file) => {
      // A fresh folder per load, so a reload imports new modules.
      const compiled = join(out, `${basename(file, '.ts')}.mjs`);
      const code = compileRuleFile(file, compiled);
      code.catch(() => undefined); // awaited below, in order
      return { file, compiled, code };
    });
    for (const { file, compiled, code: pending } of compiles) {
      let code: string;
      try {
        code = await pending;
      } catch (err) {
        const [first, ...more] = compileFailures(err, file);
        const where = (f: CompileFailure) => [f.file, f.line, f.column].filter((x) => x !== undefined).join(':');
        const message = [first!, ...more]
          .slice(0, 5)
          .map((f) => (f.file === file && f.line === undefined ? f.message : `${where(f)}: ${f.message}`))
          .join('\n');
        yield {
          file,
          error: { file, line: first!.file === file ? first!.line : undefined, column: first!.file === file ? first!.column : undefined, message },
        };
        continue;
      }
      await writeFile(compiled, code);
      try {
        yield { file, mod: (await import(pathToFileURL(compiled).href)) as Record<string, unknown> };
      } catch (err) {
        yield { file, error: await importFailure(err, file) };
      }
    }
  } finally {
    // esbuild's service process serves every load of this process: the last load to finish stops
    // it (several processes' worth of Reflex can load at once in one process, e.g. replicas in a test).
    if (--compiling === 0) await stopCompiler();
    await rm(out, { recursive: true, force: true });
  }
}

/**
 * A rule file that threw while it was imported, located: an invalid rule definition at the line of
 * the first field at fault (found by its path in the definition), anything else at the deepest
 * line of the file in the error's stack (source maps are on while rules load, so that is the
 * line as written).
 */
async function importFailure(err: unknown, file: string): Promise<RuleLoadError> {
  const message = (err as Error).message.split('\n').slice(0, 6).join('\n');
  const first = isRuleDefinitionError(err) ? err.ruleIssues[0] : undefined;
  const place =
    (isRuleDefinitionError(err) && err.rule && first && (await placeOfRuleField(file, err.rule, first.path))) ||
    stackPlaces((err as Error)?.stack).find((p) => p.file === file);
  return { file, ...place, message };
}

/** Loads in progress in this process (see the finally above). */
let compiling = 0;

/**
 * Loads TypeScript rule files (compiled at load time, see {@link importRuleFiles}). A file's
 * default export is a rule made with `defineRule`, or an array of rules (and schedules, actions,
 * notification settings). Actions made with `defineAction` are collected from every export of
 * every file, default or named, and join the built-ins in the registry of this load
 * ({@link LoadedRules.actions}). Then each rule's actions are checked against that registry: an
 * unknown name, or params their action's schema refuses, is an error with the file and line of
 * the offending param. A file that fails to compile, throws, or exports something else is
 * reported in `errors` and skipped; so is a rule that fails its checks.
 */
export async function loadRules(dir: string): Promise<LoadedRules> {
  const rules: Rule[] = [];
  const errors: RuleLoadError[] = [];
  const others: unknown[] = [];
  const candidates: { file: string; rule: Rule }[] = [];
  const userActions = new Map<string, DefinedAction>();
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
    // A CommonJS-looking module may wrap its default once more: unwrap one level.
    let exported = mod.default;
    if (exported && typeof exported === 'object' && 'default' in exported && !isRule(exported)) exported = (exported as { default: unknown }).default;
    // A file of actions alone (named exports) has nothing else to load.
    if (exported === undefined && Object.values(mod).some((v) => isDefinedAction(v) || (Array.isArray(v) && v.some(isDefinedAction)))) continue;
    // A file may also hold schedules (defineSchedule), notification settings (defineNotifications)
    // and actions (defineAction): those belong to the scheduler, the notifier and the registry.
    const all = Array.isArray(exported) ? exported : [exported];
    const list = all.filter((v) => !isOtherDefinition(v) && !isDefinedAction(v));
    others.push(...all.filter(isOtherDefinition));
    if (list.length === 0 && all.length > 0) continue;
    if (list.length === 0 || !list.every(isRule)) {
      errors.push({ file, message: 'default export is not a rule: export default defineRule({...}) (or an array of rules, schedules and actions)' });
      continue;
    }
    candidates.push(...list.map((rule) => ({ file, rule })));
  }
  const actions = createActionRegistry([...userActions.values()]);
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
  return { rules, errors, others, actions };
}

/**
 * Every value among a module's exports that `is` accepts (one level of arrays; `default` may be
 * wrapped once more), each once: the actions here, the schedules in schedules/schedule-loader.ts.
 */
export function exportedOf<T>(mod: Record<string, unknown>, is: (value: unknown) => value is T): T[] {
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
