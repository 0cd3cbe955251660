import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { startHeapTrim } from '../../src/app/heap-trim.js';
import { until } from '../support/wait.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) });
  return { lines, logger };
}

describe('the heap trim', () => {
  it('gives back heap a burst left committed: one full collection shrinks the committed heap', async () => {
    const { lines, logger } = capture();
    const shrank = () => lines.some((l) => l.msg === 'heap trimmed' && (l.heapTotalMb as number[])[1]! < (l.heapTotalMb as number[])[0]!);
    const stop = startHeapTrim({ logger, intervalMs: 50, slackBytes: 1 });
    try {
      // A burst: tens of MB allocated and dropped, as the first sync of a large fleet does. V8 may
      // collect it on its own before the trim looks (then that trim has nothing to give back):
      // another burst then, up to five.
      for (let round = 0; round < 5 && !shrank(); round++) {
        let burst: { i: number; s: string }[] | undefined = Array.from({ length: 300_000 }, (_, i) => ({ i, s: `instance-${i}`.padEnd(64, '.') }));
        expect(burst.length).toBe(300_000);
        burst = undefined;
        const seen = lines.length;
        await expect.poll(() => lines.length > seen, { timeout: 5_000, interval: 20 }).toBe(true);
      }
    } finally {
      stop();
    }
    expect(shrank(), JSON.stringify(lines)).toBe(true);
  });

  it('collects a heap grown by more than the slack since the last collection, though it counts all of it as used, once', async () => {
    const { lines, logger } = capture();
    const looks = vi.spyOn(process, 'memoryUsage');
    // 64 MB of slack: more than the young generation (at most 32 MB) can leave unused.
    const stop = startHeapTrim({ logger, intervalMs: 20, slackBytes: 64 << 20 });
    // About 150 MB held: the heap grows by it, all of it used.
    const held = Array.from({ length: 1_500_000 }, (_, i) => ({ i, s: `instance-${i}`.padEnd(64, '.') }));
    try {
      await until('a trim', () => lines.length >= 1, 10_000);
      const seen = looks.mock.calls.length;
      await until('ten more looks of the trim', () => looks.mock.calls.length >= seen + 10, 10_000);
    } finally {
      stop();
      looks.mockRestore();
    }
    expect(held.length).toBe(1_500_000);
    expect(lines.map((l) => l.msg)).toEqual(['heap trimmed']);
  });

  it('does nothing while the unused part of the heap is under the slack', async () => {
    const { lines, logger } = capture();
    // Each look of the trim reads process.memoryUsage(): counted (and passed through), ten looks in which a trim would log.
    const looks = vi.spyOn(process, 'memoryUsage');
    const stop = startHeapTrim({ logger, intervalMs: 20, slackBytes: 2 ** 40 });
    try {
      await until('ten looks of the trim', () => looks.mock.calls.length >= 10, 10_000);
    } finally {
      stop();
      looks.mockRestore();
    }
    expect(lines).toEqual([]);
  });
});
