import { request } from 'undici';
import { DeliveryError } from './delivery-error.js';
import type { OutgoingRequest } from './outgoing-request.js';
import type { Receiver } from './receiver.js';

/** Longest Retry-After honoured; a receiver asking for more gets the normal backoff cap instead. */
const maxRetryAfterMs = 10 * 60_000;

/** Retry-After as seconds or an HTTP date, in ms from `now`; undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  const ms = /^\d+$/.test(v.trim()) ? Number(v.trim()) * 1000 : Date.parse(v) - now;
  return Number.isFinite(ms) ? Math.min(Math.max(0, ms), maxRetryAfterMs) : undefined;
}

/** 4xx answers that ask for a later try (Request Timeout, Conflict, Too Early); 429 has its own code. Every other 4xx is final. */
const deferredStatuses = new Set([408, 409, 425]);

/** What {@link postMessage} needs of a receiver. */
type HttpTarget = Pick<Receiver, 'name' | 'url' | 'scrub'> & { config: { timeoutMs: number } };

/**
 * Posts one rendered message. Resolves with the HTTP status on 2xx; throws {@link DeliveryError}:
 * retryable for 5xx, 429 and 408/409/425 (with their Retry-After), timeouts and network errors;
 * final for every other answer (400, 401, 403, 404, 410, 413, 422…), which sends the message to
 * the fallback receiver.
 */
export async function postMessage(receiver: HttpTarget, req: OutgoingRequest): Promise<number> {
  const timeoutMs = receiver.config.timeoutMs;
  let res;
  try {
    res = await request(req.url ?? receiver.url.reveal(), {
      method: 'POST',
      headers: { 'user-agent': 'reflex-notify/1', ...req.headers },
      body: req.body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const code = (err as { code?: string; name?: string }).code ?? (err as Error).name;
    const timedOut = /TIMEOUT/i.test(code ?? '') || (err as Error).name === 'TimeoutError';
    const msg = receiver.scrub(`${receiver.name}: ${timedOut ? `no answer within ${timeoutMs} ms` : `connection failed (${code}): ${(err as Error).message}`}`);
    throw new DeliveryError(timedOut ? 'TIMEOUT' : 'NETWORK', msg);
  }
  // The body is read (and capped) so the connection is reusable and errors can be quoted.
  const text = (await res.body.text().catch(() => '')).slice(0, 300);
  const status = res.statusCode;
  if (status >= 200 && status < 300) return status;
  const detail = receiver.scrub(`${receiver.name} answered ${status}${text ? `: ${text}` : ''}`);
  if (status === 429) throw new DeliveryError('NOTIFY_RATE_LIMITED', detail, { status, retryAfterMs: retryAfterMs(res.headers['retry-after']) });
  if (deferredStatuses.has(status)) throw new DeliveryError('NOTIFY_DEFERRED', detail, { status, retryAfterMs: retryAfterMs(res.headers['retry-after']) });
  if (status >= 500) throw new DeliveryError('NOTIFY_SERVER_ERROR', detail, { status });
  throw new DeliveryError('NOTIFY_REJECTED', detail, { status });
}
