import { errorCodes } from '../errors/codes.js';

/** The codes a delivery can fail with (declared in src/errors/codes.ts with every other code). */
export const deliveryErrorCodes = {
  NOTIFY_SERVER_ERROR: errorCodes.NOTIFY_SERVER_ERROR,
  NOTIFY_RATE_LIMITED: errorCodes.NOTIFY_RATE_LIMITED,
  NOTIFY_REJECTED: errorCodes.NOTIFY_REJECTED,
  NOTIFY_DEFERRED: errorCodes.NOTIFY_DEFERRED,
  NETWORK: errorCodes.NETWORK,
  TIMEOUT: errorCodes.TIMEOUT,
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
