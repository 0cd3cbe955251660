import { createHash } from 'node:crypto';
import type { InstanceClient } from '../client/client.js';
import { isUnreachableStub } from '../client/instance.js';
import type { CanonicalEvent } from './canonical-event.js';
import { recentStops, resyncIntent } from './intent.js';
import { StatusCode } from '../client/status-code.js';
import type { StateTracker } from './state-tracker.js';

/** Options of {@link resyncEvents}. */
export interface ResyncOptions {
  /**
   * How long to let the event stream catch up before calling a difference real. A crash reads
   * Stopped at once but its event comes after LXD's stop hook (~0.6 s): without this grace the
   * resync would report, with intent `unknown`, what the stream is about to report with its real
   * intent. Default 0 (the caller decides; the worker uses 1500 ms).
   */
  graceMs?: number;
  /** Read only this project (a target scoped to one project). Default: every project. */
  project?: string;
}

/**
 * Reads every instance (all projects, or `opts.project`) and returns a synthetic `instance.status` event for each one
 * whose status differs from the tracked one, or that is not tracked yet. The stream never replays
 * what was missed while disconnected; this diff is how a gap is covered.
 */
export async function resyncEvents(
  client: InstanceClient,
  tracker: StateTracker,
  target: string,
  opts: ResyncOptions = {},
): Promise<CanonicalEvent[]> {
  const readAt = new Date();
  const scope = opts.project ? client.withProject(opts.project) : client;
  const allProjects = !opts.project;
  const [listed, trackedBefore] = await Promise.all([scope.listInstances({ allProjects }), tracker.all(target)]);
  // An unreachable member's instances are listed as stubs whose status says nothing of the
  // instance: leave their tracked state as it was (the member.offline alert covers them), and
  // compare again once the member answers.
  const instances = listed
    .filter((i) => !isUnreachableStub(i))
    .map((i) => (i.project === undefined && opts.project ? { ...i, project: opts.project } : i));
  const differs = (t: Map<string, { status: number }>, key: string, status: number) => t.get(key)?.status !== status;
  let candidates = instances.filter((i) => differs(trackedBefore, `${i.project ?? 'default'}/${i.name}`, i.status_code));
  let tracked = trackedBefore;
  if (opts.graceMs && candidates.length) {
    await new Promise((r) => setTimeout(r, opts.graceMs));
    tracked = await tracker.all(target);
    candidates = candidates.filter((i) => differs(tracked, `${i.project ?? 'default'}/${i.name}`, i.status_code));
  }
  const requested = candidates.some((i) => i.status_code === StatusCode.Stopped) ? await recentStops(scope, allProjects) : new Set<string>();
  const out: CanonicalEvent[] = [];
  for (const inst of candidates) {
    const project = inst.project ?? 'default';
    const known = tracked.get(`${project}/${inst.name}`);
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
      intent: resyncIntent(inst.status_code, requested.has(`${project}/${inst.name}`)),
    });
  }
  return out;
}
