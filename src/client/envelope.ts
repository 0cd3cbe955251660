import { z } from 'zod';

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
  status_code: z.number().int(),
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
  status_code: z.number().int(),
  metadata: z.unknown(),
});

export const asyncEnvelopeSchema = z.looseObject({
  type: z.literal('async'),
  status: z.string(),
  status_code: z.number().int(),
  operation: z.string(),
  metadata: operationSchema,
});

export const errorEnvelopeSchema = z.looseObject({
  type: z.literal('error'),
  error: z.string(),
  error_code: z.number().int(),
  metadata: z.unknown().optional(),
});

export const envelopeSchema = z.discriminatedUnion('type', [syncEnvelopeSchema, asyncEnvelopeSchema, errorEnvelopeSchema]);
export type SyncEnvelope = z.infer<typeof syncEnvelopeSchema>;
export type AsyncEnvelope = z.infer<typeof asyncEnvelopeSchema>;
export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;
export type Envelope = z.infer<typeof envelopeSchema>;
