import { createHash } from 'node:crypto';
import type { RedisConnection } from '../redis/connect.js';
import type { InstanceRef, KeySpace } from '../redis/key-space.js';
import type { Intent } from './canonical-event.js';
import { causedBy, type OwnOperation, type OwnOperationsReader } from './intent.js';
import { StatusCode } from '../client/status-code.js';
import { StateTracker } from './state-tracker.js';

/** How long Reflex remembers its operations on an instance. */
const OWN_OPERATIONS_TTL_MS = 600_000;
/** How long a probe's command is remembered on an instance after its last check. */
const PROBE_EXEC_TTL_MS = 600_000;
/** Own operation ids a process keeps known (see {@link OwnOperations.isOwn}). */
const KNOWN_OWN_MAX = 10_000;

/** An event as {@link OwnOperations.classify} refines its intent. */
type ClassifiedEvent = { id?: string; intent: Intent; action?: string; timestamp: string; synthetic?: boolean };

/** Whether classifying the event reads the record: a request, or a shutdown that may follow a failed start of ours. */
const readsRecord = (event: ClassifiedEvent) =>
  !event.synthetic && (event.intent === 'requested' || (event.intent === 'unrequested' && event.action === 'instance-shutdown'));

const commandHash = (command: unknown[]) => createHash('sha1').update(JSON.stringify(command)).digest('hex').slice(0, 16);

/**
 * The one record of what Reflex itself does to an instance, shared in Redis so a replica that did
 * not send the call still recognises the events it causes: the operations its actions send (by
 * operation and its window) and the commands its exec probes run. The acting client and the probe
 * runner write it; deciding reads it, and so needs neither. Keyed by target, project and instance.
 */
export class OwnOperations implements OwnOperationsReader {
  private readonly probesMarked = new Map<string, number>();
  /**
   * Operation ids this process has read in an instance's record, by record key and id: an id
   * once recorded as Reflex's stays Reflex's, so each operation of a remediation is read once
   * instead of once per status event of it (created, running, done). Oldest first, bounded.
   */
  private readonly knownOwn = new Set<string>();

  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: KeySpace,
  ) {}

  /** Records the state of one of Reflex's calls; `id` is the operation id, or a local id before the reply. */
  async record(ref: InstanceRef, id: string, op: OwnOperation, replaces?: string): Promise<void> {
    const key = this.keys.ownOperations(ref);
    const tx = this.redis.multi().hset(key, id, JSON.stringify(op));
    if (replaces && replaces !== id) tx.hdel(key, replaces);
    await tx.pexpire(key, OWN_OPERATIONS_TTL_MS).exec();
  }

  /** Ids of the operations Reflex started on the instance lately. */
  async ids(ref: InstanceRef): Promise<string[]> {
    return this.redis.hkeys(this.keys.ownOperations(ref));
  }

  /**
   * Whether Reflex started the operation on the instance: answered from what this process has
   * already read of the record when it holds the id, else from Redis (an id not there yet may be
   * recorded later, so a no is never kept).
   */
  async isOwn(ref: InstanceRef, operationId: string): Promise<boolean> {
    const key = this.keys.ownOperations(ref);
    if (this.knownOwn.has(`${key}\u0000${operationId}`)) return true;
    const ids = await this.ids(ref);
    for (const id of ids) this.knownOwn.add(`${key}\u0000${id}`);
    for (const old of this.knownOwn) {
      if (this.knownOwn.size <= KNOWN_OWN_MAX) break;
      this.knownOwn.delete(old);
    }
    return ids.includes(operationId);
  }

  async list(ref: InstanceRef): Promise<OwnOperation[]> {
    const raw = await this.redis.hvals(this.keys.ownOperations(ref));
    return raw.map((r) => JSON.parse(r) as OwnOperation);
  }

  /**
   * The record {@link classify} reads for the event, read now, so that the caller can send the read
   * beside another one and hand it to classify; undefined when classify reads none for the event.
   */
  async readFor(ref: InstanceRef, event: ClassifiedEvent): Promise<OwnOperation[] | undefined> {
    return readsRecord(event) ? this.list(ref) : undefined;
  }

  /**
   * Refines the daemon's intent of an event with Reflex's own operations: a requested transition
   * that one of them caused is `self`; so is the spurious shutdown after a failed start of ours.
   * An operator acting seconds after Reflex stays `requested`: the event falls outside the window
   * of every operation Reflex ran. `read`: the instance's record as {@link readFor} read it for
   * this event (every mark of an operation precedes the events it causes); default: read here.
   */
  async classify(ref: InstanceRef, event: ClassifiedEvent, read?: readonly OwnOperation[]): Promise<Intent> {
    if (!readsRecord(event)) return event.intent;
    const ops = read ?? (await this.list(ref));
    const at = Date.parse(event.timestamp);
    // A start of ours the daemon took after a failed one ran the instance again: a shutdown after
    // it is a new stop (a crash), not the failed start's echo, however soon it comes.
    const overtaken = (failed: OwnOperation) =>
      ops.some(
        (o) =>
          o.action === 'start' &&
          (o.state === 'done' || o.state === 'running') &&
          o.createdAt !== undefined &&
          o.createdAt > (failed.endedAt ?? failed.sentAt) &&
          o.createdAt <= at,
      );
    const caused = ops.filter((op) => causedBy(op, event) && !(event.intent === 'unrequested' && overtaken(op)));
    if (!caused.length) return event.intent;
    // A failed start of ours leaves an instance that never ran: a shutdown of an instance last seen
    // Running is a crash, even right after a start of ours refused because it already ran.
    if (event.intent === 'unrequested') {
      const now = await new StateTracker(this.redis, this.keys).get(ref);
      // A redelivered event finds itself in the tracker: what it replaced is what was seen before.
      const before = event.id !== undefined && now?.eventId === event.id ? now.prev : now;
      if (before?.status === StatusCode.Running) return event.intent;
    }
    return 'self';
  }

  /**
   * Whether an `instance-exec` event is the echo of a command Reflex ran (the `exec` action; the
   * event names no requestor on LXD 5.0.2): matched by the exec's operation window, like the
   * echoes of its state changes, so Reflex's own command never triggers a rule.
   */
  async ownExec(ref: InstanceRef, event: { action?: string; timestamp: string }): Promise<boolean> {
    if (event.action !== 'instance-exec') return false;
    const ops = await this.list(ref);
    return ops.some((op) => op.action === 'exec' && causedBy(op, { intent: 'requested', action: event.action, timestamp: event.timestamp }));
  }

  /**
   * Records that an exec probe runs `command` on the instance (a Redis write at most once per half
   * TTL): each check makes the daemon announce an exec with its command, the echo of Reflex's own
   * probing ({@link isProbeEcho}). An operator's exec of the very same command is taken for it (docs/probes.md).
   */
  async probeExec(ref: InstanceRef, command: string[]): Promise<void> {
    const key = this.keys.probes.echo(ref, commandHash(command));
    const now = Date.now();
    if ((this.probesMarked.get(key) ?? 0) > now - PROBE_EXEC_TTL_MS / 2) return;
    await this.redis.set(key, '1', 'PX', PROBE_EXEC_TTL_MS);
    this.probesMarked.set(key, now);
  }
}

/**
 * Whether an `instance-exec` event's command is one an exec probe runs on that instance
 * ({@link OwnOperations.probeExec}): not news, so the events pipeline drops it (no audit record, no rule).
 */
export async function isProbeEcho(
  redis: RedisConnection,
  keys: KeySpace,
  ref: InstanceRef,
  context: Record<string, unknown> | undefined,
): Promise<boolean> {
  const command = context?.command;
  if (!Array.isArray(command)) return false;
  return (await redis.exists(keys.probes.echo(ref, commandHash(command)))) === 1;
}
