import { eventItemHash } from '../../events/event-ingestor.js';
import { eventItemSchema, type EventItem } from '../../events/event-job.js';
import { clampedTimestamp } from '../../events/event-time.js';
import { decodeFrame } from '../../events/frame.js';
import { normalizeFrame } from '../../events/normalize.js';
import type { CanonicalEvent } from '../../events/canonical-event.js';

/** An event of a batch, decoded, waiting for its turn. */
export type Prepared = {
  item?: EventItem;
  raw: unknown;
  hash: string;
  event?: CanonicalEvent;
  rejected?: string;
  lost?: true;
  futureTimestamp?: string;
};

/** The items of a job of the events queue: a batch's, or the one item it is. */
export function itemsOf(data: unknown): unknown[] {
  const batch =
    typeof data === 'object' && data !== null && (data as { kind?: unknown }).kind === 'batch' && Array.isArray((data as { items?: unknown }).items);
  return batch ? (data as { items: unknown[] }).items : [data];
}

/**
 * Validates and types one item on its own: whatever is wrong with it rejects it alone. A frame
 * dated more than `clockToleranceMs` ahead of its receipt is given its receipt time, the time it
 * carried kept as `futureTimestamp`.
 */
export function prepare(raw: unknown, clockToleranceMs: number | undefined): Prepared {
  const parsed = eventItemSchema.safeParse(raw);
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `${i.path.join('.') || '(item)'}: ${i.message}`).join('; ');
    return { raw, hash: rawHash(raw), rejected: `invalid event item: ${why}` };
  }
  const item = parsed.data;
  const hash = eventItemHash(item);
  if (item.kind !== 'frame') return { item, raw, hash, event: item.event };
  try {
    const decoded = decodeFrame(item.raw);
    if (!decoded.ok) return { item, raw, hash, rejected: decoded.reason, ...(decoded.lost ? { lost: true as const } : {}) };
    const event = normalizeFrame(decoded.frame, item.target);
    // Clamped from the receipt time recorded at ingest: a redelivered frame is clamped the same way.
    const clamped = event && clampedTimestamp(event.timestamp, item.receivedAt, clockToleranceMs);
    if (!event || !clamped) return { item, raw, hash, event };
    const futureTimestamp = event.timestamp;
    event.timestamp = clamped;
    return { item, raw, hash, event, futureTimestamp };
  } catch (err) {
    // A bad %-escape in a source, an object too deep to walk: this frame only.
    return { item, raw, hash, rejected: `frame could not be typed: ${(err as Error).name}: ${(err as Error).message}` };
  }
}

/** Events of one instance share a lane (kept in order); malformed items share one too. */
export function laneOf(p: Prepared): string {
  const e = p.event;
  if (!e) return p.rejected !== undefined ? 'rejected' : 'ignored';
  const instance = 'instance' in e ? e.instance : e.kind === 'operation.status' ? e.instances[0] : undefined;
  if (instance !== undefined) return `${e.target}\u0000${e.project}\u0000${instance}`;
  return e.kind === 'operation.status' ? `op\u0000${e.operationId}` : `${e.kind}\u0000${e.id}`;
}

/** The item as kept in the rejected stream: a frame's text, anything else as JSON. */
export function rawText(p: Prepared): string {
  return p.item?.kind === 'frame' ? p.item.raw : safeJson(p.raw);
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch (err) {
    return `(not serialisable: ${(err as Error).message})`;
  }
}

function rawHash(v: unknown): string {
  return eventItemHash({ kind: 'frame', target: 'invalid', raw: safeJson(v), receivedAt: 0 });
}

/** One line saying what an event is, for its audit record. */
export function describeEvent(e: CanonicalEvent): string {
  if (e.kind === 'instance.status') {
    return `${e.instance}: ${e.from ?? '?'} → ${e.to} (${e.intent}${e.action ? `, ${e.action}` : ''}${e.synthetic ? ', seen by resync' : ''})`;
  }
  if (e.kind === 'lifecycle') {
    const from = e.action === 'instance-renamed' && typeof e.context?.old_name === 'string' ? ` (from ${e.context.old_name})` : '';
    return `${e.action} ${e.source}${from}${e.synthetic ? ' (seen by resync)' : ''}`;
  }
  if (e.kind === 'rule.event')
    return `${e.instance}: follow-up event ${e.name} from rule ${e.rule} (hop ${e.chain.length}, after incident ${e.causedBy})`;
  if (e.kind === 'alert')
    return `${e.instance ?? '(no instance)'}: alert ${e.alertname} ${e.status} (from ${e.source}, fingerprint ${e.fingerprint}, since ${e.startsAt})`;
  if (e.kind === 'instance.health')
    return `${e.instance}: probe ${e.probe} ${e.previous} → ${e.health} after ${e.consecutive} ${e.check} check(s) in a row since ${e.since} (${e.output.slice(-200) || 'no output'})`;
  return `operation ${e.operationId} → ${e.to}`;
}
