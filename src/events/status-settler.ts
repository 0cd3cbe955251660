import type { AuditLog } from '../audit/audit-log.js';
import type { InstanceClient } from '../client/client.js';
import type { Instance } from '../client/instance.js';
import { StatusCode } from '../client/status-code.js';
import type { InstanceRef } from '../redis/key-space.js';
import type { InstanceStatusEvent } from './canonical-event.js';
import { evacuationIntent, type OwnOperation, type OwnOperationsReader, type StartFailures } from './intent.js';
import type { StateTracker, TrackedStatus } from './state-tracker.js';

/**
 * What settling made of a status event: `processed` and `corrected` events go on through the
 * pipeline (a corrected one was older than the tracked state, but a read proved the tracker wrong);
 * `stale` and `unchanged` ones stop here.
 */
export type Settled = 'stale' | 'unchanged' | 'processed' | 'corrected';

/** What settling a status event needs. */
export interface StatusSettlerDeps {
  tracker: StateTracker;
  audit: AuditLog;
  /** The client of the target an event came from. */
  client: (target: string) => InstanceClient;
  ownOperations: OwnOperationsReader;
  startFailures: StartFailures;
  /** Reads the instance now; undefined when it is gone. */
  readInstance: (ref: InstanceRef) => Promise<Instance | undefined>;
}

/**
 * The last step of ingest for an `instance.status` event: its intent refined with Reflex's own
 * operations, evacuations and failed starts, and its place in the instance's history settled
 * against the state tracker. Only a settled event reaches the rules.
 */
export class StatusSettler {
  constructor(private readonly deps: StatusSettlerDeps) {}

  /**
   * Matches Reflex's own operations (intent `self`), fills in `from`, and drops news older than
   * what is known (events arrive out of order), redeliveries of finished events, and synthetic
   * events that change nothing. An event older than the known state that disagrees with it is
   * checked against a read of the instance: if the read agrees with the event, the tracker was
   * wrong and the event is published, corrected. `read`: the instance's tracker entry as the caller
   * read it just before, nothing written to it since (a stop's failed-start check then needs no read);
   * `own`: the instance's record of Reflex's own operations as read for this event (`OwnOperations.readFor`).
   */
  async settle(event: InstanceStatusEvent, read?: { known: TrackedStatus | undefined }, own?: readonly OwnOperation[]): Promise<Settled> {
    const { tracker, audit } = this.deps;
    const ref = { target: event.target, project: event.project, instance: event.instance };
    const client = this.deps.client(event.target);
    event.intent = await evacuationIntent(client, {
      intent: await this.deps.ownOperations.classify(ref, event, own),
      location: event.location,
      timestamp: event.timestamp,
    });
    const refined = await this.deps.startFailures.classify(ref, event, { tracker, client, own: this.deps.ownOperations, ...(read ? { read } : {}) });
    event.intent = refined.intent;
    if (refined.startFailure) event.startFailure = refined.startFailure;
    const origin = {
      source: event.synthetic ? ('read' as const) : ('event' as const),
      eventId: event.id,
      intent: event.intent,
      requested: event.intent === 'requested',
      ...(event.synthetic && event.lastUsedAt ? { lastUsedAt: event.lastUsedAt } : {}),
    };
    const update = await tracker.update(ref, event.to, Date.parse(event.timestamp), origin);
    if (!update.applied) {
      const current = update.current;
      // The stream's own event for a stop a resync saw without a cause: now the cause is known.
      if (
        !event.synthetic &&
        current.source === 'read' &&
        current.intent === 'unknown' &&
        current.status === event.to &&
        event.intent !== 'unknown' &&
        current.eventId
      ) {
        if (await tracker.explain(ref, current.eventId, event)) {
          if (current.prev) event.from = current.prev.status;
          return 'processed';
        }
      }
      if (current.status !== event.to && !event.synthetic) return this.confirmStale(event, current.status);
      // A resync's read that the stream has already overtaken is routine, not news: archived as stale, not audited.
      if (event.synthetic) return 'stale';
      await audit.append(
        {
          type: 'event',
          correlationId: event.id,
          target: event.target,
          instance: event.instance,
          summary: `stale: ${event.action ?? 'status'} at ${event.timestamp} is older than the known state; ignored`,
          event,
        },
        { once: `event:${event.id}` },
      );
      return 'stale';
    }
    const previous = update.previous;
    // Started and down again unseen: the resync's `from` (Running) says what came in between.
    if (previous && !event.startedUnseen) event.from = previous.status;
    if (event.synthetic && previous?.status === event.to && !event.startedUnseen) return 'unchanged';
    // The stream's own report of a change a resync already published (it came after the grace period).
    if (!event.synthetic && previous?.source === 'read' && previous.status === event.to && event.action !== 'instance-restarted') {
      // The resync could not tell why it stopped; the stream now says: the change is published again, explained.
      if (previous.intent !== 'unknown' || event.intent === 'unknown') {
        // Nothing new, but a frame of the stream all the same: it leaves its record, as a stale one does.
        await audit.append(
          {
            type: 'event',
            correlationId: event.id,
            target: event.target,
            instance: event.instance,
            summary: `unchanged: ${event.action ?? 'status'} at ${event.timestamp} reports what a resync already published (${previous.status}, ${previous.intent ?? 'cause unknown'}); nothing new`,
            event,
          },
          { once: `event:${event.id}` },
        );
        return 'unchanged';
      }
      if (previous.prev) event.from = previous.prev.status;
    }
    // First sight of an instance (start-up resync): a baseline, not a transition, unless it is in Error.
    // One that ran and went down again in a gap before it was ever seen is news all the same.
    if (event.synthetic && !previous && event.to !== StatusCode.Error && !event.startedUnseen) return 'unchanged';
    return 'processed';
  }

  /**
   * A late event that contradicts the tracked status: the read decides. Only when the instance
   * really is in the event's status (the tracker missed the change) is the event published, with
   * the read's time; otherwise it is old news.
   */
  private async confirmStale(event: InstanceStatusEvent, tracked: number): Promise<Settled> {
    const { tracker, audit } = this.deps;
    const ref = { target: event.target, project: event.project, instance: event.instance };
    const inst = await this.deps.readInstance(ref);
    if (!inst || inst.status_code !== event.to) {
      await audit.append(
        {
          type: 'event',
          correlationId: event.id,
          target: event.target,
          instance: event.instance,
          summary: `stale: ${event.action ?? 'status'} at ${event.timestamp} is older than the known state (confirmed by a read); ignored`,
          event,
        },
        { once: `event:${event.id}` },
      );
      return 'stale';
    }
    const update = await tracker.update(ref, inst.status_code, Date.now(), {
      source: 'read',
      eventId: event.id,
      ...(inst.last_used_at ? { lastUsedAt: inst.last_used_at } : {}),
      requested: event.intent === 'requested',
    });
    if (!update.applied) return 'stale';
    event.from = tracked;
    return 'corrected';
  }
}
