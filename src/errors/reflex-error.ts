import { errorCodes, type ErrorCode } from './codes.js';

/**
 * Base of every error Reflex raises on purpose. It carries a stable `code` (declared in codes.ts),
 * whether a retry can help, and the cause. Errors that cross process boundaries (BullMQ jobs) are
 * classified by `code`, never by `instanceof`.
 */
export class ReflexError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, opts: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ReflexError';
    this.code = code;
    this.retryable = opts.retryable ?? errorCodes[code].retryable;
  }
}

/** Whether an error of any origin is worth retrying (unknown errors are not). */
export function isRetryable(err: unknown): boolean {
  if (err instanceof ReflexError) return err.retryable;
  if (err && typeof err === 'object' && 'retryable' in err) return Boolean((err as { retryable: unknown }).retryable);
  return false;
}
