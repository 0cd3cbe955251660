/** How long after an inversion an instance's frames are held. */
const INVERTED_MS = 2_000;
/** An instance with a frame this recently has an action in progress: its next frames are held. */
const ACTIVE_MS = 1_000;
/** The instance a frame is about, cut out of its text (`source` or an operation's resources). */
const instancePattern = /\/1\.0\/(?:instances|containers|virtual-machines)\/([^/?"\\]+)/;

interface InstanceHold {
  lastSeen: number;
  /** Frames of the instance buffered now are written no earlier than this (ms). */
  until: number;
  /** Daemon-time key of its newest frame written. */
  newestWritten: string;
  invertedUntil: number;
}

/**
 * How long the ingestor holds each frame to put LXD's out-of-order frames (goroutine inversions of
 * a few ms, notes §1) back in daemon order. Order matters per instance only — each instance's
 * events are processed in order, different instances side by side — so holds are per instance:
 * a lone frame (a crash's `instance-shutdown`: nothing is emitted beside it) is written at once;
 * frames of an instance with another frame in the last second (an action in progress, whose events
 * the daemon emits concurrently) are held together for the window, and so are an instance's frames
 * for 2 s after one of its frames arrived behind a newer one already written. Fixed mode holds
 * every frame for the window.
 */
export class ReorderHold {
  private readonly byInstance = new Map<string, InstanceHold>();

  constructor(
    private readonly windowMs: number,
    private readonly adaptive: boolean,
  ) {}

  /** Registers a frame received at `receivedAt`; answers its instance key (or '' when none). */
  arrived(raw: string, key: string | undefined, receivedAt: number): string {
    const instance = instancePattern.exec(raw)?.[1] ?? '';
    if (!this.adaptive) {
      const h = this.entry(instance, receivedAt);
      h.until = Math.max(h.until, receivedAt + this.windowMs);
      return instance;
    }
    if (!instance) return instance;
    const h = this.byInstance.get(instance);
    if (!h) {
      this.prune(receivedAt);
      this.byInstance.set(instance, { lastSeen: receivedAt, until: 0, newestWritten: '', invertedUntil: 0 });
      return instance;
    }
    if (key !== undefined && key < h.newestWritten) h.invertedUntil = receivedAt + INVERTED_MS;
    if (receivedAt - h.lastSeen < ACTIVE_MS || receivedAt < h.invertedUntil) h.until = Math.max(h.until, receivedAt + this.windowMs);
    h.lastSeen = receivedAt;
    return instance;
  }

  /** When the frames of `instance` may be written (ms; 0: now). */
  releaseAt(instance: string): number {
    return this.byInstance.get(instance)?.until ?? 0;
  }

  /** A frame was written. */
  written(instance: string, key: string | undefined): void {
    const h = this.byInstance.get(instance);
    if (h && key !== undefined && key > h.newestWritten) h.newestWritten = key;
  }

  private entry(instance: string, now: number): InstanceHold {
    let h = this.byInstance.get(instance);
    if (!h) {
      this.prune(now);
      h = { lastSeen: now, until: 0, newestWritten: '', invertedUntil: 0 };
      this.byInstance.set(instance, h);
    }
    h.lastSeen = now;
    return h;
  }

  /** Forgets quiet instances once many are tracked (a storm over thousands of instances). */
  private prune(now: number): void {
    if (this.byInstance.size < 10_000) return;
    for (const [k, h] of this.byInstance) if (now - h.lastSeen >= ACTIVE_MS && now >= h.invertedUntil && now >= h.until) this.byInstance.delete(k);
  }
}
