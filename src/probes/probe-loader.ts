import type { RuleLoadError } from '../rules/rule-loader.js';
import { isProbe, type Probe } from './probe.js';

/**
 * The probes among the definitions a rules folder exports beside its rules (the rule loader's
 * `others`: `defineProbe` in any file, alone or in an array with rules and schedules). A second
 * probe of the same name is an error, reported and left out. An invalid definition never gets
 * here: `defineProbe` throws when the file is imported, and the loader reports the file and line.
 */
export function probesOf(others: unknown[], dir: string): { probes: Probe[]; errors: RuleLoadError[] } {
  const probes: Probe[] = [];
  const errors: RuleLoadError[] = [];
  const seen = new Set<string>();
  for (const p of others.filter(isProbe)) {
    if (seen.has(p.name)) {
      errors.push({ file: dir, message: `probe name "${p.name}" is used twice in the rules folder` });
      continue;
    }
    if (p.name === 'config') {
      errors.push({
        file: dir,
        message: 'probe name "config" is reserved for the probe an instance defines in its own config (user.reflex.probe.*)',
      });
      continue;
    }
    seen.add(p.name);
    probes.push(p);
  }
  return { probes, errors };
}
