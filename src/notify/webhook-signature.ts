import { createHmac, timingSafeEqual } from 'node:crypto';
import { ReflexError } from '../errors/reflex-error.js';

/**
 * Standard Webhooks (https://www.standardwebhooks.com/), symmetric: the sender signs
 * `${webhook-id}.${webhook-timestamp}.${body}` with HMAC-SHA256 and sends `v1,<base64>` in the
 * `webhook-signature` header, one space-separated signature per key while a key is rotated.
 * Any Standard Webhooks library verifies Reflex's requests (e.g. the `standardwebhooks` npm package).
 */

/** Header names, lower-case as node:http gives them. */
export const webhookHeaders = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' } as const;

/** How far a timestamp may be from the receiver's clock, either way, by default: 5 minutes (as the standard's libraries). */
const defaultToleranceSec = 300;

const secretPrefix = 'whsec_';
/** The standard's bounds for a symmetric key: at least 24 bytes, at most 64. */
const minKeyBytes = 24;
const maxKeyBytes = 64;

/**
 * The key bytes of a `whsec_<base64>` secret, or why it is not one (the reason never quotes the
 * secret). Base64 is checked strictly, as the standard's libraries decode it.
 */
export function webhookKey(secret: string): { key: Buffer } | { problem: string } {
  if (!secret.startsWith(secretPrefix)) return { problem: `does not start with ${secretPrefix}` };
  const b64 = secret.slice(secretPrefix.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) return { problem: `is not base64 after ${secretPrefix}` };
  const key = Buffer.from(b64, 'base64');
  if (key.length < minKeyBytes || key.length > maxKeyBytes)
    return { problem: `holds a ${key.length}-byte key (the standard wants ${minKeyBytes} to ${maxKeyBytes} random bytes)` };
  return { key };
}

/** The `webhook-signature` value: one `v1,<base64 HMAC-SHA256>` per key, space-separated. */
export function signWebhook(keys: readonly Buffer[], id: string, timestamp: number, body: string | Buffer): string {
  return keys.map((key) => `v1,${hmac(key, id, timestamp, body).toString('base64')}`).join(' ');
}

function hmac(key: Buffer, id: string, timestamp: number, body: string | Buffer): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
}

/** The outcome of {@link verifyWebhookSignature}: the message id and timestamp when valid, else why not. */
export type SignatureCheck = { ok: true; id: string; timestamp: number } | { ok: false; reason: 'missing' | 'malformed' | 'stale' | 'mismatch' };

type HeaderSource = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const entry = Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(entry) ? entry[0] : (entry as string | undefined);
}

/**
 * Verifies a Standard Webhooks request, for receivers written in TypeScript (any Standard Webhooks
 * library does the same): recomputes the HMAC over `${webhook-id}.${webhook-timestamp}.${rawBody}`
 * with each of `secret` (one `whsec_…` secret, or several while rotating) and compares it in
 * constant time with each `v1` signature of the header; refuses a timestamp more than
 * `toleranceSec` (default 300) from `now`, so a captured request cannot be replayed later.
 * `rawBody` must be the exact bytes received, before any JSON parsing; `headers` is node:http's
 * `req.headers` or a fetch `Headers`. Use the returned `id` to drop a message seen before (a
 * retry). Throws CONFIG_INVALID when a secret is not `whsec_<base64>`.
 */
export function verifyWebhookSignature(opts: {
  secret: string | readonly string[];
  rawBody: string | Buffer;
  headers: HeaderSource;
  toleranceSec?: number;
  now?: Date;
}): SignatureCheck {
  const keys = (typeof opts.secret === 'string' ? [opts.secret] : opts.secret).map((s, i) => {
    const parsed = webhookKey(s);
    if ('problem' in parsed) throw new ReflexError('CONFIG_INVALID', `webhook secret ${i + 1} ${parsed.problem}`);
    return parsed.key;
  });
  const id = header(opts.headers, webhookHeaders.id);
  const timestamp = header(opts.headers, webhookHeaders.timestamp);
  const signatures = header(opts.headers, webhookHeaders.signature);
  if (!id || !timestamp || !signatures) return { ok: false, reason: 'missing' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'malformed' };
  const given = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  if (!given.length) return { ok: false, reason: 'malformed' };
  const ts = Number(timestamp);
  const nowSec = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSec - ts) > (opts.toleranceSec ?? defaultToleranceSec)) return { ok: false, reason: 'stale' };
  for (const key of keys) {
    const expected = hmac(key, id, ts, opts.rawBody);
    if (given.some((g) => g.length === expected.length && timingSafeEqual(g, expected))) return { ok: true, id, timestamp: ts };
  }
  return { ok: false, reason: 'mismatch' };
}
