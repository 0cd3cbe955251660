import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { CanonicalEvent } from './canonical-event.js';
import type { EventItem } from './event-job.js';

/** Options of {@link EventIngestor}. */
export interface EventIngestorOptions {
  queue: Queue;
  target: string;
  logger: Logger;
  /** Frames held in memory while Redis is slow or down before the ingestor gives up on them and asks for a resync. Default 100 000. */
  maxBuffered?: number;
  /** Called when frames had to be dropped: the caller must resync to cover the gap. */
  onOverflow?: () => void;
  /**
   * Fencing: checked before each batch is written. When it answers false (this replica lost its
   * subscriber lease) the batch is dropped; the new holder's resync covers it.
   */
  mayWrite?: () => Promise<boolean>;
  /**
   * Frames are held this long after receipt and written in the order of their daemon timestamps,
   * which undoes LXD's per-event goroutine reordering (inversions of a few ms, notes §1). Inversions
   * wider than this are left to the state tracker (compare-and-set by timestamp, then a read).
   * Default 20 ms: the goroutine inversions seen on LXD 5.0.2 are a few ms apart, and every ms
   * here is added to the time to heal. 0 writes at once.
   */
  reorderWindowMs?: number;
  /** Most events per queue job. Default 500. */
  maxBatch?: number;
}

/**
 * Moves frames from the socket reader into the events queue: pushes are synchronous and cheap;
 * what accumulated while the previous write was in flight goes out as one job (one round trip per
 * batch, not per event), in daemon order.
 */
export class EventIngestor {
  private buffer: EventItem[] = [];
  /** Bumped when the buffer is thrown away (overflow, lost lease): positions taken before no longer hold. */
  private generation = 0;
  private flushing: Promise<void> | undefined;
  private readonly maxBuffered: number;
  private readonly reorderWindowMs: number;
  private readonly maxBatch: number;

  constructor(private readonly opts: EventIngestorOptions) {
    this.maxBuffered = opts.maxBuffered ?? 100_000;
    this.reorderWindowMs = opts.reorderWindowMs ?? 20;
    this.maxBatch = opts.maxBatch ?? 500;
  }

  /** Queues a raw frame; never blocks. */
  pushFrame(raw: string, receivedAt: number): void {
    this.push({ kind: 'frame', target: this.opts.target, raw, receivedAt });
  }

  /** Queues an event made up by a resync. */
  pushSynthetic(event: CanonicalEvent): void {
    this.push({ kind: 'synthetic', target: this.opts.target, event, receivedAt: Date.now() });
  }

  /** Resolves once everything pushed so far is in Redis. */
  async drain(): Promise<void> {
    while (this.flushing || this.buffer.length) await (this.flushing ?? this.flush());
  }

  /**
   * What goes out now: the frames whose reorder window has passed (a synthetic event never waits),
   * plus any frame that arrived after them but is older in daemon time than the newest of them —
   * it must be written first, not in a later job. Frames do not cross a synthetic event.
   * Answers the positions taken in the buffer, oldest arrival first.
   */
  private released(max: number): number[] {
    const cutoff = Date.now() - this.reorderWindowMs;
    let n = 0;
    while (n < this.buffer.length && n < max && (this.buffer[n]!.kind === 'synthetic' || this.buffer[n]!.receivedAt <= cutoff)) n++;
    n = Math.max(n, 1);
    const taken = Array.from({ length: n }, (_, i) => i);
    let newest = '';
    for (const i of taken) {
      const item = this.buffer[i]!;
      if (item.kind === 'synthetic') return taken;
      newest = maxKey(newest, timestampKey(item.raw));
    }
    // Inversions are a few ms wide: looking a batch's length further is plenty, and keeps a storm's flushes linear.
    for (let i = n; i < this.buffer.length && i < n + max && taken.length < max; i++) {
      const item = this.buffer[i]!;
      if (item.kind === 'synthetic') break;
      const key = timestampKey(item.raw);
      if (key !== undefined && key <= newest) taken.push(i);
    }
    return taken;
  }

  private push(job: EventItem): void {
    if (this.buffer.length >= this.maxBuffered) {
      this.opts.logger.error({ buffered: this.buffer.length }, 'event buffer full (Redis too slow or down); dropping and asking for a resync');
      this.buffer = [];
      this.generation++;
      this.opts.onOverflow?.();
    }
    this.buffer.push(job);
    if (!this.flushing) this.flushing = this.flush();
  }

  private async flush(): Promise<void> {
    try {
      while (this.buffer.length) {
        const wait = this.buffer[0]!.receivedAt + this.reorderWindowMs - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const generation = this.generation;
        const taken = this.released(this.maxBatch);
        const batch = inDaemonOrder(taken.map((i) => this.buffer[i]!));
        try {
          if (this.opts.mayWrite && !(await this.opts.mayWrite())) {
            this.opts.logger.warn({ dropped: this.buffer.length }, 'not the lease holder any more: dropping buffered events (the new holder resyncs)');
            this.buffer = [];
            this.generation++;
            break;
          }
          // The job id is a hash of the batch's content: a write retried after a lost reply is stored once.
          await this.opts.queue.add('batch', { kind: 'batch', target: this.opts.target, items: batch }, { jobId: batchId(batch) });
          // Frames pushed meanwhile were appended, so the positions taken still hold (unless the buffer was thrown away).
          if (generation === this.generation) {
            const gone = new Set(taken);
            this.buffer = this.buffer.filter((_, i) => !gone.has(i));
          }
        } catch (err) {
          this.opts.logger.warn({ err: (err as Error).message, buffered: this.buffer.length }, 'could not write events to Redis; holding them and retrying');
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }
}

/**
 * Sorts frames by their daemon timestamp (stable; a synthetic event stays where it is and frames
 * do not cross it). The timestamp is cut out of the text, not parsed as JSON: this runs for every
 * frame of a storm. A frame without a readable timestamp keeps its place relative to its neighbours.
 */
export function inDaemonOrder(jobs: EventItem[]): EventItem[] {
  const out: EventItem[] = [];
  let run: { job: EventItem; key: string; i: number }[] = [];
  const flushRun = () => {
    run.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.i - b.i));
    for (const r of run) out.push(r.job);
    run = [];
  };
  let lastKey = '';
  jobs.forEach((job, i) => {
    if (job.kind !== 'frame') {
      flushRun();
      out.push(job);
      return;
    }
    lastKey = timestampKey(job.raw) ?? lastKey;
    run.push({ job, key: lastKey, i });
  });
  flushRun();
  return out;
}

const timestampPattern = /"timestamp":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)"/;

function maxKey(a: string, b: string | undefined): string {
  return b !== undefined && b > a ? b : a;
}

/** A sortable key (UTC, nanoseconds) for an RFC 3339 timestamp inside a frame. */
function timestampKey(raw: string): string | undefined {
  const m = timestampPattern.exec(raw);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return undefined;
  return `${String(ms).padStart(15, '0')}${(m[2] ?? '').padEnd(9, '0')}`;
}

/**
 * The content hash of one event: a duplicated frame (same target, same bytes) has the same hash,
 * and the processor skips a hash it has already processed.
 */
export function eventItemHash(item: EventItem): string {
  const body = item.kind === 'frame' ? item.raw : `synthetic|${item.event.id}`;
  return createHash('sha256').update(`${item.target}|${body}`).digest('hex').slice(0, 32);
}

function batchId(items: EventItem[]): string {
  const h = createHash('sha256');
  for (const item of items) h.update(eventItemHash(item));
  return h.digest('hex').slice(0, 32);
}
