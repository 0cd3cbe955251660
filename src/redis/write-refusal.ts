/**
 * Why a reachable Redis refuses writes: `oom` (used memory above `maxmemory` with `noeviction`),
 * `readonly` (a replica), `misconf` (an RDB save failed and `stop-writes-on-bgsave-error` is on).
 */
export type WriteRefusal = 'oom' | 'readonly' | 'misconf';

/** What each refusal means for an operator, in a few words. */
export const refusalText: Record<WriteRefusal, string> = {
  oom: 'OOM: used memory above maxmemory',
  readonly: 'READONLY: a read-only replica',
  misconf: 'MISCONF: an RDB save failed and stop-writes-on-bgsave-error is on',
};

// Redis starts the reply with the code; a script's error or a transaction's EXECABORT carries it
// after a prefix ("ERR Error running script…", "EXECABORT … previous errors").
const codes = /(?:^|[\s:-])(OOM|READONLY|MISCONF)\b/;

/**
 * The refusal an error from Redis stands for, or undefined for any other error (unreachable,
 * timeout, a bug). Read from the reply's text and, for an aborted transaction, from the errors
 * that aborted it; any error type, since BullMQ and ioredis wrap replies differently.
 */
export function writeRefusalOf(err: unknown): WriteRefusal | undefined {
  const seen = new Set<unknown>();
  const pending: unknown[] = [err];
  // Iterative and bounded: an error's cause chain is not trusted to end.
  while (pending.length && seen.size < 16) {
    const e = pending.shift();
    if (!e || seen.has(e)) continue;
    seen.add(e);
    const message = typeof e === 'string' ? e : e instanceof Error ? e.message : undefined;
    const code = message === undefined ? undefined : codes.exec(message.slice(0, 200))?.[1];
    if (code) return code.toLowerCase() as WriteRefusal;
    if (typeof e === 'object') {
      const previous = (e as { previousErrors?: unknown }).previousErrors;
      if (Array.isArray(previous)) pending.push(...previous.slice(0, 8));
      pending.push((e as { cause?: unknown }).cause);
    }
  }
  return undefined;
}
