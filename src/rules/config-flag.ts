import type { Instance } from '../client/instance.js';

/**
 * Whether an instance has a boolean config key set to true, looking at the expanded config
 * (profiles included) first, like the daemon does.
 */
export function configFlag(instance: Instance | undefined, key: string): boolean {
  if (!instance) return false;
  const v = instance.expanded_config?.[key] ?? instance.config[key];
  return v !== undefined && ['true', '1', 'yes', 'on'].includes(v.toLowerCase());
}
