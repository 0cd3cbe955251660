import type { HistoryStore } from './history-store.js';

/** The history store's health at one moment. */
export interface HistoryVerdict {
  /** False while the store fails: its last write failed, or it does not answer a read. */
  up: boolean;
  detail: string;
}

/** Options of {@link HistoryHealth}. */
export interface HistoryHealthOptions {
  /** How long the read of the store's newest record may take. Default 2000 ms. */
  timeoutMs?: number;
  /** Called with each verdict (the `reflex_history_store_up` gauge). */
  onVerdict?: (v: HistoryVerdict) => void;
}

/**
 * Whether the configured history store works, for /readyz and its gauge: the store must answer a
 * read of its newest record, and the last write this process shipped to it (when it ships: one
 * replica at a time does) must not have failed since the last one that succeeded. A read alone
 * would miss a store that reads but no longer takes writes (a full or read-only disk).
 */
export class HistoryHealth {
  private lastWrite: { ok: true } | { ok: false; error: string } | undefined;

  constructor(
    private readonly store: HistoryStore,
    private readonly opts: HistoryHealthOptions = {},
  ) {}

  /** The same store, its writes' outcomes recorded here (given to the shipper). */
  observed(): HistoryStore {
    const store = this.store;
    const record = async <T>(write: () => Promise<T>): Promise<T> => {
      try {
        const done = await write();
        this.lastWrite = { ok: true };
        return done;
      } catch (err) {
        this.lastWrite = { ok: false, error: err instanceof Error ? err.message : String(err) };
        throw err;
      }
    };
    // A proxy, not a copy of the interface: whatever else the store offers passes through untouched.
    return new Proxy(store, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== 'function') return value;
        const call = (...args: unknown[]) => (value as (...a: unknown[]) => unknown).apply(target, args);
        return prop === 'append' || prop === 'open' ? (...args: unknown[]) => record(async () => call(...args)) : call;
      },
    });
  }

  /** Reads the store's newest record and tells how the last shipped write went. */
  async check(): Promise<HistoryVerdict> {
    const v = await this.verdict();
    this.opts.onVerdict?.(v);
    return v;
  }

  private async verdict(): Promise<HistoryVerdict> {
    const kind = this.store.kind;
    if (this.lastWrite && !this.lastWrite.ok)
      return { up: false, detail: `the ${kind} history store refused the last records shipped to it: ${oneLine(this.lastWrite.error)}` };
    const ms = this.opts.timeoutMs ?? 2_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      const head = await Promise.race([
        this.store.head(),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))),
      ]);
      return { up: true, detail: `the ${kind} history store answers (newest record ${head?.id ?? 'none yet'})` };
    } catch (err) {
      return { up: false, detail: `the ${kind} history store does not answer: ${oneLine(err instanceof Error ? err.message : String(err))}` };
    } finally {
      clearTimeout(timer);
    }
  }
}

function oneLine(text: string): string {
  return text.split('\n', 1)[0]!.slice(0, 300);
}
