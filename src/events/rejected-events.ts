import { createHash } from 'node:crypto';
import type { AuditLog } from '../audit/audit-log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RedisConnection } from '../redis/connect.js';
import { LuaScript } from '../redis/script.js';
import { readRefusedNote } from './refused-frame.js';
import { cutText, DEFAULT_MAX_EVENT_BYTES, frameBytesOf } from './frame-size.js';

/** One input that could not be made an event: where it came from, why, and its exact text. */
export interface RejectedInput {
  target: string;
  reason: string;
  /**
   * The input as received (a frame, a webhook body), kept for inspection, cut to `maxRawBytes`; or
   * the note of a frame refused on the way in (frame-intake.ts), whose reason, true size, sample
   * and hash are kept instead.
   */
  raw: string;
  /** Content hash: identical inputs are one entry (counted) and one audit record. */
  hash: string;
  receivedAt: number;
}

/** Bounds of the rejected stream applied on each append (the byte bound is enforced on a timer: redis/stream-retention.ts). */
export interface RejectedLimits {
  /** Bytes of an input kept; the rest is cut. Default 65 536. */
  maxRawBytes?: number;
  /** Entries kept at most (approximate: whole stream nodes). Default 10 000. */
  maxLength?: number;
  /** Entries older than this are trimmed (approximate); a repeat within it is counted on its entry. Default 7 days. */
  maxAgeMs?: number;
  /** Counts each rejected input (`reflex_rejected_inputs_total`, by repeat); none: not counted. */
  metrics?: Pick<Metrics, 'rejectedInputs'>;
}

// KEYS[1] the stream, KEYS[2] the input's seen-key ("<entry id> <repeats> <first seen ms>");
// ARGV[1] its TTL ms, ARGV[2] max length, ARGV[3] min id, ARGV[4] received at (ms), ARGV[5..] fields.
// A repeat replaces its entry by one carrying the count: each distinct input is one entry, the newest.
const keepScript = new LuaScript(`
local repeats, first = 1, ARGV[4]
local prev = redis.call('GET', KEYS[2])
if prev then
  local id, n, f = string.match(prev, '^(%S+) (%d+) (%d+)$')
  if id then
    redis.call('XDEL', KEYS[1], id)
    repeats, first = tonumber(n) + 1, f
  end
end
local fields = {}
for i = 5, #ARGV do fields[#fields + 1] = ARGV[i] end
fields[#fields + 1] = 'repeats'
fields[#fields + 1] = tostring(repeats)
fields[#fields + 1] = 'firstSeen'
fields[#fields + 1] = first
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', unpack(fields))
redis.call('SET', KEYS[2], id .. ' ' .. repeats .. ' ' .. first, 'PX', ARGV[1])
redis.call('XTRIM', KEYS[1], 'MINID', '~', ARGV[3])
return repeats`);

/**
 * Keeps a malformed input (a daemon frame, an inbound webhook body) in the rejected stream
 * (`KeySpace.rejected`, bounded by count and age here, each entry cut to `maxRawBytes`, and by
 * bytes on a timer) with the reason and its true size in bytes, and audits it once: the one place
 * rejected inputs go, whichever way they came in. The same bytes again are one entry whose
 * `repeats` counts them (its `firstSeen` stays), never dropped silently. Answers whether this
 * input was new (first audited now).
 */
export async function keepRejected(
  redis: RedisConnection,
  key: string,
  audit: AuditLog,
  input: RejectedInput,
  limits: RejectedLimits = {},
): Promise<boolean> {
  const maxAgeMs = limits.maxAgeMs ?? 7 * 24 * 3600_000;
  const refused = readRefusedNote(input.raw);
  const hash = refused ? createHash('sha256').update(`${input.target}|${refused.hash}`).digest('hex').slice(0, 32) : input.hash;
  const reason = refused?.reason ?? input.reason;
  const bytes = refused?.bytes ?? frameBytesOf(input.raw) ?? Buffer.byteLength(input.raw);
  const fields = [
    'target',
    input.target,
    'reason',
    reason,
    'bytes',
    String(bytes),
    'hash',
    hash,
    'raw',
    refused ? refused.sample : cutText(input.raw, limits.maxRawBytes ?? DEFAULT_MAX_EVENT_BYTES),
    ...(refused?.encoding === 'base64' ? ['encoding', 'base64'] : []),
  ];
  const repeats = Number(
    await keepScript.run(
      redis,
      [key, `${key}:seen:${hash}`],
      [String(maxAgeMs), String(limits.maxLength ?? 10_000), `${Math.max(0, Date.now() - maxAgeMs)}-0`, String(input.receivedAt), ...fields],
    ),
  );
  limits.metrics?.rejectedInputs.inc({ repeat: repeats > 1 ? 'true' : 'false' });
  return (
    (await audit.append(
      {
        type: 'rejected',
        correlationId: `rejected:${hash}`,
        target: input.target,
        summary: `malformed event rejected: ${reason} (${bytes} bytes)`,
        receivedAt: input.receivedAt,
      },
      { once: `rejected:${hash}` },
    )) !== ''
  );
}
