/**
 * Group commit: writes asked for while one is on its way to Redis go together in the next one.
 *
 * Each `submit` resolves when its own item is written (or rejects with the write's error), as if it
 * had been sent alone, so callers keep their "awaited means durable" reasoning. Items submitted in
 * the same turn of the event loop, or while a write is in flight, share one call of `write`, in the
 * order they were submitted: under load (a storm's 32 lanes appending audit records at once) one
 * script call carries dozens of items instead of one round trip each; alone, an item waits one
 * `setImmediate` at most.
 */
export class GroupCommit<I, O> {
  private queue: { item: I; resolve: (out: O) => void; reject: (err: unknown) => void }[] = [];
  private scheduled = false;

  /**
   * @param write writes the items in order and answers one result per item, in the same order.
   * @param maxItems most items per call (bounds how long one script holds Redis).
   */
  constructor(
    private readonly write: (items: I[]) => Promise<O[]>,
    private readonly maxItems = 200,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.maxItems);
      try {
        const out = await this.write(batch.map((b) => b.item));
        batch.forEach((b, i) => b.resolve(out[i] as O));
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.scheduled = false;
  }
}

/**
 * One {@link GroupCommit} per connection and name, made on first use: every writer of a stream in
 * the process shares it, whichever object (processor, executor, notifier) holds the connection.
 */
export function groupCommitFor<I, O>(
  registry: WeakMap<object, Map<string, GroupCommit<I, O>>>,
  connection: object,
  name: string,
  make: () => GroupCommit<I, O>,
): GroupCommit<I, O> {
  let byName = registry.get(connection);
  if (!byName) registry.set(connection, (byName = new Map()));
  let group = byName.get(name);
  if (!group) byName.set(name, (group = make()));
  return group;
}
