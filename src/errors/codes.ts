/**
 * Every error code Reflex raises, declared once, with whether a retry can help by default and
 * what it means. docs/errors.md is checked against this table by a test.
 */
export const errorCodes = {
  API_ERROR: { retryable: false, doc: 'The instance API answered with an error envelope (see status and error_code).' },
  API_BUSY: { retryable: true, doc: 'The instance is busy with another operation; retrying shortly helps.' },
  API_SERVER_ERROR: { retryable: true, doc: 'The instance API answered 5xx.' },
  API_NOT_FOUND: { retryable: false, doc: 'The resource does not exist (HTTP 404).' },
  API_CONFLICT: { retryable: false, doc: 'The request conflicts with the current state (HTTP 409).' },
  API_PRECONDITION_FAILED: { retryable: true, doc: 'The ETag sent in If-Match is stale (HTTP 412); re-read and try again.' },
  API_FORBIDDEN: { retryable: false, doc: 'The client is not trusted or not allowed (HTTP 403).' },
  API_BAD_RESPONSE: { retryable: false, doc: 'The server sent a body that is not a valid envelope.' },
  NETWORK: { retryable: true, doc: 'The connection to the server failed or was cut.' },
  TIMEOUT: { retryable: true, doc: 'A call did not finish within its timeout.' },
  OPERATION_FAILED: { retryable: false, doc: 'A background operation ended in Failure (400) or Error (112); its err field says why.' },
  OPERATION_CANCELLED: { retryable: false, doc: 'A background operation was cancelled (401).' },
  OPERATION_VANISHED: { retryable: false, doc: 'An operation that was seen before is gone (404) before its outcome was read.' },
  OPERATION_NOT_CANCELLABLE: { retryable: false, doc: 'DELETE on an operation whose may_cancel is false.' },
  TARGET_INVALID: { retryable: false, doc: 'The target URL is not unix://… or https://…, or no local socket was found.' },
  CONFIG_INVALID: { retryable: false, doc: 'The configuration is invalid; the message names the field, the value and what was expected.' },
  EVENT_MALFORMED: { retryable: false, doc: 'An event frame is not valid JSON or does not match the event schema; it is archived as rejected.' },
  RULE_INVALID: { retryable: false, doc: 'A rule file failed to load or validate; it is skipped and reported with file and line.' },
  ACTION_UNKNOWN: { retryable: false, doc: 'A rule named an action that is not in the registry.' },
  REDIS_UNAVAILABLE: { retryable: true, doc: 'Redis cannot be reached.' },
} as const satisfies Record<string, { retryable: boolean; doc: string }>;

export type ErrorCode = keyof typeof errorCodes;
