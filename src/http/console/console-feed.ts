import type { RedisConnection } from '../../redis/connect.js';
import { streamHead } from '../../redis/stream-head.js';

/** What changed, as the console's event stream says it. */
export interface FeedChange {
  /** The audit stream grew (incidents, outcomes, silences, operators' actions). */
  audit: boolean;
  /** The event archive grew (statuses changed), or the periodic refresh came round. */
  fleet: boolean;
  /** `fleet` is only the periodic refresh: no record says anything changed. */
  periodic?: boolean;
}

/** Options of {@link ConsoleFeed}. */
export interface ConsoleFeedOptions {
  redis: RedisConnection;
  /** The audit stream's key. */
  auditKey: string;
  /** The event archive's key. */
  archiveKey: string;
  /** How often the streams' heads are read, ms. Default 300. */
  pollMs?: number;
  /**
   * A fleet change is announced at least this often, ms (default 3000): quarantines released by
   * the CLI, locks taken and dropped and back-offs running out leave no record in either stream.
   */
  refreshMs?: number;
}

/**
 * One poll of the audit and archive streams' heads, shared by every console viewer and running
 * only while one is connected. Every event an instance's status changes on is archived, and every
 * step Reflex takes is audited, so a new head is the signal to read again.
 */
export class ConsoleFeed {
  private readonly listeners = new Set<(c: FeedChange) => void>();
  private timer?: NodeJS.Timeout;
  private heads = { audit: '', archive: '' };
  private lastFleet = 0;
  private polling = false;

  constructor(private readonly opts: ConsoleFeedOptions) {}

  /** Calls `listener` on each change until the returned function is called. */
  subscribe(listener: (c: FeedChange) => void): () => void {
    this.listeners.add(listener);
    if (!this.timer) {
      this.timer = setInterval(() => void this.poll(), this.opts.pollMs ?? 300);
      this.timer.unref();
    }
    return () => {
      this.listeners.delete(listener);
      if (!this.listeners.size) this.stop();
    };
  }

  /** Stops polling (the server closes). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const [audit, archive] = await Promise.all([
        streamHead(this.opts.redis, this.opts.auditKey),
        streamHead(this.opts.redis, this.opts.archiveKey),
      ]);
      const first = this.heads.audit === '';
      const change: FeedChange = {
        audit: !first && audit !== this.heads.audit,
        fleet: !first && (archive !== this.heads.archive || audit !== this.heads.audit),
      };
      this.heads = { audit, archive };
      if (!change.fleet && Date.now() - this.lastFleet >= (this.opts.refreshMs ?? 3_000)) change.fleet = change.periodic = true;
      if (change.fleet) this.lastFleet = Date.now();
      if (change.audit || change.fleet) for (const l of this.listeners) l(change);
    } catch {
      // Redis unreachable: the health panel says so; the next poll tries again.
    } finally {
      this.polling = false;
    }
  }
}
