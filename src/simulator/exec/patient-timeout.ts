/** How often a {@link patientTimeout} looks at the clock. */
const tickMs = 50;

/**
 * A timeout for "the client sent nothing for `ms`" that a stalled process does not cut short. It
 * counts time in ticks of 50 ms. A tick that fires late (the process was starved of CPU or its event
 * loop blocked, so bytes the client sent meanwhile may be waiting unread) counts for one tick, and
 * never fires: the loop reads what arrived before the next tick. So a client gets `ms` of the
 * simulator's attention whatever the machine's load. A plain `setTimeout` fires before the I/O
 * that arrived during a stall is read (timers come first in the loop), and CI saw a command run
 * without the stdin its client had sent.
 */
export function patientTimeout(ms: number, fire: () => void): { cancel(): void } {
  let counted = 0;
  let last = performance.now();
  let timer: NodeJS.Timeout;
  const tick = (): void => {
    const now = performance.now();
    const late = now - last > 2 * tickMs;
    counted += late ? tickMs : now - last;
    last = now;
    if (!late && counted >= ms) return fire();
    timer = setTimeout(tick, Math.max(1, Math.min(tickMs, ms - counted))).unref();
  };
  timer = setTimeout(tick, Math.min(tickMs, ms)).unref();
  return { cancel: () => clearTimeout(timer) };
}
