/** How timestamps end: 'Z' like Go on a UTC host, or a numeric offset ('+00:00') as the seed asks. */
export type UtcSuffix = 'Z' | 'numeric';

const wallBaseNs = BigInt(Date.now()) * 1_000_000n;
const hrBaseNs = process.hrtime.bigint();
let lastNs = 0n;

/** Wall-clock nanoseconds since the epoch (wall clock at load + monotonic clock since), strictly increasing. */
export function nowNs(): bigint {
  let ns = wallBaseNs + (process.hrtime.bigint() - hrBaseNs);
  if (ns <= lastNs) ns = lastNs + 1n;
  lastNs = ns;
  return ns;
}

/**
 * RFC 3339 with nanoseconds in Go's `RFC3339Nano` shape: trailing zeros of the fraction are
 * dropped (`…15.43025996Z`), as in the real daemon's frames.
 */
export function formatTimestamp(ns: bigint, suffix: UtcSuffix = 'numeric'): string {
  const ms = Number(ns / 1_000_000n);
  const base = new Date(ms).toISOString().slice(0, 19);
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${base}${frac ? `.${frac}` : ''}${suffix === 'Z' ? 'Z' : '+00:00'}`;
}

/** The current time formatted by formatTimestamp. */
export function timestampNow(suffix: UtcSuffix = 'numeric'): string {
  return formatTimestamp(nowNs(), suffix);
}

/** The zero time Go prints for unset timestamps (snapshot expiry, image expiry). */
export const zeroTime = '0001-01-01T00:00:00Z';
