import { parseBoundedJson } from '../input/json-bounds.js';
import { refusedFrameNote } from './refused-frame.js';

/** Default largest frame the events WebSocket accepts: 4 MiB (the `ws` default is 100 MiB). */
export const DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024;

/** Default largest event kept whole (queued, audited, archived, or kept as rejected): 64 KiB. */
export const DEFAULT_MAX_EVENT_BYTES = 64 * 1024;

/** What replaces a field too large to keep. */
export interface TruncatedMarker {
  truncated: true;
  /** Size of the field's JSON, in bytes. */
  bytes: number;
}

// What an event is about and what it says happened: kept while anything else can go.
const kept = new Set([
  'type',
  'timestamp',
  'location',
  'project',
  'metadata',
  'action',
  'source',
  'name',
  'requestor',
  'id',
  'class',
  'status',
  'status_code',
  'resources',
  'err',
  'description',
  'created_at',
  'updated_at',
  'may_cancel',
]);

/** Longest string a kept field keeps when even the kept fields are too large. */
const KEPT_STRING_CHARS = 1024;

const byteSize = (text: string): number => Buffer.byteLength(text);

/**
 * A frame no larger than `maxBytes`: the frame itself when it fits; otherwise its largest fields
 * (of the frame, then of its metadata, then of their nested objects) replaced by
 * `{"truncated": true, "bytes": N}`, largest first, keeping the fields that say what happened
 * (type, timestamp, action, source, name, project, status…), and `reflexTruncatedFrom: N` (its
 * size) added last. A frame that cannot be parsed safely
 * (not JSON, not an object, nested deeper than 64 levels) becomes the note of
 * its refusal ({@link refusedFrameNote}: reason, true size, a bounded sample), which the processor
 * rejects. Never throws.
 */
export function limitFrameSize(raw: string, maxBytes = DEFAULT_MAX_EVENT_BYTES, receivedAt = Date.now()): { raw: string; truncatedBytes?: number } {
  if (raw.length * 3 <= maxBytes || Buffer.byteLength(raw) <= maxBytes) return { raw };
  const bytes = Buffer.byteLength(raw);
  const parsed = parseBoundedJson(raw);
  if (!parsed.ok || !isObject(parsed.value))
    return { raw: refusedFrameNote(Buffer.from(raw), parsed.ok ? 'not a JSON object' : parsed.problem, receivedAt), truncatedBytes: bytes };
  const frame = parsed.value;
  const objects = [frame, ...(isObject(frame.metadata) ? [frame.metadata] : [])];
  if (isObject(frame.metadata)) for (const v of Object.values(frame.metadata)) if (isObject(v)) objects.push(v);
  let size = bytes;
  // Droppable fields first, then kept strings shortened, then whatever is still too large.
  for (const pass of ['droppable', 'kept-strings', 'any'] as const) {
    const fields = objects.flatMap((o) => Object.keys(o).map((k) => ({ o, k, size: byteSize(JSON.stringify(o[k]) ?? '') })));
    fields.sort((a, b) => b.size - a.size);
    for (const f of fields) {
      if (size <= maxBytes) break;
      const v = f.o[f.k];
      if (f.size < 64 || isMarker(v) || (objects.includes(v as Record<string, unknown>) && pass !== 'any')) continue;
      if (pass === 'droppable' && kept.has(f.k)) continue;
      if (pass === 'kept-strings') {
        if (typeof v !== 'string' || v.length <= KEPT_STRING_CHARS) continue;
        f.o[f.k] = `${v.slice(0, KEPT_STRING_CHARS)}…[truncated: ${f.size} bytes]`;
      } else {
        f.o[f.k] = { truncated: true, bytes: f.size } satisfies TruncatedMarker;
      }
      // The field's own change, not the frame serialised again: a frame of thousands of fields costs one pass, not one per field.
      size += byteSize(JSON.stringify(f.o[f.k])) - f.size;
    }
  }
  // Last, so a rejected copy still tells the frame's true size (truncatedFrom below).
  frame[TRUNCATED_FROM] = bytes;
  return { raw: JSON.stringify(frame), truncatedBytes: bytes };
}

const TRUNCATED_FROM = 'reflexTruncatedFrom';
const truncatedFromPattern = new RegExp(`,"${TRUNCATED_FROM}":(\\d+)\\}$`);

/** The size a frame had before {@link limitFrameSize} truncated it (its last field); undefined for any other text. */
function truncatedFrom(raw: string): number | undefined {
  const m = truncatedFromPattern.exec(raw.slice(-48));
  return m ? Number(m[1]) : undefined;
}

/** `text` cut to about `maxBytes` (whole characters), with a marker saying how large it was. */
export function cutText(text: string, maxBytes = DEFAULT_MAX_EVENT_BYTES): string {
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxBytes) return text;
  const head = Buffer.from(text)
    .subarray(0, maxBytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return `${head}…[truncated: ${bytes} bytes]`;
}

const OVERSIZED = 'reflex.oversized-frame';

/**
 * What the subscriber queues in place of a frame the WebSocket refused (larger than
 * `maxFrameBytes`: `ws` closes the socket with 1009 and the frame is gone), with its size as its
 * header declared it when known. The processor rejects it like a malformed frame, so it is kept in
 * the rejected stream (with that size), audited and alerted once.
 */
export function oversizedFrameNote(maxFrameBytes: number, receivedAt: number, bytes?: number): string {
  return JSON.stringify({
    type: OVERSIZED,
    maxFrameBytes,
    ...(bytes === undefined ? {} : { bytes }),
    receivedAt: new Date(receivedAt).toISOString(),
  });
}

/** The reason to reject a frame that is an {@link oversizedFrameNote}; undefined for any other. */
export function oversizedReason(json: unknown): string | undefined {
  if (!isObject(json) || json.type !== OVERSIZED) return undefined;
  const size = typeof json.bytes === 'number' ? `of ${json.bytes} bytes, ` : '';
  return `a frame ${size}larger than maxFrameBytes (${String(json.maxFrameBytes)} bytes) was refused by the events socket (closed with 1009) and is lost; the stream reconnected and a resync covered the gap`;
}

/**
 * The size of the frame a queued text stands for, when it is not the text's own: a frame's before
 * {@link limitFrameSize} truncated it, an oversized frame's as its header declared it. Undefined otherwise.
 */
export function frameBytesOf(raw: string): number | undefined {
  const before = truncatedFrom(raw);
  if (before !== undefined || !raw.startsWith(`{"type":"${OVERSIZED}",`)) return before;
  const declared = /"bytes":(\d+)/.exec(raw);
  return declared ? Number(declared[1]) : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isMarker(v: unknown): boolean {
  return isObject(v) && v.truncated === true;
}
