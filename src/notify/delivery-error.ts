/**
 * Codes of delivery failures. They belong in src/errors/codes.ts; they live here until that
 * table gains them, with the same shape (retryable by default, meaning).
 */
export const deliveryErrorCodes = {
  NOTIFY_SERVER_ERROR: { retryable: true, doc: 'A notification receiver answered 5xx.' },
  NOTIFY_RATE_LIMITED: { retryable: true, doc: 'A notification receiver answered 429; the retry waits for its Retry-After.' },
  NOTIFY_REJECTED: { retryable: false, doc: 'A notification receiver answered 4xx (bad URL, bad payload, revoked token); retrying cannot help.' },
  NETWORK: { retryable: true, doc: 'The connection to the receiver failed or was cut.' },
  TIMEOUT: { retryable: true, doc: 'The receiver did not answer within timeoutMs.' },
} as const;
export type DeliveryErrorCode = keyof typeof deliveryErrorCodes;

/**
 * A failed delivery attempt. Its message never holds the endpoint (receivers scrub their secrets),
 * and it crosses the BullMQ boundary classified by `code`.
 */
export class DeliveryError extends Error {
  readonly retryable: boolean;

  constructor(
    readonly code: DeliveryErrorCode,
    message: string,
    readonly opts: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'DeliveryError';
    this.retryable = deliveryErrorCodes[code].retryable;
  }

  get status(): number | undefined {
    return this.opts.status;
  }

  get retryAfterMs(): number | undefined {
    return this.opts.retryAfterMs;
  }
}
