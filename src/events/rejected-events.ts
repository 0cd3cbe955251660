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

/** Bounds of the rejected stream applied on each append (the byte bound is enforced on a timer: redis/stream-retention.ts). */
export interface RejectedLimits {
  /** Bytes of an input kept; the rest is cut. Default 65 536. */
  maxRawBytes?: number;
  /** Entries kept at most (approximate: whole stream nodes). Default 10 000. */
  maxLength?: number;
  /** Entries older than this are trimmed (approximate). Default 7 days. */
  maxAgeMs?: number;
}

/**
 * Keeps a malformed input (a daemon frame, an inbound webhook body) in the rejected stream
 * (`KeySpace.rejected`, bounded by count and age here, each entry cut to `maxRawBytes`, and by
 * bytes on a timer) with the reason, and audits it once: the one place rejected inputs go,
 * whichever way they came in. Answers whether this input was new (first audited now).
 */
export async function keepRejected(
  redis: RedisConnection,
  key: string,
  audit: AuditLog,
  input: RejectedInput,
  limits: RejectedLimits = {},
): Promise<boolean> {
  const maxLength = limits.maxLength ?? 10_000;
  const minId = `${Math.max(0, Date.now() - (limits.maxAgeMs ?? 7 * 24 * 3600_000))}-0`;
  await redis
    .multi()
    .xadd(
      key,
      'MAXLEN',
      '~',
      String(maxLength),
      '*',
      'target',
      input.target,
      'reason',
      input.reason,
      'raw',
      cutText(input.raw, limits.maxRawBytes ?? DEFAULT_MAX_EVENT_BYTES),
    )
    .xtrim(key, 'MINID', '~', minId)
    .exec();
  return (
    (await audit.append(
      {
        type: 'rejected',
        correlationId: `rejected:${input.hash}`,
        target: input.target,
        summary: `malformed event rejected: ${input.reason}`,
        receivedAt: input.receivedAt,
      },
      { once: `rejected:${input.hash}` },
    )) !== ''
  );
}
