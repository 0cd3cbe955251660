import { z } from 'zod';
import { operationSchema } from '../client/envelope.js';
import { parseBoundedJson } from '../input/json-bounds.js';
import { readRefusedNote } from './refused-frame.js';
import { oversizedReason } from './frame-size.js';

/**
 * One frame of `/1.0/events` as the daemon sends it (notes §1): type, timestamp (RFC 3339 with
 * nanoseconds), metadata, location ("none" on a standalone server), project.
 */
export const lifecycleMetadataSchema = z.looseObject({
  action: z.string().min(1),
  source: z.string(),
  context: z.record(z.string(), z.unknown()).nullable().optional(),
  requestor: z
    .looseObject({ username: z.string().optional(), protocol: z.string().optional(), address: z.string().optional() })
    .nullable()
    .optional(),
  name: z.string().optional(),
  project: z.string().optional(),
});

const base = {
  timestamp: z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'not an RFC 3339 timestamp'),
  location: z.string().optional(),
  project: z.string().optional(),
};

export const lifecycleFrameSchema = z.looseObject({ type: z.literal('lifecycle'), metadata: lifecycleMetadataSchema, ...base });
export const operationFrameSchema = z.looseObject({ type: z.literal('operation'), metadata: operationSchema, ...base });
export const loggingFrameSchema = z.looseObject({ type: z.literal('logging'), metadata: z.unknown(), ...base });

export const frameSchema = z.discriminatedUnion('type', [lifecycleFrameSchema, operationFrameSchema, loggingFrameSchema]);
export type Frame = z.infer<typeof frameSchema>;
export type LifecycleFrame = z.infer<typeof lifecycleFrameSchema>;
export type OperationFrame = z.infer<typeof operationFrameSchema>;

/** Result of decoding a raw frame: the frame, or why it was rejected (`lost`: a frame the socket refused, which operators hear of). */
export type DecodedFrame = { ok: true; frame: Frame } | { ok: false; reason: string; lost?: true };

/**
 * Parses and validates one raw text frame, bounded before it is parsed (64 levels deep). The note
 * of a frame refused on the way in (frame-intake.ts) is rejected with the refusal's reason. Never throws.
 */
export function decodeFrame(raw: string): DecodedFrame {
  const refused = readRefusedNote(raw);
  if (refused) return { ok: false, reason: refused.reason };
  const text = parseBoundedJson(raw);
  if (!text.ok) return { ok: false, reason: text.problem };
  const json = text.value;
  const lost = oversizedReason(json);
  if (lost) return { ok: false, reason: lost, lost: true };
  return typedFrame(json);
}

/** A parsed frame checked against the frame schema: typed, or why not ("invalid frame: <field>: <issue>"). */
export function typedFrame(json: unknown): DecodedFrame {
  const parsed = frameSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    return { ok: false, reason: `invalid frame: ${issues.join('; ')}` };
  }
  return { ok: true, frame: parsed.data };
}
