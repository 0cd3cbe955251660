import { createHash } from 'node:crypto';
import type { InstanceClient } from '../client/client.js';
import { isUnreachableStub } from '../client/instance.js';
import type { CanonicalEvent } from './canonical-event.js';
import type { OperationObject } from '../client/envelope.js';
import { recentStops, resyncIntent, stateChangeOf } from './intent.js';
import { operationEvent } from './normalize.js';
import { parseSource } from './source.js';
import { StatusCode } from '../client/status-code.js';
import { instanceOfKey, startedSince, type StateTracker, type TrackedStatus } from './state-tracker.js';

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
  /**
   * Also report the state changes the daemon still lists among its operations (it keeps an
   * operation 5 s after it ends), as synthetic `operation.status` events: after a gap (a reconnect,
   * a takeover from a replica that died with frames it had read and not written) an operator's
   * stop the daemon refused ("already stopped", while it ran a crash's stop hook) left no other
   * trace than its operation. The processor records them as requests, as it does the stream's
   * frames of them (the same record, kept once per operation); no rule acts on them.
   */
  operations?: boolean;
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
  const [listed, trackedBefore, operations, uuidsBefore] = await Promise.all([
    scope.listInstances({ allProjects }),
    tracker.all(target),
    opts.operations ? scope.listOperations({ allProjects }).catch(() => [] as OperationObject[]) : [],
    tracker.identities(target),
  ]);
  // An unreachable member's instances are listed as stubs whose status says nothing of the
  // instance: leave their tracked state as it was (the member.offline alert covers them), and
  // compare again once the member answers.
  const instances = listed
    .filter((i) => !isUnreachableStub(i))
    .map((i) => (i.project === undefined && opts.project ? { ...i, project: opts.project } : i));
  const since = await tracker.watchedSince(target, readAt.getTime());
  const keyOf = (i: (typeof instances)[number]) => `${i.project ?? 'default'}/${i.name}`;
  const listedKeys = new Set(instances.map(keyOf));
  // Renamed in the gap: not known under its name, and known under a name it had at the last read
  // (its `volatile.uuid` then), a name the daemon no longer lists.
  const renamedFrom = (t: Map<string, TrackedStatus>, i: (typeof instances)[number]) => {
    const uuid = i.config?.['volatile.uuid'];
    if (!uuid || t.has(keyOf(i))) return undefined;
    for (const [key, was] of uuidsBefore) if (was === uuid && !listedKeys.has(key) && t.has(key)) return key;
    return undefined;
  };
  const knownOf = (t: Map<string, TrackedStatus>, i: (typeof instances)[number]) => t.get(keyOf(i)) ?? t.get(renamedFrom(t, i) ?? '');
  const differs = (t: Map<string, TrackedStatus>, i: (typeof instances)[number]) => {
    const known = knownOf(t, i);
    return known?.status !== i.status_code || startedUnseen(known, i, since) !== undefined;
  };
  let candidates = instances.filter((i) => differs(trackedBefore, i));
  let tracked = trackedBefore;
  if (opts.graceMs && candidates.length) {
    await new Promise((r) => setTimeout(r, opts.graceMs));
    tracked = await tracker.all(target);
    candidates = candidates.filter((i) => differs(tracked, i));
  }
  const stops = candidates.some((i) => i.status_code === StatusCode.Stopped) ? await recentStops(scope, allProjects) : new Map<string, number>();
  // A stop operation explains the stop only when it came after the instance's last start.
  const requested = (key: string, lastUsedAt: string | undefined) => {
    const stop = stops.get(key);
    const lastStart = lastUsedAt ? Date.parse(lastUsedAt) : Number.NaN;
    return stop !== undefined && !(lastStart > stop);
  };
  const timestamp = readAt.toISOString();
  // A rename first: the processor carries what is known of the old name (an operator's stop) to the
  // new one, as it does for the stream's event of it, before anything else of the new name.
  const out: CanonicalEvent[] = instances.flatMap((inst) => {
    const from = renamedFrom(tracked, inst);
    return from ? [missedRenameEvent(target, inst, instanceOfKey(from).instance, timestamp)] : [];
  });
  out.push(...operations.flatMap((op) => stateChangeEvent(op, target, opts.project)));
  for (const inst of candidates) {
    const project = inst.project ?? 'default';
    const known = knownOf(tracked, inst);
    const unseen = startedUnseen(known, inst, since);
    out.push({
      kind: 'instance.status',
      id: createHash('sha256').update(`${target}|resync|${project}/${inst.name}|${inst.status_code}|${timestamp}`).digest('hex').slice(0, 32),
      target,
      location: inst.location ?? 'none',
      project,
      timestamp,
      synthetic: true,
      instance: inst.name,
      // Started and down again unseen: it was Running in between.
      ...(unseen ? { from: StatusCode.Running, startedUnseen: unseen } : known ? { from: known.status } : {}),
      to: inst.status_code,
      intent: resyncIntent(inst.status_code, requested(`${project}/${inst.name}`, inst.last_used_at)),
      ...(inst.last_used_at ? { lastUsedAt: inst.last_used_at } : {}),
    });
  }
  await tracker.recordIdentities(
    target,
    new Map(instances.flatMap((i) => (i.config?.['volatile.uuid'] ? [[keyOf(i), i.config['volatile.uuid']] as const] : []))),
    [...uuidsBefore.keys()].filter((k) => !listedKeys.has(k)),
  );
  return out;
}

/** A rename the stream's gap hid, as the synthetic event of it (the daemon's `instance-renamed`). */
export function missedRenameEvent(
  target: string,
  inst: { name: string; project?: string; location?: string },
  oldName: string,
  timestamp: string,
): CanonicalEvent {
  const project = inst.project ?? 'default';
  return {
    kind: 'lifecycle',
    id: createHash('sha256').update(`${target}|resync-rename|${project}/${oldName}|${inst.name}|${timestamp}`).digest('hex').slice(0, 32),
    target,
    location: inst.location ?? 'none',
    project,
    timestamp,
    synthetic: true,
    action: 'instance-renamed',
    source: `/1.0/instances/${encodeURIComponent(inst.name)}${project !== 'default' ? `?project=${encodeURIComponent(project)}` : ''}`,
    instance: inst.name,
    context: { old_name: oldName },
  };
}

/** A listed state-change operation on an instance as the synthetic event of its latest state. */
function stateChangeEvent(op: OperationObject, target: string, project: string | undefined): CanonicalEvent[] {
  if (op.class !== 'task' || !stateChangeOf(op.description) || Number.isNaN(Date.parse(op.created_at))) return [];
  const event = operationEvent(op, {
    id: createHash('sha256').update(`${target}|resync-operation|${op.id}|${op.status_code}`).digest('hex').slice(0, 32),
    target,
    location: op.location ?? 'none',
    project:
      [...(op.resources?.instances ?? []), ...(op.resources?.containers ?? [])].map(parseSource).find((s) => s.project)?.project ??
      project ??
      'default',
    // When it was requested: the time its first frame carries.
    timestamp: new Date(Date.parse(op.created_at)).toISOString(),
    synthetic: true,
  });
  return event.instances.length ? [event] : [];
}

/**
 * The daemon's last start of an instance that is down, when it ran and went down again while no
 * event was seen: known down and started after what was last known (an event of the stream,
 * stamped by the daemon's clock as `last_used_at` is; for what a read set, whose time is Reflex's,
 * a `last_used_at` other than the one read with it), or never seen at all and started after
 * Reflex first read the target (`watchedSince`: created and run in a gap, not a baseline).
 * Undefined otherwise, and for a read's entry that kept no `last_used_at`.
 */
function startedUnseen(
  known: TrackedStatus | undefined,
  inst: { status_code: number; last_used_at?: string; created_at?: string },
  watchedSince: number,
): string | undefined {
  if (inst.status_code !== StatusCode.Stopped && inst.status_code !== StatusCode.Error) return undefined;
  const lastStart = inst.last_used_at ? Date.parse(inst.last_used_at) : Number.NaN;
  // Incus gives a never-started instance its creation time as its last use.
  if (!known) return lastStart > watchedSince && lastStart > Date.parse(inst.created_at ?? '') ? inst.last_used_at : undefined;
  if (known.status !== inst.status_code) return undefined;
  return startedSince(known, inst.last_used_at) ? inst.last_used_at : undefined;
}
