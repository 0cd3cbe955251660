import { createHash } from 'node:crypto';
import { isUtf8 } from 'node:buffer';

/** Bytes of a refused frame kept as its sample (the frame's true size is kept beside it). */
export const REFUSED_SAMPLE_BYTES = 4096;

const REFUSED = 'reflex.refused-frame';
/** How every refusal note begins (its type is no frame type: one from the socket is refused, frame-intake.ts). */
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

/** Longest reason kept (a schema's issues can be many). */
const REASON_CHARS = 1024;
/** Longest note: a sample of control characters is escaped to 6 characters a byte, plus the reason. */
const MAX_NOTE_CHARS = 6 * REFUSED_SAMPLE_BYTES + REASON_CHARS + 512;

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
    reason: reason.length > REASON_CHARS ? `${reason.slice(0, REASON_CHARS)}…` : reason,
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
  if (!raw.startsWith(NOTE_PREFIX) || raw.length > MAX_NOTE_CHARS) return undefined;
  try {
    const n = JSON.parse(raw) as Partial<RefusedFrame>;
    if (typeof n.reason !== 'string' || typeof n.bytes !== 'number' || typeof n.hash !== 'string' || typeof n.sample !== 'string') return undefined;
    return { reason: n.reason, bytes: n.bytes, hash: n.hash, sample: n.sample, encoding: n.encoding === 'base64' ? 'base64' : 'utf8' };
  } catch {
    return undefined;
  }
}
