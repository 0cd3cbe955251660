import type { ApiRevision } from '../client/status-code.js';
import type { SimInstance } from './instance-model.js';

/**
 * `resources` of an instance operation. The earlier revision names containers under the legacy
 * `containers` key as well, as the seed says (LXD 5.0.2 does so for create, update, snapshot,
 * delete, exec and rename, and lists state changes under `instances` only); the later revision
 * (Incus) uses `instances`, adding `containers` for exec only.
 */
export function operationResources(
  revision: ApiRevision,
  inst: Pick<SimInstance, 'name' | 'type' | 'project'>,
  suffix = '',
  kind: 'exec' | 'other' = 'other',
): Record<string, string[]> {
  const res: Record<string, string[]> = {};
  const project = inst.project === 'default' ? '' : `?project=${inst.project}`;
  const legacy = inst.type === 'container' && (revision === 'earlier' || kind === 'exec');
  if (legacy) res.containers = [`/1.0/containers/${inst.name}${suffix}${project}`];
  res.instances = [`/1.0/instances/${inst.name}${suffix}${project}`];
  return res;
}
