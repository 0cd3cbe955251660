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
  ABORTED: { retryable: false, doc: 'A call was aborted through the AbortSignal its caller passed.' },
  OPERATION_FAILED: { retryable: false, doc: 'A background operation ended in Failure (400) or Error (112); its err field says why.' },
  OPERATION_CANCELLED: { retryable: false, doc: 'A background operation was cancelled (401).' },
  OPERATION_VANISHED: { retryable: false, doc: 'An operation that was seen before is gone (404) before its outcome was read.' },
  OPERATION_NOT_CANCELLABLE: { retryable: false, doc: 'DELETE on an operation whose may_cancel is false.' },
  OPERATION_TIMEOUT: { retryable: true, doc: 'Waiting for a background operation gave up before it finished; the operation may still complete.' },
  STATUS_CODE_INVALID: { retryable: false, doc: 'A status code outside the table of the instance API (e.g. 600-999, which are reserved).' },
  TLS_PIN_MISMATCH: { retryable: false, doc: 'The HTTPS server presented a certificate whose SHA-256 differs from the pinned one; the message gives both.' },
  TLS_CLIENT_CERT_MISSING: { retryable: false, doc: 'The HTTPS server refused a request because no client certificate was configured.' },
  TLS_CLIENT_UNTRUSTED: { retryable: false, doc: 'The HTTPS server does not trust the client certificate presented (add it with `lxc config trust add`).' },
  REMOTE_UNKNOWN: { retryable: false, doc: 'No remote of that name in the lxc or incus client configuration.' },
  REMOTE_UNSUPPORTED: { retryable: false, doc: 'The remote is an image server or uses an auth type Reflex does not support (only tls and unix sockets).' },
  TARGET_INVALID: { retryable: false, doc: 'The target URL is not unix://… or https://…, or no local socket was found.' },
  CONFIG_INVALID: { retryable: false, doc: 'The configuration is invalid; the message names the field, the value and what was expected.' },
  EVENT_MALFORMED: { retryable: false, doc: 'An event frame is not valid JSON or does not match the event schema; it is archived as rejected.' },
  RULE_INVALID: { retryable: false, doc: 'A rule file failed to load or validate; it is skipped and reported with file and line.' },
  ACTION_UNKNOWN: { retryable: false, doc: 'A rule named an action that is not in the registry.' },
  DRY_RUN_REFUSED: { retryable: false, doc: 'A dry-run or replay tried a mutating request; it was recorded and not sent.' },
  NOTIFY_SERVER_ERROR: { retryable: true, doc: 'A notification receiver answered 5xx.' },
  NOTIFY_RATE_LIMITED: { retryable: true, doc: 'A notification receiver answered 429; the retry waits for its Retry-After.' },
  NOTIFY_REJECTED: { retryable: false, doc: 'A notification receiver answered 4xx (bad URL, bad payload, revoked token); retrying cannot help.' },
  LOCK_LOST: { retryable: true, doc: 'A lock (an instance lock, the subscriber lease, a tick lock) was taken by someone else or could not be confirmed within its TTL; the guarded call was not sent.' },
  RULE_TIMEOUT: { retryable: false, doc: 'A rule\'s `when` predicate did not answer within the rule timeout (default 5 s); the decision is recorded as "condition timed out".' },
  REDIS_UNAVAILABLE: { retryable: true, doc: 'Redis cannot be reached.' },
  AUDIT_CHAIN_BROKEN: { retryable: false, doc: '`reflex audit verify` found a record that was altered, deleted or inserted behind the audit log; the message names the first bad record and what differs.' },
} as const satisfies Record<string, { retryable: boolean; doc: string }>;

export type ErrorCode = keyof typeof errorCodes;
