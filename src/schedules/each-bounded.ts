/**
 * `fn` over `items`, at most `limit` calls at once, the results in the items' order: what a tick
 * and a plan do per instance. Unbounded (one `Promise.all`), 100 instances opened 100 connections
 * to the daemon at once and 10 000 would open 10 000; bounded, a few kept-alive connections carry
 * every call. The first failure rejects, and no call starts after it.
 */
export async function eachBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lane = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, lane));
  return results;
}
