import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from 'pino';

/** Options of {@link startHeapTrim}. */
export interface HeapTrimOptions {
  logger: Logger;
  /** How often to look. Default 10 s. */
  intervalMs?: number;
  /** Committed but unused heap above which a trim runs. Default 24 MB. */
  slackBytes?: number;
}

/**
 * Gives back the heap a burst left committed. A burst (the first sync of 10 000 instances, an
 * event storm) grows V8's young generation to its maximum (32 MB) and the old generation with
 * it, and V8 keeps them committed long after the garbage is gone: a worker tracking 10k
 * instances idled at ~165 MB RSS with 35 MB of live heap. When more than `slackBytes` of the
 * heap is committed but unused, or the committed heap has grown by more than `slackBytes` since
 * the last full collection (or the start), one full collection (tens of ms on a heap this size)
 * shrinks it back; at most one per interval. Returns a stop function.
 */
export function startHeapTrim(opts: HeapTrimOptions): () => void {
  const collect = fullGc();
  if (!collect) return () => undefined;
  const slack = opts.slackBytes ?? 24 << 20;
  // The heap "used" counts the garbage no collection has reclaimed yet, and an idle process runs
  // none: after its first sync of 10k instances a worker held 196 MB of heap, 171 MB of it counted
  // as used and 33 MB live after a full collection (25 MB unused: 1 MB less and no trim). Growth
  // since the last full collection is seen either way.
  let collected = process.memoryUsage().heapTotal;
  const timer = setInterval(() => {
    const before = process.memoryUsage();
    if (before.heapTotal - before.heapUsed < slack && before.heapTotal - collected < slack) return;
    const started = performance.now();
    collect();
    const after = process.memoryUsage();
    collected = after.heapTotal;
    opts.logger.debug(
      {
        heapTotalMb: [mb(before.heapTotal), mb(after.heapTotal)],
        rssMb: [mb(before.rss), mb(after.rss)],
        ms: Math.round(performance.now() - started),
      },
      'heap trimmed',
    );
  }, opts.intervalMs ?? 10_000);
  timer.unref();
  return () => clearInterval(timer);
}

function mb(bytes: number): number {
  return Math.round(bytes / 1048576);
}

/** V8's full collection: `gc` when Node was started with --expose-gc, else exposed now, in a fresh context. */
function fullGc(): (() => void) | undefined {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}
