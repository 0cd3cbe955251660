import { AuditLog } from '../src/audit/audit-log.js';
import type { RedisConnection } from '../src/redis/connect.js';

/**
 * Reads the audit trail as it is written, from its first record, and keeps what the soak checks
 * at the end: the event ids recorded and the instances with an `outcome`. It reads as records
 * arrive, so a record retention drops later (the soak's windows are minutes) was read before.
 */
export class AuditFollower {
  /** correlationId of every `event` record. */
  readonly eventIds = new Set<string>();
  /** Instances with an `outcome` record, with how many. */
  readonly outcomes = new Map<string, number>();
  /** Records read in all. */
  records = 0;
  /** Event time → audit time (ms) of the event records read since the last {@link takeLags}. */
  private lags: number[] = [];
  private readonly abort = new AbortController();
  private done: Promise<void> | undefined;
  private failure: Error | undefined;

  constructor(
    private readonly redis: RedisConnection,
    private readonly key: string,
  ) {}

  start(): void {
    this.done = this.run().catch((err: unknown) => {
      this.failure = err as Error;
    });
  }

  private async run(): Promise<void> {
    const log = new AuditLog(this.redis, this.key);
    for await (const r of log.follow({}, { afterId: '0-0', signal: this.abort.signal, blockMs: 500 })) {
      this.records++;
      if (r.type === 'event') {
        this.eventIds.add(r.correlationId);
        const eventTime = Date.parse(String((r as { event?: { timestamp?: unknown } }).event?.timestamp ?? ''));
        if (!Number.isNaN(eventTime)) this.lags.push(Date.parse(r.at) - eventTime);
      } else if (r.type === 'outcome' && r.instance) {
        this.outcomes.set(r.instance, (this.outcomes.get(r.instance) ?? 0) + 1);
      }
    }
  }

  /** The lags gathered since the previous call. */
  takeLags(): number[] {
    const out = this.lags;
    this.lags = [];
    return out;
  }

  /** Throws what broke the reading, if anything did. */
  check(): void {
    if (this.failure) throw new Error(`reading the audit trail failed: ${this.failure.message}`);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}
