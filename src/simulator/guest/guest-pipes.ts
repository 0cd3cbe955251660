import { AsyncLocalStorage } from 'node:async_hooks';

/** The type bits of a named pipe (S_IFIFO), which the guest keeps in the in-memory file's mode above its permissions. */
export const fifoBits = 0o010000;

/** Whether a mode the in-memory filesystem keeps is a named pipe's. */
export const isFifoMode = (mode: number): boolean => (mode & 0o170000) === fifoBits;

/**
 * The named pipes of one guest filesystem (`mkfifo`): what waits at each, by inode. Opening one
 * blocks until the other end is opened too, as open(2) of a FIFO does: a reader until a writer
 * comes, a writer until a reader does. The guest's programs read a file whole and write their
 * output as they end, so a pipe carries one exchange at a time: the readers waiting when writers
 * come get what those wrote (the first of them all of it, the others the end at once, as when the
 * writers close), and a reader that comes to writers waiting takes what they all wrote.
 */
export class NamedPipes {
  /** Signals that end the waits of what runs inside {@link during}, beside {@link waitEnd}'s. */
  private static readonly ending = new AsyncLocalStorage<AbortSignal>();

  /** Runs `fn` with its waits at a pipe also ended by `signal` (`timeout`'s, for the program it runs). */
  static during<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    const outer = NamedPipes.ending.getStore();
    return NamedPipes.ending.run(outer ? AbortSignal.any([outer, signal]) : signal, fn);
  }

  /**
   * What ends a wait of the process running now (its kill, the exec's end): set by the guest's
   * shell, which knows the process each call runs in. A wait it ends sees the pipe at its end.
   */
  static waitEnd: () => AbortSignal | undefined = () => undefined;

  private readonly waiting = new Map<unknown, { readers: ((data: Uint8Array) => void)[]; writers: { data: Uint8Array; taken: () => void }[] }>();
  /** Whether any named pipe was ever made here: until then no read or write looks for one. */
  made = false;

  private at(pipe: unknown) {
    let w = this.waiting.get(pipe);
    if (!w) this.waiting.set(pipe, (w = { readers: [], writers: [] }));
    return w;
  }

  /** Forgets a pipe nothing waits at any more. */
  private settle(pipe: unknown): void {
    const w = this.waiting.get(pipe);
    if (w && w.readers.length === 0 && w.writers.length === 0) this.waiting.delete(pipe);
  }

  /** A read of the whole pipe: what the writers waiting wrote, else what the next ones write. */
  read(pipe: unknown): Promise<Uint8Array> {
    const w = this.at(pipe);
    if (w.writers.length > 0) {
      const writers = w.writers.splice(0);
      for (const { taken } of writers) taken();
      this.settle(pipe);
      return Promise.resolve(Buffer.concat(writers.map(({ data }) => data)));
    }
    return this.until<Uint8Array>(
      w.readers,
      (give) => give,
      new Uint8Array(),
      () => this.settle(pipe),
    );
  }

  /** A write of `data` (nothing: an open alone, which blocks nothing here), once a reader takes it. */
  write(pipe: unknown, data: Uint8Array): Promise<void> {
    if (data.length === 0) return Promise.resolve();
    const w = this.at(pipe);
    if (w.readers.length > 0) {
      const [first, ...rest] = w.readers.splice(0);
      first!(data);
      for (const other of rest) other(new Uint8Array());
      this.settle(pipe);
      return Promise.resolve();
    }
    return this.until<void>(
      w.writers,
      (done) => ({ data, taken: () => done() }),
      undefined,
      () => this.settle(pipe),
    );
  }

  /** Queues a waiter on `queue` and resolves with what it is given, or with `ended` once the process's wait ends (then `left`). */
  private until<T, Q = unknown>(queue: Q[], entry: (resolve: (value: T) => void) => Q, ended: T, left: () => void): Promise<T> {
    return new Promise<T>((resolve) => {
      const ends = [NamedPipes.waitEnd(), NamedPipes.ending.getStore()].filter((s) => s !== undefined);
      const end = ends.length > 1 ? AbortSignal.any(ends) : ends[0];
      const onEnd = (): void => {
        const at = queue.indexOf(item);
        if (at >= 0) queue.splice(at, 1);
        left();
        resolve(ended);
      };
      const item = entry((value) => {
        end?.removeEventListener('abort', onEnd);
        resolve(value);
      });
      queue.push(item);
      if (end?.aborted) onEnd();
      else end?.addEventListener('abort', onEnd, { once: true });
    });
  }
}
