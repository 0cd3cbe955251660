/**
 * The test house's one way to wait: on a condition, never on the clock. `until` polls a probe until
 * it gives a value (anything but `undefined` or `false`) and returns it; past `timeoutMs` it throws
 * with what it waited for and the probe's last error, if it threw. `sleep` is for the few waits that
 * are the point of a test (a quiet period in which nothing must happen); each use says why.
 */
export async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
  everyMs = 25,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  return poll(probe, everyMs, async (why) =>
    Date.now() >= end ? new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`) : undefined,
  );
}

/**
 * Polls `probe` every `everyMs` until it gives a value; after each miss, `giveUp` is asked (with the
 * probe's last error, worded) whether to stop, and what it returns is thrown.
 */
async function poll<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  everyMs: number,
  giveUp: (why: string) => Promise<Error | undefined>,
): Promise<T> {
  for (;;) {
    let last: unknown;
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    const stop = await giveUp(last instanceof Error ? `: ${last.message}` : last !== undefined ? `: ${String(last)}` : '');
    if (stop) throw stop;
    await sleep(everyMs);
  }
}

/**
 * Waits until the clock reads later than `at` (ms since the epoch): for records whose order rests on
 * a millisecond clock (Redis stream ids, `Date.now()`), so that two of them differ in time.
 */
export function clockPast(at: number): Promise<number> {
  return until(`the clock past ${at}`, () => Date.now() > at && Date.now(), 1_000, 1);
}

/** Resolves after `ms`. Not a way to wait for something to happen: use {@link until}. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Polls `probe` as {@link until} does, for as long as `progress()` keeps changing: it fails only when
 * the probe has given no value and the progress has stood still for `stallMs`. For a wait on work
 * whose pace is the machine's (rounds of a schedule on a loaded daemon), where a fixed bound fails a
 * slow run that does all its work, and what the test must catch is work that stopped.
 */
export async function untilMoving<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  progress: () => Promise<string | number>,
  stallMs = 30_000,
  everyMs = 200,
): Promise<T> {
  let mark = await progress();
  let movedAt = Date.now();
  return poll(probe, everyMs, async (why) => {
    const now = await progress();
    if (now !== mark) {
      mark = now;
      movedAt = Date.now();
      return undefined;
    }
    return Date.now() - movedAt > stallMs ? new Error(`${what}: stuck at ${String(mark)} for ${stallMs} ms${why}`) : undefined;
  });
}

/**
 * Waits until `count()` reaches `target`, for as long as it keeps growing: it fails only when the
 * count has not moved for `stallMs`. For a wait whose length is the machine's speed (a storm of
 * events archived on a loaded CI host), where a fixed bound would fail a slow run that loses nothing,
 * and what the test must catch is work that stopped short.
 */
export async function untilReached(what: string, count: () => Promise<number>, target: number, stallMs = 15_000): Promise<number> {
  let last = await count();
  let movedAt = Date.now();
  for (;;) {
    if (last >= target) return last;
    if (Date.now() - movedAt > stallMs) throw new Error(`${what}: stuck at ${last} of ${target} for ${stallMs} ms`);
    await sleep(50);
    const now = await count();
    if (now !== last) {
      last = now;
      movedAt = Date.now();
    }
  }
}
