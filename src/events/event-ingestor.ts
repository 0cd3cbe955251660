import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { CanonicalEvent } from './canonical-event.js';
import type { EventJob } from '../queue/payloads.js';

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
}

/**
 * Moves frames from the socket reader into the events queue: pushes are synchronous and cheap,
 * writes are batched (addBulk, one round trip per batch) and strictly ordered.
 */
export class EventIngestor {
  private buffer: EventJob[] = [];
  private flushing: Promise<void> | undefined;
  private readonly maxBuffered: number;

  constructor(private readonly opts: EventIngestorOptions) {
    this.maxBuffered = opts.maxBuffered ?? 100_000;
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

  private push(job: EventJob): void {
    if (this.buffer.length >= this.maxBuffered) {
      this.opts.logger.error({ buffered: this.buffer.length }, 'event buffer full (Redis too slow or down); dropping and asking for a resync');
      this.buffer = [];
      this.opts.onOverflow?.();
    }
    this.buffer.push(job);
    if (!this.flushing) this.flushing = this.flush();
  }

  private async flush(): Promise<void> {
    try {
      while (this.buffer.length) {
        const batch = this.buffer.slice(0, 1000);
        try {
          if (this.opts.mayWrite && !(await this.opts.mayWrite())) {
            this.opts.logger.warn({ dropped: this.buffer.length }, 'not the lease holder any more: dropping buffered events (the new holder resyncs)');
            this.buffer = [];
            break;
          }
          await this.opts.queue.addBulk(batch.map((data) => ({ name: data.kind, data, opts: { jobId: jobId(data) } })));
          this.buffer.splice(0, batch.length);
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

/** A duplicated frame (same target, same bytes) maps to the same job id, which BullMQ stores once. */
function jobId(job: EventJob): string {
  const body = job.kind === 'frame' ? job.raw : `synthetic|${job.event.id}`;
  return createHash('sha256').update(`${job.target}|${body}`).digest('hex').slice(0, 32);
}
