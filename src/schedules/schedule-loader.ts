import { exportedOf, importRuleFiles, type RuleLoadError } from '../rules/rule-loader.js';
import { isSchedule, type Schedule } from './schedule.js';

export interface LoadedSchedules {
  schedules: Schedule[];
  errors: RuleLoadError[];
}

/**
 * Loads the schedules of a rules folder: the same files the rule loader reads (compiled at load
 * time), keeping every schedule a file exports, by default (alone or in an array with rules) or
 * under any other name. Rules in those files are the rule loader's business and are ignored
 * here. A file that fails to load is reported and skipped; a file that exports no schedule is
 * not an error (it is a rule file).
 */
export async function loadSchedules(dir: string): Promise<LoadedSchedules> {
  const schedules: Schedule[] = [];
  const errors: RuleLoadError[] = [];
  const seen = new Map<string, string>();
  for await (const loaded of importRuleFiles(dir)) {
    if ('error' in loaded) {
      errors.push(loaded.error);
      continue;
    }
    const { file, mod } = loaded;
    for (const s of exportedOf(mod, isSchedule)) {
      const other = seen.get(s.name);
      if (other) {
        errors.push({ file, message: `schedule name "${s.name}" is already used by ${other}` });
        continue;
      }
      seen.set(s.name, file);
      schedules.push(s);
    }
  }
  return { schedules, errors };
}
