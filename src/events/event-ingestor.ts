import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { CanonicalEvent } from './canonical-event.js';
import type { EventItem } from './event-job.js';
import { DEFAULT_CLOCK_TOLERANCE_MS } from './event-time.js';
import { DEFAULT_MAX_EVENT_BYTES, limitFrameSize } from './frame-size.js';
import { readRefusedNote } from './refused-frame.js';
import { ReorderHold } from './reorder-hold.js';

/** Options of {@link EventIngestor}. */
export interface EventIngestorOptions {
  queue: Queue;
  target: string;
  logger: Logger;
  /** Frames held in memory while Redis is slow or down before the ingestor gives up on them and asks for a resync. Default 100 000. */
  maxBuffered?: number;
  /** Called when frames had to be dropped: the caller must resync to cover the gap. */
  onOverflow?: () => void;
  /** Told of each write of a batch that failed (the write probe re-checks at once when Redis refused it). */
  onWriteError?: (err: unknown) => void;
  /**
   * Fencing: checked before each batch is written (it may wait while Redis is unreachable). When it
   * answers false (another replica holds the lease) the ingestor stands by: its frames go back to
   * its window, which the new holder's own window covers anyway.
   */
  mayWrite?: () => Promise<boolean>;
  /**
   * How long a frame is held to undo LXD's per-event goroutine reordering (notes §1) before frames
   * are written in daemon-time order. Adaptive by default: a lone frame (a crash's
   * `instance-shutdown`) goes out at once, since nothing emitted with it can overtake it; a frame of
   * an instance with other frames in the last second (an action in progress, whose events the
   * daemon emits concurrently) is held this long, and so is every frame for a while after an
   * inversion got through. Wider inversions are left to the state tracker (compare-and-set on
   * daemon time, then a read). Default 20 ms.
   */
  reorderWindowMs?: number;
  /** False holds every frame for the whole `reorderWindowMs` (a fixed window). Default true. */
  adaptiveReorder?: boolean;
  /** Most events per queue job. Default 500. */
  maxBatch?: number;
  /** A follower keeps the frames of this many last milliseconds, to replay them if it takes over. Default 60 000. */
  followWindowMs?: number;
  /** A follower keeps at most this many frames. Default 50 000. */
  followMaxFrames?: number;
  /** Starts as the writer (true) or as a follower keeping a window (false). Default true. */
  active?: boolean;
  /**
   * A frame larger than this has its largest fields replaced by `{"truncated": true, "bytes": N}`
   * before it is queued (so before it is audited or archived). Default 65 536.
   */
  maxEventBytes?: number;
  /**
   * A frame dated further ahead of its receipt than this is ordered (and held) by its receipt
   * time: one wrong timestamp must not put the instance's later frames behind it. Default 5 minutes.
   */
  clockToleranceMs?: number;
}

/**
 * Moves frames from the socket reader into the events queue: pushes are synchronous and cheap;
 * what accumulated while the previous write was in flight goes out as one job (one round trip per
 * batch, not per event), in daemon order.
 */
export class EventIngestor {
  private buffer: EventItem[] = [];
  /** A follower's window of recent frames, oldest first. */
  private ring: EventItem[] = [];
  private active: boolean;
  private readonly hold: ReorderHold;
  /** The instance each buffered frame is about ('' when none), for its hold. */
  private readonly instanceOf = new WeakMap<EventItem, string>();
  /** Bumped when the buffer is thrown away (overflow, lost lease): positions taken before no longer hold. */
  private generation = 0;
  private flushing: Promise<void> | undefined;
  /** Ends the flush loop's wait for a held frame early: a frame that needs no hold arrived. */
  private wake: (() => void) | undefined;
  private readonly maxBuffered: number;
  private readonly reorderWindowMs: number;
  private readonly maxBatch: number;
  private readonly followWindowMs: number;
  private readonly followMaxFrames: number;
  private readonly maxEventBytes: number;

  constructor(private readonly opts: EventIngestorOptions) {
    this.maxBuffered = opts.maxBuffered ?? 100_000;
    this.reorderWindowMs = opts.reorderWindowMs ?? 20;
    this.maxBatch = opts.maxBatch ?? 500;
    this.followWindowMs = opts.followWindowMs ?? 60_000;
    this.followMaxFrames = opts.followMaxFrames ?? 50_000;
    this.active = opts.active ?? true;
    this.maxEventBytes = opts.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    this.hold = new ReorderHold(this.reorderWindowMs, opts.adaptiveReorder ?? true);
  }

  /** Frames held: waiting to be written (writer) or kept in the window (follower). */
  get buffered(): number {
    return this.active ? this.buffer.length : this.ring.length;
  }

  /** Becomes the writer: the window of recent frames is written first, then live frames. */
  activate(): void {
    if (this.active) return;
    this.active = true;
    const replay = this.ring;
    this.ring = [];
    this.buffer = [...replay, ...this.buffer];
    if (this.buffer.length && !this.flushing) this.flushing = this.flush();
  }

  /** Becomes a follower: frames not written yet go back to the window (another replica writes now). */
  standBy(): void {
    if (!this.active) return;
    this.active = false;
    this.ring.push(...this.buffer.filter((i) => i.kind === 'frame'));
    this.buffer = [];
    this.generation++;
    this.trimRing(Date.now());
  }

  /** Queues a raw frame (a follower keeps it in its window); never blocks. */
  pushFrame(received: string, receivedAt: number): void {
    const { raw, truncatedBytes } = limitFrameSize(received, this.maxEventBytes, receivedAt);
    const refused = truncatedBytes === undefined ? undefined : readRefusedNote(raw);
    if (refused)
      this.opts.logger.warn(
        { bytes: truncatedBytes, reason: refused.reason },
        'event frame refused: queued as its refusal note, to be kept as rejected',
      );
    else if (truncatedBytes !== undefined)
      this.opts.logger.warn(
        { bytes: truncatedBytes, maxEventBytes: this.maxEventBytes },
        'event frame larger than maxEventBytes: its largest fields were replaced by truncation markers',
      );
    const item: EventItem = { kind: 'frame', target: this.opts.target, raw, receivedAt };
    if (!this.active) {
      this.ring.push(item);
      this.trimRing(receivedAt);
      return;
    }
    this.instanceOf.set(item, this.hold.arrived(raw, this.orderKey(item), receivedAt));
    this.push(item);
  }

  private orderKey(item: EventItem & { kind: 'frame' }): string | undefined {
    return timestampKey(item.raw, item.receivedAt, this.opts.clockToleranceMs);
  }

  private trimRing(now: number): void {
    let drop = 0;
    while (drop < this.ring.length && (this.ring.length - drop > this.followMaxFrames || this.ring[drop]!.receivedAt < now - this.followWindowMs))
      drop++;
    if (drop) this.ring.splice(0, drop);
  }

  /** Queues an event made up by a resync (a follower does not resync: dropped). */
  /**
   * A resync's events, all in the buffer before any goes out: they are written as one batch (up to
   * `maxBatch`), whose lanes keep each instance's in order. Pushed one by one, the first went out
   * alone and the rest in the next job, which another replica could process first (a rename found
   * by the resync after the status event of its new name: the crash it hid went unalerted).
   */
  pushSynthetic(events: readonly CanonicalEvent[]): void {
    if (!this.active || !events.length) return;
    const receivedAt = Date.now();
    for (const event of events.slice(0, -1)) this.push({ kind: 'synthetic', target: this.opts.target, event, receivedAt }, false);
    this.push({ kind: 'synthetic', target: this.opts.target, event: events[events.length - 1]!, receivedAt });
  }

  /** Resolves once everything pushed so far is in Redis. */
  async drain(): Promise<void> {
    while (this.active && (this.flushing || this.buffer.length)) await (this.flushing ?? this.flush());
  }

  /**
   * What goes out now: up to `max` items of the buffer, in buffer order, whose instance's hold has
   * passed; a resync event goes only while no held frame is ahead of it. Answers the positions
   * taken, and when the next held frame is due (Infinity: none is held).
   */
  private released(max: number, now: number): { taken: number[]; nextAt: number } {
    const taken: number[] = [];
    let nextAt = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.buffer.length && taken.length < max; i++) {
      const item = this.buffer[i]!;
      if (item.kind === 'synthetic') {
        if (nextAt === Number.POSITIVE_INFINITY) taken.push(i);
        continue;
      }
      const at = this.hold.releaseAt(this.instanceOf.get(item) ?? '');
      if (at <= now) taken.push(i);
      else nextAt = Math.min(nextAt, at);
    }
    return { taken, nextAt };
  }

  private push(job: EventItem, send = true): void {
    if (this.buffer.length >= this.maxBuffered) {
      this.opts.logger.error({ buffered: this.buffer.length }, 'event buffer full (Redis too slow or down); dropping and asking for a resync');
      this.buffer = [];
      this.generation++;
      this.opts.onOverflow?.();
    }
    this.buffer.push(job);
    if (!send) return;
    if (!this.flushing) this.flushing = this.flush();
    else this.wake?.();
  }

  private async flush(): Promise<void> {
    try {
      while (this.active && this.buffer.length) {
        // Decide after the poll phase: the frames of one read (LXD's concurrent frames of an instance,
        // or a busy event loop's backlog once a hold's timer fires) are all in the buffer, so the first
        // of them is not written alone ahead of an older one read with it.
        await new Promise<void>((r) => setImmediate(r));
        if (!this.buffer.length) break;
        const { taken, nextAt } = this.released(this.maxBatch, Date.now());
        if (taken.length === 0) {
          // Another instance's frame that arrives meanwhile need not wait for this one's hold.
          await new Promise<void>((r) => {
            const t = setTimeout(r, Math.max(1, nextAt - Date.now()));
            this.wake = () => {
              clearTimeout(t);
              r();
            };
          });
          this.wake = undefined;
          continue; // frames that came meanwhile may have changed the holds
        }
        const generation = this.generation;
        const batch = inDaemonOrder(
          taken.map((i) => this.buffer[i]!),
          this.opts.clockToleranceMs,
        );
        try {
          if (this.opts.mayWrite && !(await this.opts.mayWrite())) {
            this.opts.logger.warn(
              { held: this.buffer.length },
              'not the lease holder: following (the holder writes; these frames stay in the window)',
            );
            this.standBy();
            break;
          }
          if (generation !== this.generation) continue;
          // The job id is a hash of the batch's content: a write retried after a lost reply is stored once.
          await this.opts.queue.add('batch', { kind: 'batch', target: this.opts.target, items: batch }, { jobId: batchId(batch) });
          for (const item of batch) if (item.kind === 'frame') this.hold.written(this.instanceOf.get(item) ?? '', this.orderKey(item));
          // Frames pushed meanwhile were appended, so the positions taken still hold (unless the buffer was thrown away).
          if (generation === this.generation) {
            const gone = new Set(taken);
            this.buffer = this.buffer.filter((_, i) => !gone.has(i));
          }
        } catch (err) {
          this.opts.logger.warn({ err, buffered: this.buffer.length }, 'could not write events to Redis; holding them and retrying');
          this.opts.onWriteError?.(err);
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
export function inDaemonOrder(jobs: EventItem[], clockToleranceMs = DEFAULT_CLOCK_TOLERANCE_MS): EventItem[] {
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
    lastKey = timestampKey(job.raw, job.receivedAt, clockToleranceMs) ?? lastKey;
    run.push({ job, key: lastKey, i });
  });
  flushRun();
  return out;
}

const timestampPattern = /"timestamp":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)"/;

/**
 * A sortable key (UTC, nanoseconds) for an RFC 3339 timestamp inside a frame; its receipt time
 * when the timestamp is further ahead of it than the tolerance (as the processor clamps it).
 */
function timestampKey(raw: string, receivedAt: number, toleranceMs = DEFAULT_CLOCK_TOLERANCE_MS): string | undefined {
  const m = timestampPattern.exec(raw);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return undefined;
  // Whole seconds, then the fraction in nanoseconds, as the timestamp's own key is built.
  if (ms > receivedAt + toleranceMs)
    return `${String(receivedAt - (receivedAt % 1000)).padStart(15, '0')}${String(receivedAt % 1000)
      .padStart(3, '0')
      .padEnd(9, '0')}`;
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
