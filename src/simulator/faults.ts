/** Faults armed on one instance. */
export interface InstanceFaults {
  /** Next N operations on the instance fail with `err` (400). */
  failNext?: { count: number; err: string };
  /** Next N operations on the instance hang in Running (cancellable). */
  hangNext?: number;
  /** Every start succeeds, then the guest exits after `uptimeMs` (crash loop). */
  crashLoop?: { uptimeMs: number };
  /** The next start fails like a bad `lxc.init.cmd` (op Failure, then a spurious instance-shutdown). */
  failNextStart?: boolean;
  /** The next start takes this long (ms) instead of the start timing (a slow pre-start hook on the daemon). */
  slowNextStart?: number;
  /** The guest ignores the shutdown signal: graceful stops time out (or hang with timeout -1). */
  ignoreShutdown?: boolean;
}

/** What an operation should do because of an armed fault. */
export type OperationFault = { kind: 'fail'; err: string } | { kind: 'hang' } | undefined;

/** Per-instance fault registry, keyed by "project/name". */
export class FaultBook {
  private readonly faults = new Map<string, InstanceFaults>();

  /** The faults of an instance (created on first use). */
  of(key: string): InstanceFaults {
    let f = this.faults.get(key);
    if (!f) {
      f = {};
      this.faults.set(key, f);
    }
    return f;
  }

  /** Consumes one fail/hang charge for the next operation, if any is armed. */
  takeOperationFault(key: string): OperationFault {
    const f = this.faults.get(key);
    if (!f) return undefined;
    if (f.failNext && f.failNext.count > 0) {
      f.failNext.count--;
      const err = f.failNext.err;
      if (f.failNext.count === 0) delete f.failNext;
      return { kind: 'fail', err };
    }
    if (f.hangNext && f.hangNext > 0) {
      f.hangNext--;
      return { kind: 'hang' };
    }
    return undefined;
  }

  /** Moves faults along with a rename. */
  rename(from: string, to: string): void {
    const f = this.faults.get(from);
    if (f) {
      this.faults.delete(from);
      this.faults.set(to, f);
    }
  }

  /** Clears the faults of one instance, or all. */
  clear(key?: string): void {
    if (key === undefined) this.faults.clear();
    else this.faults.delete(key);
  }
}
