import { createHash } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { DEFAULT_MAX_JSON_DEPTH, jsonShape } from '../input/json-bounds.js';

/** Bytes of a refused frame kept as its sample (the frame's true size is kept beside it). */
export const REFUSED_SAMPLE_BYTES = 4096;

const REFUSED = 'reflex.refused-frame';
/** How every refusal note begins; a frame from the socket that begins so is refused itself (a forged note). */
const NOTE_PREFIX = `{"type":"${REFUSED}",`;

/** A frame refused before it was parsed: why, its true size, a bounded sample and the hash of all its bytes. */
export interface RefusedFrame {
  reason: string;
  bytes: number;
  /** SHA-256 of the frame's bytes (hex, 32 characters): identical frames are one rejected entry, counted. */
  hash: string;
  /** The first {@link REFUSED_SAMPLE_BYTES} bytes: as text when they are UTF-8, else base64. */
  sample: string;
  encoding: 'utf8' | 'base64';
}

// Two refusals of the same bytes must stay two queue items (the processor skips an item it has seen): each note is numbered.
let noteSeq = 0;

/**
 * The text queued in place of a refused frame: small JSON the processor rejects with `reason`
 * (frame.ts), kept once per distinct bytes with their repeats (rejected-events.ts).
 */
export function refusedFrameNote(bytes: Buffer, reason: string, receivedAt: number): string {
  const head = bytes.subarray(0, REFUSED_SAMPLE_BYTES);
  // A sample cut inside a character is still text: up to 3 bytes of it may be a character's start.
  const cut = bytes.length > head.length;
  const utf8 = isUtf8(head) || (cut && [1, 2, 3].some((n) => isUtf8(head.subarray(0, head.length - n))));
  const note: RefusedFrame & { receivedAt: string; seq: number } = {
    reason,
    bytes: bytes.length,
    hash: createHash('sha256').update(bytes).digest('hex').slice(0, 32),
    sample: utf8 ? head.toString('utf8').replace(/\uFFFD+$/, '') : head.toString('base64'),
    encoding: utf8 ? 'utf8' : 'base64',
    receivedAt: new Date(receivedAt).toISOString(),
    seq: ++noteSeq,
  };
  return `${NOTE_PREFIX}${JSON.stringify(note).slice(1)}`;
}

/** The refusal a queued text is a note of; undefined for any other text (a frame). */
export function readRefusedNote(raw: string): RefusedFrame | undefined {
  if (!raw.startsWith(NOTE_PREFIX) || raw.length > 4 * REFUSED_SAMPLE_BYTES) return undefined;
  try {
    const n = JSON.parse(raw) as Partial<RefusedFrame>;
    if (typeof n.reason !== 'string' || typeof n.bytes !== 'number' || typeof n.hash !== 'string' || typeof n.sample !== 'string') return undefined;
    return { reason: n.reason, bytes: n.bytes, hash: n.hash, sample: n.sample, encoding: n.encoding === 'base64' ? 'base64' : 'utf8' };
  } catch {
    return undefined;
  }
}

/** Bounds of {@link framesOfMessage}. */
export interface FrameBounds {
  /** Deepest nesting of a frame. Default 64. */
  maxDepth?: number;
}

const BOM = '\uFEFF';

/**
 * The frames of one WebSocket message, each a text to queue: the frame itself, or a note of its
 * refusal. A message is one frame (the daemon sends one JSON object per message, newline-
 * terminated), parsed whole, so a pretty-printed frame stays one frame. Only a message that is
 * not one JSON value is read as newline-delimited frames, and only when every line is JSON; else it
 * is one frame, rejected whole. Refused before anything parses them: empty messages, bytes that
 * are not UTF-8, frames nested deeper than `maxDepth`, and frames that are not JSON (so each
 * receipt of the same bad bytes is counted, not skipped as a duplicate). A UTF-8 byte order mark
 * is dropped (RFC 8259 §8.1 lets a parser ignore it). Never throws.
 */
export function framesOfMessage(data: Buffer, receivedAt: number, bounds: FrameBounds = {}): string[] {
  const refuse = (reason: string) => refusedFrameNote(data, reason, receivedAt);
  if (!isUtf8(data)) return [refuse('not valid UTF-8')];
  let text = data.toString('utf8');
  if (text.startsWith(BOM)) text = text.slice(1);
  const maxDepth = bounds.maxDepth ?? DEFAULT_MAX_JSON_DEPTH;
  const measured = jsonShape(text, { maxDepth });
  if (!measured.ok) return [refuse(measured.problem)];
  const { values } = measured.shape;
  if (values === 0) return [refuse(text.length ? 'empty frame (only whitespace)' : 'empty frame')];
  if (values > 1) {
    const lines = text.split('\n').filter((l) => l.trim());
    if (lines.length > 1 && lines.every((l) => jsonShape(l, { maxDepth }).ok && parses(l)))
      return lines.map((l) => checked(l, () => Buffer.from(l), receivedAt));
  }
  return [checked(text.trim(), () => data, receivedAt)];
}

/** The frame, or the note of its refusal (of `bytes`, the frame as received) when it is not JSON or forges a refusal note. */
function checked(frame: string, bytes: () => Buffer, receivedAt: number): string {
  if (frame.startsWith(NOTE_PREFIX)) return refusedFrameNote(bytes(), `claims the type ${REFUSED}, which only Reflex writes`, receivedAt);
  try {
    JSON.parse(frame);
    return frame;
  } catch (err) {
    return refusedFrameNote(bytes(), `not JSON: ${(err as Error).message}`, receivedAt);
  }
}

function parses(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
