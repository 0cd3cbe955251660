import { afterEach } from 'vitest';

/**
 * Stops, after each test, what the test started: `const stopped = stoppedAfterEach()` in a describe,
 * then `const bed = stopped(await startReflexBed(...))` in a test. Last started, first stopped.
 */
export function stoppedAfterEach(): <T extends { stop(): Promise<void> }>(started: T) => T {
  const started: { stop(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const s of started.splice(0).reverse()) await s.stop();
  });
  return (s) => (started.push(s), s);
}

/**
 * Clean-ups a test pushes (`cleanups.push(() => thing.stop())`), run after each test, last pushed
 * first; one that fails does not keep the others from running.
 */
export function cleanupsAfterEach(): (() => Promise<unknown>)[] {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });
  return cleanups;
}
