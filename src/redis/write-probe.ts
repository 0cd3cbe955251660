import { withDeadline, type RedisConnection } from './connect.js';
import { refusalText, writeRefusalOf, type WriteRefusal } from './write-refusal.js';

/** Whether Redis took the last probe's write, and since when. */
export interface WriteState {
  /** True: the write was taken; false: refused or not answered; undefined: not probed yet. */
  writable: boolean | undefined;
  /** Why Redis refused it, when it answered with a refusal. */
  refusal?: WriteRefusal;
  /** The reply or error of the last failed probe, one line. */
  error?: string;
  /** When this state (writable, or refused for this reason) began. */
  since: number;
  /**
   * While writes are refused: when Redis last took a probe's write, of any replica (read back from
   * the key, which a refusal leaves as it was). The same on every replica, so what they each say
   * about the outage can carry the same start.
   */
  lastTakenAt?: number;
}

/** Options of {@link WriteProbe}. */
export interface WriteProbeOptions {
  redis: RedisConnection;
  /** The key written (`KeySpace.writeProbe`): a small value that expires by itself. */
  key: string;
  /** How often. Default 5000 ms. */
  intervalMs?: number;
  /** How long a probe's write may take. Default 1000 ms. */
  timeoutMs?: number;
  /** Called at each change: writable ↔ not, or another reason. */
  onChange?: (state: WriteState, previous: WriteState) => void;
  /** The clock (tests). Default Date.now. */
  now?: () => number;
}

/** A one-line description of a state for /readyz, logs and alerts. */
export function describeWrites(s: WriteState): string {
  if (s.writable === undefined) return 'not probed yet';
  if (s.writable) return 'writes taken';
  if (s.refusal) return `Redis refuses writes (${refusalText[s.refusal]})`;
  return `Redis did not take a write (${s.error ?? 'no answer'})`;
}

/** The least time between two probes the hot path asks for: a burst of refused writes probes once. */
const minGapMs = 250;

/**
 * Whether Redis takes writes, by a real one: every `intervalMs` a `SET key … PX` (a PING answers
 * while every write is refused: OOM, a read-only replica, MISCONF). {@link suspect} is how the hot
 * path reports a write that failed: a refusal among them probes again at once instead of at the
 * next interval. On a Cluster the key lives on one node: the probe speaks for that node.
 */
export class WriteProbe {
  private current: WriteState;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<WriteState> | undefined;
  private lastAt = -Infinity;
  private readonly now: () => number;

  constructor(private readonly opts: WriteProbeOptions) {
    this.now = opts.now ?? Date.now;
    this.current = { writable: undefined, since: this.now() };
  }

  /** The state as of the last probe. */
  get state(): WriteState {
    return this.current;
  }

  /** Probes now, then every interval. */
  start(): void {
    void this.check();
    this.timer = setInterval(() => void this.check(), this.opts.intervalMs ?? 5_000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Probes now (one probe at a time: a caller during one gets its outcome). */
  check(): Promise<WriteState> {
    this.running ??= this.probe().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Reports an error a write of the hot path got: a refusal probes again at once. */
  suspect(err: unknown): void {
    if (writeRefusalOf(err) === undefined || this.running || this.now() - this.lastAt < minGapMs) return;
    void this.check();
  }

  private async probe(): Promise<WriteState> {
    this.lastAt = this.now();
    let next: Omit<WriteState, 'since'>;
    try {
      await withDeadline(this.opts.redis.set(this.opts.key, String(this.lastAt), 'PX', 60_000), this.opts.timeoutMs ?? 1_000);
      next = { writable: true };
    } catch (err) {
      const refusal = writeRefusalOf(err);
      const error = firstLine(err);
      next = refusal ? { writable: false, refusal, error, lastTakenAt: await this.lastTaken() } : { writable: false, error };
    }
    const previous = this.current;
    const changed = next.writable !== previous.writable || next.refusal !== previous.refusal;
    this.current = { ...next, since: changed ? this.now() : previous.since };
    if (changed) this.opts.onChange?.(this.current, previous);
    return this.current;
  }

  /** The time the key holds: the last write Redis took (a refused write leaves it). */
  private async lastTaken(): Promise<number | undefined> {
    const value = await withDeadline(this.opts.redis.get(this.opts.key), this.opts.timeoutMs ?? 1_000).catch(() => null);
    const at = Number(value);
    return value && Number.isFinite(at) && at > 0 ? at : undefined;
  }
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n', 1)[0]!.slice(0, 300);
}
