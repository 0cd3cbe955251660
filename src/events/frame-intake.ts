import { isUtf8 } from 'node:buffer';
import { DEFAULT_MAX_JSON_DEPTH, jsonShape } from '../input/json-bounds.js';
import { typedFrame } from './frame.js';
import { refusedFrameNote } from './refused-frame.js';

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
 * are not UTF-8, frames nested deeper than `maxDepth`, and frames that are not JSON or not frames
 * (so each receipt of the same bad bytes is counted, not skipped as a duplicate). A UTF-8 byte order mark
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

/**
 * The frame, or the note of its refusal (of `bytes`, the frame as received) when it is not JSON or
 * not a frame (the schema's one answer, frame.ts): every receipt of bad bytes reaches the rejected
 * stream, where a frame queued as it is would be skipped as a duplicate. A frame claiming one of
 * Reflex's own note types is not a frame either, so a note cannot be forged.
 */
function checked(frame: string, bytes: () => Buffer, receivedAt: number): string {
  let json: unknown;
  try {
    json = JSON.parse(frame);
  } catch (err) {
    return refusedFrameNote(bytes(), `not JSON: ${(err as Error).message}`, receivedAt);
  }
  const typed = typedFrame(json);
  return typed.ok ? frame : refusedFrameNote(bytes(), typed.reason, receivedAt);
}

function parses(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
