import type { Instance } from '../client/instance.js';
import { StatusCode } from '../client/status-code.js';
import type { CanonicalEvent, InstanceStatusEvent } from '../events/canonical-event.js';
import type { InstanceRef } from '../redis/key-space.js';
import { describeIdentity, identityOf } from './instance-identity.js';

/**
 * Why the daemon contradicts a stop: the name names no instance (`gone`), the instance is up and
 * has been since before the event (`not-down`: the frame is forged or stale), it is another
 * instance than the event's (`another-instance`), it was started again after the event
 * (`started-since`: the stop may have been real, a guest reboot on LXD 5.0 sends just that, but
 * there is nothing left to heal), or it was already down in that status before the event and has
 * not been started since (`already-down`: nothing stopped; an operator's stop, say, is not to be
 * taken for a crash because a forged or stale frame repeats it).
 */
export type Contradiction = 'gone' | 'not-down' | 'another-instance' | 'started-since' | 'already-down';

/** Whether a contradiction says the frame is suspicious (forged or stale), not merely overtaken. */
export function isSuspicious(contradiction: Contradiction): boolean {
  return contradiction !== 'started-since';
}

/** What the daemon says of a stop event. */
export type StopVerdict =
  /** Not a stop that would count as a crash: nothing was read. */
  | { checked: false }
  /** The daemon agrees: the instance as read (the rules decide on it). */
  | { checked: true; confirmed: true; instance: Instance }
  /** The daemon disagrees: why, one line saying so, and the instance as last read (none when gone). */
  | { checked: true; confirmed: false; contradiction: Contradiction; summary: string; instance?: Instance };

/** What confirming a stop needs. */
export interface StopConfirmationDeps {
  /** Reads the instance now through the target's client; undefined when the daemon answers 404. */
  readInstance(ref: InstanceRef): Promise<Instance | undefined>;
  /**
   * What the state tracker held for the instance before this event (the entry the event replaced),
   * when the event is still the tracker's latest word on it; undefined when that cannot be told.
   */
  knownBefore(ref: InstanceRef, eventId: string): Promise<{ status: number; at: number } | undefined>;
  /**
   * How long an instance that still reads as up is read again before the stop is called
   * contradicted: a daemon may report the stop before its status says Stopped. Default 2 000 ms.
   */
  settleMs?: number;
}

/** First pause between reads of an instance that still reads as up; doubled each time, within {@link StopConfirmationDeps.settleMs}. */
const FIRST_REREAD_MS = 100;

/** Statuses in which a stop is true: the instance is down. */
const down = new Set<number>([StatusCode.Stopped, StatusCode.Error]);

/**
 * Whether an event would count as a crash (spend the crash-loop budget, raise the crash alert,
 * queue a remediation) if believed: a stop or Error from the stream with nobody's request behind
 * it. A resync's event is a read of the daemon already, and an operator's or Reflex's own stop is
 * no crash: neither is checked.
 */
export function countsAsCrash(event: CanonicalEvent): event is InstanceStatusEvent {
  return event.kind === 'instance.status' && !event.synthetic && down.has(event.to) && (event.intent === 'unrequested' || event.intent === 'unknown');
}

/**
 * Believe the daemon, not the frame: before a stop counts as a crash it is checked against the
 * instance as the daemon has it. Anyone who can write to the events socket (or a replayed,
 * stale frame) could otherwise make Reflex spend a crash-loop restart on a running instance, or
 * raise a crash alert for a name that exists nowhere, which no recovery would ever resolve.
 *
 * The stop is confirmed when the instance exists, is the instance the event is about (created
 * before the event, on the member that sent it) and is down (Stopped or Error). One read for the
 * stops that would count (the rules decide on that read, so it costs no extra call); an instance
 * that still reads as up is read again for up to `settleMs` before the stop is called
 * contradicted, since a real stop may be reported before the daemon's status catches up.
 */
export class StopConfirmation {
  private readonly settleMs: number;

  constructor(private readonly deps: StopConfirmationDeps) {
    this.settleMs = deps.settleMs ?? 2_000;
  }

  async confirm(event: CanonicalEvent): Promise<StopVerdict> {
    if (!countsAsCrash(event)) return { checked: false };
    const ref = { target: event.target, project: event.project, instance: event.instance };
    const deadline = Date.now() + this.settleMs;
    for (let pause = FIRST_REREAD_MS; ; pause *= 2) {
      const instance = await this.deps.readInstance(ref);
      const verdict = judge(event, instance);
      if (verdict.confirmed) return this.downSinceBefore(event, verdict.instance, ref);
      // Only "not down yet" can change by waiting.
      if (verdict.contradiction !== 'not-down') return verdict;
      const left = deadline - Date.now();
      if (left <= 0) return verdict;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
    }
  }

  /**
   * A stop of an instance that was already down in that status before the event (the stream told
   * so, `event.from`) is no new stop unless the daemon shows a start since: a start the stream did
   * not tell of, then a crash. Without a start since, the frame repeats a stop that has been
   * decided already (an operator's, or a crash being handled) and counts for nothing.
   */
  private async downSinceBefore(event: InstanceStatusEvent, instance: Instance, ref: InstanceRef): Promise<Extract<StopVerdict, { checked: true }>> {
    if (event.from !== event.to) return { checked: true, confirmed: true, instance };
    const before = await this.deps.knownBefore(ref, event.id);
    const lastStart = instance.last_used_at ? Date.parse(instance.last_used_at) : Number.NaN;
    if (before && lastStart > before.at) return { checked: true, confirmed: true, instance };
    const since = before ? ` since ${new Date(before.at).toISOString()}` : '';
    return {
      checked: true,
      confirmed: false,
      contradiction: 'already-down',
      instance,
      summary: `contradicted by the daemon: ${event.action ?? 'stop'} of ${event.instance} at ${event.timestamp}, but ${event.instance} was ${instance.status} (${instance.status_code}) already${since} and has not been started since (last start ${instance.last_used_at ?? 'unknown'})`,
    };
  }
}

/** The daemon's answer on one read. */
function judge(event: InstanceStatusEvent, instance: Instance | undefined): Extract<StopVerdict, { checked: true }> {
  const what = `${event.action ?? 'stop'} of ${event.instance} at ${event.timestamp}`;
  if (!instance)
    return {
      checked: true,
      confirmed: false,
      contradiction: 'gone',
      summary: `contradicted by the daemon: ${what}, but no instance ${event.instance} exists in project ${event.project} (404)`,
    };
  const createdAt = identityOf(instance).createdAt;
  if (createdAt !== undefined && Date.parse(createdAt) > Date.parse(event.timestamp))
    return {
      checked: true,
      confirmed: false,
      contradiction: 'another-instance',
      instance,
      summary: `contradicted by the daemon: ${what}, but the instance under that name now was created after it (${describeIdentity(identityOf(instance))}, created ${createdAt}): the event is not about it`,
    };
  const member = memberOf(event.location);
  const location = memberOf(instance.location);
  if (member && location && member !== location)
    return {
      checked: true,
      confirmed: false,
      contradiction: 'another-instance',
      instance,
      summary: `contradicted by the daemon: ${what} from cluster member ${member}, but ${event.instance} is on ${location}`,
    };
  if (down.has(instance.status_code)) return { checked: true, confirmed: true, instance };
  if (startedAfter(event, instance))
    return {
      checked: true,
      confirmed: false,
      contradiction: 'started-since',
      instance,
      summary: `overtaken: ${what}, but ${event.instance} is ${instance.status} (${instance.status_code}), started again at ${instance.last_used_at} (after the event): nothing left to heal`,
    };
  return {
    checked: true,
    confirmed: false,
    contradiction: 'not-down',
    instance,
    summary: `contradicted by the daemon: ${what}, but ${event.instance} is ${instance.status} (${instance.status_code}) and has been since before it`,
  };
}

/** Whether the daemon's `last_used_at` (its last start) is after the event: a later start, not a stop still settling (daemon time on both sides). */
function startedAfter(event: InstanceStatusEvent, instance: Instance): boolean {
  const at = instance.last_used_at ? Date.parse(instance.last_used_at) : Number.NaN;
  return at > Date.parse(event.timestamp);
}

/** A cluster member's name; undefined on a standalone server (`none`, empty). */
function memberOf(location: string | undefined): string | undefined {
  return location && location !== 'none' ? location : undefined;
}
