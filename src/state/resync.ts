import { createHash } from 'node:crypto';
import type { InstanceClient } from '../client/client.js';
import type { CanonicalEvent } from '../events/canonical-event.js';
import type { StateTracker } from './state-tracker.js';

/**
 * Reads every instance (all projects) and returns a synthetic `instance.status` event for each one
 * whose status differs from the tracked one, or that is not tracked yet. The stream never replays
 * what was missed while disconnected; this diff is how a gap is covered.
 */
export async function resyncEvents(client: InstanceClient, tracker: StateTracker, target: string): Promise<CanonicalEvent[]> {
  const readAt = new Date();
  const [instances, tracked] = await Promise.all([client.listInstances({ allProjects: true }), tracker.all(target)]);
  const out: CanonicalEvent[] = [];
  for (const inst of instances) {
    const project = inst.project ?? 'default';
    const known = tracked.get(`${project}/${inst.name}`);
    if (known && known.status === inst.status_code) continue;
    const timestamp = readAt.toISOString();
    out.push({
      kind: 'instance.status',
      id: createHash('sha256').update(`${target}|resync|${project}/${inst.name}|${inst.status_code}|${timestamp}`).digest('hex').slice(0, 32),
      target,
      location: inst.location ?? 'none',
      project,
      timestamp,
      synthetic: true,
      instance: inst.name,
      ...(known ? { from: known.status } : {}),
      to: inst.status_code,
      intent: 'unknown',
    });
  }
  return out;
}
