import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header carrying the Unix time (seconds) the request was signed at. */
export const timestampHeader = 'X-Reflex-Timestamp';
/** Header carrying `sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>`. */
export const signatureHeader = 'X-Reflex-Signature';
/** How far a timestamp may be from the receiver's clock, either way, by default: 5 minutes. */
export const defaultReplayWindowSec = 300;

/** The signature header value for `body` signed at `timestamp` (Unix seconds). */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** Why a signature was refused, or ok. */
export type SignatureCheck = { ok: true } | { ok: false; reason: 'missing' | 'malformed' | 'stale' | 'mismatch' };

/**
 * Checks a signed Reflex webhook request, for receivers to use: recomputes the HMAC over
 * `timestamp + "." + rawBody` and compares in constant time, and refuses a timestamp more than
 * `replayWindowSec` (default 300) away from `now` so a captured request cannot be replayed later.
 * `rawBody` must be the exact bytes received, before any JSON parsing.
 */
export function verifyWebhookSignature(opts: {
  secret: string;
  rawBody: string | Buffer;
  timestamp: string | undefined | null;
  signature: string | undefined | null;
  replayWindowSec?: number;
  now?: Date;
}): SignatureCheck {
  const { timestamp, signature } = opts;
  if (!timestamp || !signature) return { ok: false, reason: 'missing' };
  if (!/^\d{1,12}$/.test(timestamp) || !/^sha256=[0-9a-f]{64}$/.test(signature)) return { ok: false, reason: 'malformed' };
  const nowSec = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSec - Number(timestamp)) > (opts.replayWindowSec ?? defaultReplayWindowSec)) return { ok: false, reason: 'stale' };
  const body = typeof opts.rawBody === 'string' ? opts.rawBody : opts.rawBody.toString('utf8');
  const expected = Buffer.from(signWebhook(opts.secret, Number(timestamp), body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given) ? { ok: true } : { ok: false, reason: 'mismatch' };
}
