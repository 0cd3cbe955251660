/** Default of how far an event's time may be ahead of Reflex's clock before it is not trusted: 5 minutes. */
export const DEFAULT_CLOCK_TOLERANCE_MS = 5 * 60_000;

/**
 * The time to use for an event the daemon dated `timestamp`, received at `receivedAt` (Reflex's
 * clock): the event's own time, or, when it is more than `toleranceMs` ahead of its receipt (a
 * clock stepped forward on the daemon's host, a forged frame), the receipt time. An event cannot
 * come from the future, and a time far ahead would make every later real transition look older.
 * Answers undefined when the timestamp is plausible (or unreadable: the frame schema decides that).
 */
export function clampedTimestamp(timestamp: string, receivedAt: number, toleranceMs = DEFAULT_CLOCK_TOLERANCE_MS): string | undefined {
  const at = Date.parse(timestamp);
  if (Number.isNaN(at) || at <= receivedAt + toleranceMs) return undefined;
  return new Date(receivedAt).toISOString();
}
