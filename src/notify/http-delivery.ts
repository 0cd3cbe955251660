import { request } from 'undici';
import { ReflexError } from '../errors/reflex-error.js';
import { DeliveryError } from './delivery-error.js';
import type { OutgoingRequest } from './outgoing-request.js';
import type { Secret } from './secret.js';

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

/** What one HTTP exchange answered: the status, the headers and the start of the body. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body's first `maxBodyBytes` bytes, as UTF-8. */
  body: string;
  /** Whether the body was longer than that. */
  truncated: boolean;
  durationMs: number;
}

/**
 * The one way Reflex sends an HTTP request out (receivers, the `http` action), with undici: one
 * timeout over the whole exchange, no redirect followed (a 3xx is an answer like any other), and
 * the body read up to `maxBodyBytes` (the rest is dropped with the connection). Resolves with any
 * status; throws ReflexError TIMEOUT when no answer came within `timeoutMs`, NETWORK when the
 * connection failed. Messages hold `url` as given: callers pass a scrubbed one for messages.
 */
export async function exchange(
  url: string,
  req: { method: string; headers: Record<string, string>; body?: string; timeoutMs: number; maxBodyBytes: number; shownUrl?: string },
): Promise<HttpAnswer> {
  const started = performance.now();
  const shown = req.shownUrl ?? url;
  const failed = (err: unknown) => {
    const code = (err as { code?: string; name?: string }).code ?? (err as Error).name;
    const timedOut = /TIMEOUT/i.test(code ?? '') || (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError';
    return timedOut
      ? new ReflexError('TIMEOUT', `${req.method} ${shown}: no answer within ${req.timeoutMs} ms`, { cause: err })
      : new ReflexError('NETWORK', `${req.method} ${shown}: connection failed (${code}): ${(err as Error).message}`, { cause: err });
  };
  try {
    const res = await request(url, {
      method: req.method as 'POST',
      headers: req.headers,
      ...(req.body !== undefined ? { body: req.body } : {}),
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
      signal: AbortSignal.timeout(req.timeoutMs),
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        size += chunk.length;
        if (size > req.maxBodyBytes) {
          truncated = true;
          res.body.destroy();
          break;
        }
      }
    } catch {
      // The status is the answer; a body cut off midway is quoted as far as it came.
      truncated = true;
    }
    const body = Buffer.concat(chunks).subarray(0, req.maxBodyBytes).toString('utf8');
    return { status: res.statusCode, headers: res.headers, body, truncated, durationMs: Math.round(performance.now() - started) };
  } catch (err) {
    throw failed(err);
  }
}

/** What {@link postMessage} needs of a receiver; declared here so this module stays below `receiver.ts`. */
interface HttpTarget {
  readonly name: string;
  /** Where to post unless the request names its own URL. */
  readonly url: Secret;
  /** Removes the receiver's secrets from a text (error messages). */
  scrub(text: string): string;
  readonly config: { timeoutMs: number };
}

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
    // The body is read (and capped) so the connection is reusable and errors can be quoted.
    res = await exchange(req.url ?? receiver.url.reveal(), {
      method: 'POST',
      headers: { 'user-agent': 'reflex-notify/1', ...req.headers },
      body: req.body,
      timeoutMs,
      maxBodyBytes: 64 * 1024,
    });
  } catch (err) {
    const timedOut = (err as ReflexError).code === 'TIMEOUT';
    const cause = (err as Error).cause as { code?: string; name?: string; message?: string } | undefined;
    const msg = receiver.scrub(
      `${receiver.name}: ${timedOut ? `no answer within ${timeoutMs} ms` : `connection failed (${cause?.code ?? cause?.name}): ${cause?.message}`}`,
    );
    throw new DeliveryError(timedOut ? 'TIMEOUT' : 'NETWORK', msg);
  }
  const text = res.body.slice(0, 300);
  const status = res.status;
  if (status >= 200 && status < 300) return status;
  const detail = receiver.scrub(`${receiver.name} answered ${status}${text ? `: ${text}` : ''}`);
  if (status === 429) throw new DeliveryError('NOTIFY_RATE_LIMITED', detail, { status, retryAfterMs: retryAfterMs(res.headers['retry-after']) });
  if (deferredStatuses.has(status))
    throw new DeliveryError('NOTIFY_DEFERRED', detail, { status, retryAfterMs: retryAfterMs(res.headers['retry-after']) });
  if (status >= 500) throw new DeliveryError('NOTIFY_SERVER_ERROR', detail, { status });
  throw new DeliveryError('NOTIFY_REJECTED', detail, { status });
}
