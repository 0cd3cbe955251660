import type { AuditLog } from '../audit/audit-log.js';
import type { RedisConnection } from '../redis/connect.js';

/** One input that could not be made an event: where it came from, why, and its exact text. */
export interface RejectedInput {
  target: string;
  reason: string;
  /** The input as received (a frame, a webhook body), kept for inspection. */
  raw: string;
  /** Content hash: the audit record is written once per distinct input. */
  hash: string;
  receivedAt: number;
}

/**
 * Keeps a malformed input (a daemon frame, an inbound webhook body) in the rejected stream
 * (`KeySpace.rejected`, capped at ~100 000 entries) with the reason, and audits it once: the one
 * place rejected inputs go, whichever way they came in.
 */
export async function keepRejected(redis: RedisConnection, key: string, audit: AuditLog, input: RejectedInput): Promise<void> {
  await redis.xadd(key, 'MAXLEN', '~', '100000', '*', 'target', input.target, 'reason', input.reason, 'raw', input.raw);
  await audit.append({ type: 'rejected', correlationId: `rejected:${input.hash}`, target: input.target, summary: `malformed event rejected: ${input.reason}`, receivedAt: input.receivedAt }, { once: `rejected:${input.hash}` });
}
