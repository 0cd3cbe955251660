import type { Logger } from 'pino';
import type { InstanceClient } from '../client/client.js';
import type { Instance } from '../client/instance.js';
import { evaluateFilter } from '../filter/evaluator.js';
import type { InstanceRef } from '../redis/key-space.js';
import { probesOfConfig, type Probe } from './probe.js';

/** One probe of one instance as last listed. */
export interface Planned {
  id: string;
  ref: InstanceRef;
  probe: Probe;
  instance: Instance;
  uuid: string | undefined;
}

/** The id of a probe on an instance identity: target, project, `volatile.uuid` (the name when none) and probe name. */
export function probeId(ref: InstanceRef, uuid: string | undefined, probe: string): string {
  return `${ref.target}|${ref.project}|${uuid ?? ref.instance}|${probe}`;
}

/** What one listing of every target found. */
export interface ProbePlan {
  planned: Planned[];
  /** Every target answered: what is not planned is gone. */
  complete: boolean;
  /** The config problems warned of, per instance (`target|project|instance`), to warn again only when they change. */
  problems: Map<string, string>;
}

/**
 * Lists every instance of every target (all projects) and the probes each has: the folder's
 * probes whose scope it is in, adjusted by its own `user.reflex.probe.*` keys, and the probe those
 * keys define. A target that does not answer keeps what `previous` planned for it. An instance's
 * keys that cannot be read are warned of once, and again when they change (`previous.problems`).
 */
export async function planProbes(
  targets: { id: string; client: InstanceClient }[],
  fileProbes: Probe[],
  previous: Pick<ProbePlan, 'planned' | 'problems'>,
  logger: Logger,
): Promise<ProbePlan> {
  const planned: Planned[] = [];
  const problems = new Map<string, string>();
  let complete = true;
  for (const t of targets) {
    let instances: Instance[];
    try {
      instances = await t.client.listInstances({ allProjects: true });
    } catch (err) {
      logger.warn({ err, target: t.id }, 'probes: could not list the instances of a target');
      planned.push(...previous.planned.filter((p) => p.ref.target === t.id));
      for (const [k, v] of previous.problems) if (k.startsWith(`${t.id}|`)) problems.set(k, v);
      complete = false;
      continue;
    }
    for (const instance of instances) {
      const ref = { target: t.id, project: instance.project ?? 'default', instance: instance.name };
      const config = { ...instance.config, ...(instance.expanded_config ?? {}) };
      const inScope = fileProbes.filter(
        (p) =>
          (!p.projects || p.projects.includes(ref.project)) &&
          (!p.targets || p.targets.includes(t.id)) &&
          (!p.scopeFilter || evaluateFilter(p.scopeFilter, instance)),
      );
      const found = probesOfConfig(config, inScope);
      if (found.problems.length) {
        // Once per instance while its keys stay as they are: the listing repeats every few seconds.
        const at = `${ref.target}|${ref.project}|${ref.instance}`;
        const said = found.problems.join('\n');
        if (previous.problems.get(at) !== said)
          logger.warn(
            { instance: ref.instance, project: ref.project, target: ref.target, problems: found.problems },
            'probes: instance config keys not understood (left out; warned again when they change)',
          );
        problems.set(at, said);
      }
      const uuid = config['volatile.uuid'];
      for (const probe of found.probes) planned.push({ id: probeId(ref, uuid, probe.name), ref, probe, instance, uuid });
    }
  }
  return { planned, complete, problems };
}
