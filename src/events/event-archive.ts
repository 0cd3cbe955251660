import type { RedisConnection } from '../redis/connect.js';
import type { CanonicalEvent } from './canonical-event.js';
import { LuaScript } from '../redis/script.js';

/** What the processor made of an archived event. */
export type ArchiveOutcome = 'processed' | 'stale' | 'unchanged' | 'duplicate' | 'corrected';

/** Options of {@link EventArchive}. */
export interface EventArchiveOptions {
  redis: RedisConnection;
  /** Stream key (`KeySpace.archive`). */
  key: string;
  /** Entries kept at most (approximate trim). Default 1 000 000. */
  maxLength?: number;
  /** Entries older than this are trimmed (approximate). Default 7 days. */
  maxAgeMs?: number;
  /** How long an event id is remembered so a retried job does not archive it twice. Default 24 h (the events queue keeps finished jobs as long). */
  dedupeWindowMs?: number;
}

/** One archived event as read back. */
export interface ArchivedEvent {
  streamId: string;
  outcome: ArchiveOutcome;
  event: CanonicalEvent;
}

// A job retried after a partial run must not archive its event twice: the id is claimed first.
// Both trims run in the same call because XADD takes MAXLEN or MINID, not both.
const appendScript = new LuaScript(`
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[1]) then
  local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'id', ARGV[3], 'kind', ARGV[4], 'target', ARGV[5], 'instance', ARGV[6], 'outcome', ARGV[7], 'event', ARGV[8])
  redis.call('XTRIM', KEYS[1], 'MINID', '~', ARGV[9])
  return id
end
return false`);

/**
 * The archive: every canonical event Reflex saw, once, with what became of it, in a Redis stream
 * trimmed by size and by age. Unlike the audit trail (what Reflex did and why), it is the raw
 * material to replay or debug ingestion.
 */
export class EventArchive {
  private readonly maxLength: number;
  private readonly maxAgeMs: number;
  private readonly dedupeWindowMs: number;

  constructor(private readonly opts: EventArchiveOptions) {
    this.maxLength = opts.maxLength ?? 1_000_000;
    this.maxAgeMs = opts.maxAgeMs ?? 7 * 24 * 3600_000;
    this.dedupeWindowMs = opts.dedupeWindowMs ?? 24 * 3600_000;
  }

  /** Appends an event unless an event with the same id was archived within the retention age. */
  async append(event: CanonicalEvent, outcome: ArchiveOutcome): Promise<boolean> {
    const minId = `${Math.max(0, Date.now() - this.maxAgeMs)}-0`;
    const res = await appendScript.run(this.opts.redis, [this.opts.key, `${this.opts.key}:seen:${event.target}:${event.id}`], [String(this.dedupeWindowMs), String(this.maxLength), event.id, event.kind, event.target, 'instance' in event && event.instance ? event.instance : '', outcome, JSON.stringify(event), minId]);
    return res !== null;
  }

  /** Reads archived events, oldest first (tests, `reflex` tooling). */
  async read(opts: { count?: number; kind?: CanonicalEvent['kind']; outcome?: ArchiveOutcome } = {}): Promise<ArchivedEvent[]> {
    const rows = await this.opts.redis.xrange(this.opts.key, '-', '+', 'COUNT', opts.count ?? 1_000_000);
    const out: ArchivedEvent[] = [];
    for (const [streamId, flat] of rows) {
      const f: Record<string, string> = {};
      for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
      if (opts.kind && f.kind !== opts.kind) continue;
      if (opts.outcome && f.outcome !== opts.outcome) continue;
      out.push({ streamId, outcome: f.outcome as ArchiveOutcome, event: JSON.parse(f.event ?? '{}') as CanonicalEvent });
    }
    return out;
  }
}
