import { ReflexError } from '../errors/reflex-error.js';

/**
 * The status codes of the instance API (seed §3.1). The number is authoritative and fixed
 * forever; the text is for display and differs between the two revisions of the API.
 */
export type ApiRevision = 'earlier' | 'later';

export const StatusCode = {
  OperationCreated: 100,
  Started: 101,
  Stopped: 102,
  Running: 103,
  Cancelling: 104,
  Pending: 105,
  Starting: 106,
  Stopping: 107,
  Aborting: 108,
  Freezing: 109,
  Frozen: 110,
  Thawed: 111,
  Error: 112,
  Ready: 113,
  Success: 200,
  Failure: 400,
  Cancelled: 401,
} as const;

export type StatusCode = (typeof StatusCode)[keyof typeof StatusCode];

const texts: Record<StatusCode, { earlier: string; later: string } | string> = {
  100: 'Operation created',
  101: 'Started',
  102: 'Stopped',
  103: 'Running',
  104: { earlier: 'Cancelling', later: 'Canceling' },
  105: 'Pending',
  106: 'Starting',
  107: 'Stopping',
  108: 'Aborting',
  109: 'Freezing',
  110: 'Frozen',
  111: 'Thawed',
  112: 'Error',
  113: 'Ready',
  200: 'Success',
  400: 'Failure',
  401: { earlier: 'Cancelled', later: 'Canceled' },
};

/** True for a code the given revision defines (113 Ready exists only in the later one; 600–999 are reserved). */
export function isKnownStatusCode(code: number, revision: ApiRevision = 'later'): code is StatusCode {
  if (code === StatusCode.Ready) return revision === 'later';
  return Object.prototype.hasOwnProperty.call(texts, code);
}

/** Display text of a code in a revision's spelling. */
export function statusText(code: StatusCode, revision: ApiRevision = 'later'): string {
  const t = texts[code];
  return typeof t === 'string' ? t : t[revision];
}

/** Code for a status text in either revision's spelling, case-insensitive; undefined when unknown. */
export function statusCodeOf(text: string): StatusCode | undefined {
  const wanted = text.toLowerCase();
  for (const [code, t] of Object.entries(texts)) {
    const spellings = typeof t === 'string' ? [t] : [t.earlier, t.later];
    if (spellings.some((s) => s.toLowerCase() === wanted)) return Number(code) as StatusCode;
  }
  return undefined;
}

/**
 * Operation codes after which nothing changes any more. A failed operation reports 400 Failure
 * or 112 Error (seed §7 rule 4), a cancelled one 401.
 */
export function isFinalOperationCode(code: number): boolean {
  return code === StatusCode.Success || code === StatusCode.Failure || code === StatusCode.Cancelled || code === StatusCode.Error;
}

/** What a code's range means (seed §3.1); 600–999 are reserved and never valid on the wire. */
export type StatusRange = 'resource-state' | 'positive-result' | 'negative-result';

/** The range of a three-digit code, or undefined for anything outside 100–599. */
export function statusRange(code: number): StatusRange | undefined {
  if (!Number.isInteger(code)) return undefined;
  if (code >= 100 && code <= 199) return 'resource-state';
  if (code >= 200 && code <= 399) return 'positive-result';
  if (code >= 400 && code <= 599) return 'negative-result';
  return undefined;
}

/**
 * Validates a status code read from the wire against the table of the given revision. The text
 * that came with it is not consulted: the code is authoritative. Throws STATUS_CODE_INVALID for
 * reserved (600–999) or unknown codes, and for 113 on the earlier revision.
 */
export function parseStatusCode(code: number, revision: ApiRevision = 'later'): StatusCode {
  if (isKnownStatusCode(code, revision)) return code;
  const why =
    statusRange(code) === undefined
      ? code >= 600 && code <= 999
        ? 'reserved for future use (600–999)'
        : 'not a three-digit status code'
      : `not defined by the ${revision} revision`;
  throw new ReflexError('STATUS_CODE_INVALID', `status code ${code} is ${why}`);
}

/** Both spellings of every code, for tables and docs. */
export function statusTable(): { code: StatusCode; earlier: string | undefined; later: string }[] {
  return (Object.keys(texts).map(Number) as StatusCode[]).map((code) => ({
    code,
    earlier: isKnownStatusCode(code, 'earlier') ? statusText(code, 'earlier') : undefined,
    later: statusText(code, 'later'),
  }));
}
