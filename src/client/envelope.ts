import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { z } from 'zod';
import { isKnownStatusCode } from './status-code.js';
import { ApiError } from './api-error.js';

/**
 * A status code of the table (either revision). Anything else — 600–999 are reserved — makes the
 * object invalid: the code is authoritative, so an unknown one cannot be interpreted.
 */
export const statusCodeSchema = z
  .number()
  .int()
  .refine((c) => isKnownStatusCode(c, 'later'), {
    error: (iss) => `status code ${String(iss.input)} is not in the status table (600–999 are reserved)`,
  });

/**
 * The three response envelopes of the instance API (seed §2). Schemas are loose on purpose:
 * the real daemon adds fields (errors carry status/status_code/operation too; notes §3).
 */
export const operationSchema = z.looseObject({
  id: z.string(),
  class: z.string(),
  description: z.string().optional().default(''),
  created_at: z.string(),
  updated_at: z.string(),
  status: z.string(),
  status_code: statusCodeSchema,
  resources: z.record(z.string(), z.array(z.string())).nullable().optional(),
  metadata: z.unknown().optional(),
  may_cancel: z.boolean(),
  err: z.string(),
  location: z.string().optional(),
});
export type OperationObject = z.infer<typeof operationSchema>;

export const syncEnvelopeSchema = z.looseObject({
  type: z.literal('sync'),
  status: z.string(),
  status_code: statusCodeSchema,
  metadata: z.unknown(),
});

export const asyncEnvelopeSchema = z.looseObject({
  type: z.literal('async'),
  status: z.string(),
  status_code: statusCodeSchema,
  operation: z.string(),
  metadata: operationSchema,
});

export const errorEnvelopeSchema = z.looseObject({
  type: z.literal('error'),
  error: z.string(),
  /** 400–599 (seed §7). The daemon also sends `status: ""` and `status_code: 0` here; they are ignored. */
  error_code: z.number().int().min(400).max(599),
  metadata: z.unknown().optional(),
});

export const envelopeSchema = z.discriminatedUnion('type', [syncEnvelopeSchema, asyncEnvelopeSchema, errorEnvelopeSchema]);
export type SyncEnvelope = z.infer<typeof syncEnvelopeSchema>;
export type AsyncEnvelope = z.infer<typeof asyncEnvelopeSchema>;

/**
 * URLs of the instances an operation touches, whichever key the daemon used: `instances` (later
 * revision), `containers` (earlier revision; LXD 5.0 sends both for some operations), deduplicated.
 */
export function operationInstanceUrls(op: OperationObject): string[] {
  const r = op.resources ?? {};
  return [...new Set([...(r.instances ?? []), ...(r.containers ?? [])])];
}

const fdsSchema = z.looseObject({ fds: z.record(z.string(), z.string()) });

/** The WebSocket secrets (`fds`: "0", "control", …) of a websocket-class operation; undefined otherwise. */
export function operationSecrets(op: OperationObject): Record<string, string> | undefined {
  if (op.class !== 'websocket') return undefined;
  const parsed = fdsSchema.safeParse(op.metadata);
  return parsed.success ? parsed.data.fds : undefined;
}

/**
 * Validates the `metadata` of a sync answer against what the endpoint is documented to return.
 * A mismatch is the server's fault, not the caller's: it is reported as API_BAD_RESPONSE naming
 * the request and the first field that does not fit, never as a bare validation error.
 */
export function parseMetadata<S extends z.ZodType>(schema: S, metadata: unknown, method: string, path: string, status?: number): z.infer<S> {
  const res = schema.safeParse(metadata);
  if (res.success) return res.data;
  throw misfit(res.error.issues[0], [], method, path, status);
}

/** API_BAD_RESPONSE naming the request and the first field that does not fit (under `at`, the index of a list's element). */
function misfit(issue: z.core.$ZodIssue | undefined, at: PropertyKey[], method: string, path: string, status?: number): ApiError {
  const fieldPath = [...at, ...(issue?.path ?? [])];
  const where = fieldPath.length > 0 ? `metadata.${fieldPath.map(String).join('.')}` : 'metadata';
  return new ApiError('API_BAD_RESPONSE', `${method} ${path}: the answer's ${where} does not fit: ${issue?.message ?? 'invalid'}`, {
    method,
    path,
    status,
  });
}

/** Elements of a list validated between two turns of the event loop. */
const LIST_SLICE = 500;

/**
 * {@link parseMetadata} of a list (`z.array(schema)`), element by element with a turn of the event
 * loop every {@link LIST_SLICE} elements: validating the listing of 10 000 instances at once held
 * the process for 70–290 ms. The same value and the same error as `parseMetadata(z.array(schema))`.
 */
export async function parseMetadataList<S extends z.ZodType>(
  schema: S,
  metadata: unknown,
  method: string,
  path: string,
  status?: number,
): Promise<z.infer<S>[]> {
  if (!Array.isArray(metadata) || metadata.length <= LIST_SLICE) return parseMetadata(z.array(schema), metadata, method, path, status);
  const out: z.infer<S>[] = [];
  for (let i = 0; i < metadata.length; i++) {
    if (i > 0 && i % LIST_SLICE === 0) await yieldToLoop();
    const res = schema.safeParse(metadata[i]);
    if (!res.success) throw misfit(res.error.issues[0], [i], method, path, status);
    out.push(res.data as z.infer<S>);
  }
  return out;
}
