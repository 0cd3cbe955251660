import type { AuditLog } from '../audit/audit-log.js';
import type { RedisConnection } from '../redis/connect.js';
import { cutText, DEFAULT_MAX_EVENT_BYTES } from './frame-size.js';

/** One input that could not be made an event: where it came from, why, and its exact text. */
export interface RejectedInput {
  target: string;
  reason: string;
  /** The input as received (a frame, a webhook body), kept for inspection, cut to `maxRawBytes`. */
  raw: string;
  /** Content hash: the audit record is written once per distinct input. */
  hash: string;
  receivedAt: number;
}

/**
 * Keeps a malformed input (a daemon frame, an inbound webhook body) in the rejected stream
 * (`KeySpace.rejected`, capped at ~100 000 entries, each cut to `maxRawBytes`, default 64 KiB,
 * so the stream is bounded in bytes too) with the reason, and audits it once: the one place
 * rejected inputs go, whichever way they came in. Answers whether this input was new (first audited now).
 */
export async function keepRejected(redis: RedisConnection, key: string, audit: AuditLog, input: RejectedInput, maxRawBytes = DEFAULT_MAX_EVENT_BYTES): Promise<boolean> {
  await redis.xadd(key, 'MAXLEN', '~', '100000', '*', 'target', input.target, 'reason', input.reason, 'raw', cutText(input.raw, maxRawBytes));
  return (await audit.append({ type: 'rejected', correlationId: `rejected:${input.hash}`, target: input.target, summary: `malformed event rejected: ${input.reason}`, receivedAt: input.receivedAt }, { once: `rejected:${input.hash}` })) !== '';
}
