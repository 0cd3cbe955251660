import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import { actionNames } from '../actions/registry.js';
import type { Rule } from './rule.js';

/** A rule file that could not be loaded: reported, skipped, never fatal. */
export interface RuleLoadError {
  file: string;
  message: string;
}

export interface LoadedRules {
  rules: Rule[];
  errors: RuleLoadError[];
  /** Other definitions found beside the rules (schedules, notification settings), for their loaders. */
  others: unknown[];
}

function isRule(value: unknown): value is Rule {
  return Boolean(value) && typeof value === 'object' && Array.isArray((value as Rule).triggers) && typeof (value as Rule).name === 'string';
}

/** A schedule or notification settings exported from a file in the rules folder. */
export function isOtherDefinition(v: unknown): boolean {
  if (!v || typeof v !== 'object') return false;
  const o = v as { kind?: unknown; receivers?: unknown; route?: unknown };
  return o.kind === 'schedule' || (Array.isArray(o.receivers) && typeof o.route === 'object');
}

/** The `.ts` files directly in a rules folder (sub-folders such as examples/ are not loaded). */
export function ruleFiles(dir: string): string[] {
  const abs = resolve(dir);
  return readdirSync(abs)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.endsWith('.test.ts'))
    .map((f) => join(abs, f))
    .filter((f) => statSync(f).isFile())
    .sort();
}

/**
 * Each `.ts` file of a rules folder, imported without a build step (tsx), in name order; a file
 * that fails to compile or throws on import comes back as its error (first lines of the message).
 */
export async function* importRuleFiles(dir: string): AsyncGenerator<{ file: string; mod: Record<string, unknown> } | { file: string; error: RuleLoadError }> {
  for (const file of ruleFiles(dir)) {
    try {
      yield { file, mod: (await tsImport(pathToFileURL(file).href, import.meta.url)) as Record<string, unknown> };
    } catch (err) {
      yield { file, error: { file, message: (err as Error).message.split('\n').slice(0, 6).join('\n') } };
    }
  }
}

/**
 * Loads TypeScript rule files without a build step (tsx). A file's default export is a rule made
 * with `defineRule`, or an array of them. A file that fails to compile, throws, or exports
 * something else is reported in `errors` and skipped.
 */
export async function loadRules(dir: string): Promise<LoadedRules> {
  const rules: Rule[] = [];
  const errors: RuleLoadError[] = [];
  const others: unknown[] = [];
  const seen = new Map<string, string>();
  for await (const loaded of importRuleFiles(dir)) {
    if ('error' in loaded) {
      errors.push(loaded.error);
      continue;
    }
    const { file, mod } = loaded;
    // tsx may wrap a CommonJS-looking module: unwrap one level of default.
    let exported = mod.default;
    if (exported && typeof exported === 'object' && 'default' in exported && !isRule(exported)) exported = (exported as { default: unknown }).default;
    // A file may also hold schedules (defineSchedule) or notification settings (defineNotifications):
    // those belong to the scheduler and the notifier, and are not errors here.
    const all = Array.isArray(exported) ? exported : [exported];
    const list = all.filter((v) => !isOtherDefinition(v));
    others.push(...all.filter(isOtherDefinition));
    if (list.length === 0 && all.length > 0) continue;
    if (list.length === 0 || !list.every(isRule)) {
      errors.push({ file, message: 'default export is not a rule: export default defineRule({...}) (or an array of rules and schedules)' });
      continue;
    }
    for (const rule of list) {
      const unknown = rule.actions.map((a) => a.action).filter((a) => !actionNames().includes(a));
      if (unknown.length) {
        errors.push({ file, message: `rule "${rule.name}": unknown action ${unknown.map((a) => `"${a}"`).join(', ')}; known: ${actionNames().join(', ')}` });
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
  }
  return { rules, errors, others };
}
