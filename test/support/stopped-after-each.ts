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
