import type { ErrorCode } from '../errors/codes.js';
import { ReflexError } from '../errors/reflex-error.js';

/**
 * An error answered by the instance API, or a failure to get an answer. Carries the HTTP status
 * and the envelope's error_code where there is one.
 */
export class ApiError extends ReflexError {
  readonly status: number | undefined;
  readonly errorCode: number | undefined;
  readonly method: string;
  readonly path: string;
  /** The server's own error text (the envelope's `error`), without the request prefixed to the message. */
  readonly serverError: string | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { status?: number; errorCode?: number; method: string; path: string; cause?: unknown; retryable?: boolean; serverError?: string },
  ) {
    super(code, message, opts);
    this.name = 'ApiError';
    this.status = opts.status;
    this.errorCode = opts.errorCode;
    this.method = opts.method;
    this.path = opts.path;
    this.serverError = opts.serverError;
  }
}

const busyPattern = /busy running|is busy|already running an? |operation in progress/i;

/**
 * Classifies an error envelope by HTTP status and message into a stable code. An error envelope
 * under HTTP 200 (newer daemons' operation wait) is classified by its error_code instead.
 */
export function apiErrorFromEnvelope(status: number, message: string, errorCode: number, method: string, path: string): ApiError {
  const effective = status >= 400 ? status : errorCode;
  let code: ErrorCode = 'API_ERROR';
  if (busyPattern.test(message)) code = 'API_BUSY';
  else if (effective === 404) code = 'API_NOT_FOUND';
  else if (effective === 403 || effective === 401) code = 'API_FORBIDDEN';
  else if (effective === 409) code = 'API_CONFLICT';
  else if (effective === 412) code = 'API_PRECONDITION_FAILED';
  else if (effective >= 500) code = 'API_SERVER_ERROR';
  return new ApiError(code, `${method} ${path}: ${status} ${message}`, { status, errorCode, method, path, serverError: message });
}

/** Whether an error is an ApiError with the given HTTP status. */
export function isApiStatus(err: unknown, status: number): err is ApiError {
  return err instanceof ApiError && err.status === status;
}

/** Whether an error is the daemon's 404 (unknown instance, operation, snapshot…). */
export function isNotFound(err: unknown): err is ApiError {
  return isApiStatus(err, 404);
}

/** Whether a PUT/PATCH was refused because its If-Match ETag is stale (412): re-read and retry. */
export function isPreconditionFailed(err: unknown): err is ApiError {
  return err instanceof ApiError && err.code === 'API_PRECONDITION_FAILED';
}

export { busyPattern };
