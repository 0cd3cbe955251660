import { readFileSync } from 'node:fs';
import type { RedisConnection } from '../src/redis/connect.js';

/** One reading, every ~10 s. Memory in MB (10^6 bytes), times in ms. */
export interface Sample {
  /** Seconds since the load started. */
  t: number;
  /** Reflex's resident set (VmRSS). */
  rssMb: number;
  /** Reflex's V8 heap used (`reflex_nodejs_heap_size_used_bytes` of its /metrics). */
  heapUsedMb: number;
  /** Redis `used_memory`. */
  redisUsedMb: number;
  /** Redis `DBSIZE`. */
  keys: number;
  /** Keys by family (see {@link keyFamily}). */
  families: Record<string, number>;
  /** Event time → audit record time of the events audited since the previous sample. */
  lag: { n: number; p50: number; p99: number; max: number };
  /** Jobs waiting in the events queue. */
  eventsWaiting: number;
  /** API calls of the load so far. */
  apiCalls: number;
  /** Lifecycle events the simulator emitted so far (seen by the witness). */
  events: number;
}

/** VmRSS of a process, in MB. */
export function rssMb(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return (Number(m[1]) * 1024) / 1e6;
}

/** The V8 heap used, in MB, from a Prometheus text exposition. */
export async function heapUsedMb(metricsUrl: string): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const m = /^reflex_nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
  if (!m) throw new Error(`no reflex_nodejs_heap_size_used_bytes at ${metricsUrl}`);
  return Number(m[1]) / 1e6;
}

/** Redis used_memory (MB), DBSIZE and the key families of `prefix`, by a SCAN of the whole key space. */
export async function redisReading(redis: RedisConnection, prefix: string): Promise<Pick<Sample, 'redisUsedMb' | 'keys' | 'families'>> {
  const info = String(await redis.info('memory'));
  const used = Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
  const keys = await redis.dbsize();
  const families: Record<string, number> = {};
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const k of batch) {
      const f = keyFamily(prefix, k);
      families[f] = (families[f] ?? 0) + 1;
    }
  } while (cursor !== '0');
  return { redisUsedMb: used / 1e6, keys, families };
}

/**
 * The family of a key (src/redis/key-space.ts): `archive:seen`, `audit:once`, `bull:events:job`,
 * `instance:lock`, `target:state`, `done`… — the tag and the first name after it, with per-item
 * parts (ids, hashes, instance and target names) left out.
 */
export function keyFamily(prefix: string, key: string): string {
  if (key.startsWith('{')) {
    const close = key.indexOf('}');
    const inner = key.slice(1, close);
    const rest = key.slice(close + 2).split(':');
    const tag = inner.startsWith(`${prefix}:`) ? inner.slice(prefix.length + 1) : inner;
    if (tag === 'bull' || tag === 'notify') {
      // BullMQ: <queue>:<job id> for a job, <queue>:<name> (wait, completed, events, meta…) otherwise.
      if (tag === 'notify' && rest[0] !== 'bull') return `notify:${rest[0] ?? ''}`;
      const r = tag === 'notify' ? rest.slice(1) : rest;
      const what = r[1] === undefined ? '' : /^[0-9a-f-]{8,}$|^\d+$|^repeat:/.test(r[1]) || r.length > 2 ? 'job' : r[1];
      return `${tag === 'notify' ? 'notify:bull' : 'bull'}:${r[0] ?? ''}${what ? `:${what}` : ''}`;
    }
    if (['audit', 'archive', 'rejected'].includes(tag)) return rest[0] ? `${tag}:${rest[0]}` : tag;
    // An instance's tag ends in `project/instance` (neither holds a colon or a slash); a target's (a URL) does not.
    return `${/:[^:/]+\/[^:/]+$/.test(tag) ? 'instance' : 'target'}:${rest[0] ?? ''}`;
  }
  const parts = key.split(':');
  return parts[0] === prefix ? (parts[1] ?? prefix) : 'other';
}
