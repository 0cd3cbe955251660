import type { Clock } from '../../src/clock/clock.js';

/**
 * A {@link Clock} that stands still until the test moves it, so an interval decision (a repeat
 * interval, a tick's lateness, a budget window) is crossed at once and to the millisecond. Only
 * `now()` is read through a Clock (the waits are BullMQ delays and Redis expiries, on real time),
 * so a number that moves is the whole fake: vi.useFakeTimers and @sinonjs/fake-timers replace the
 * process's timers and Date, which BullMQ and ioredis in the same process need real.
 */
export class VirtualClock implements Clock {
  constructor(private at = Date.now()) {}

  now(): number {
    return this.at;
  }

  /** Moves the clock on by `ms`. */
  advance(ms: number): void {
    this.at += ms;
  }
}
