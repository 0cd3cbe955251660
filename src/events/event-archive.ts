import type { RedisConnection } from '../redis/connect.js';
import type { CanonicalEvent } from './canonical-event.js';
import { groupCommitFor, GroupCommit } from '../redis/group-commit.js';
import { LuaScript } from '../redis/script.js';

/** What the processor made of an archived event. */
export type ArchiveOutcome = 'processed' | 'stale' | 'unchanged' | 'duplicate' | 'corrected' | 'contradicted';

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

// A job retried after a partial run must not archive its event twice: each id is claimed first.
// KEYS[1] the stream, KEYS[2..] the seen-keys; ARGV[1] dedupe window ms, ARGV[2] max length, ARGV[3]
// min id, then 6 fields per entry (id, kind, target, instance, outcome, event JSON), in KEYS order.
// The age trim runs once per call because XADD takes MAXLEN or MINID, not both.
const appendScript = new LuaScript(`
local added = {}
for k = 2, #KEYS do
  local a = 4 + (k - 2) * 6
  if redis.call('SET', KEYS[k], '1', 'NX', 'PX', ARGV[1]) then
    added[#added + 1] = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'id', ARGV[a], 'kind', ARGV[a + 1], 'target', ARGV[a + 2], 'instance', ARGV[a + 3], 'outcome', ARGV[a + 4], 'event', ARGV[a + 5])
  else
    added[#added + 1] = false
  end
end
redis.call('XTRIM', KEYS[1], 'MINID', '~', ARGV[3])
return added`);

type PendingEntry = { event: CanonicalEvent; outcome: ArchiveOutcome };

const groups = new WeakMap<object, Map<string, GroupCommit<PendingEntry, boolean>>>();

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

  /**
   * Appends an event unless an event with the same id was archived within the retention age.
   * Events archived at the same moment by this process share one script call (group commit).
   */
  append(event: CanonicalEvent, outcome: ArchiveOutcome): Promise<boolean> {
    const { redis, key } = this.opts;
    const group = groupCommitFor(
      groups,
      redis,
      `${key}\u0000${this.maxLength}\u0000${this.maxAgeMs}\u0000${this.dedupeWindowMs}`,
      () => new GroupCommit((entries) => this.write(entries)),
    );
    return group.submit({ event, outcome });
  }

  private async write(entries: PendingEntry[]): Promise<boolean[]> {
    const { redis, key } = this.opts;
    const keys = [key];
    const args = [String(this.dedupeWindowMs), String(this.maxLength), `${Math.max(0, Date.now() - this.maxAgeMs)}-0`];
    for (const { event, outcome } of entries) {
      keys.push(`${key}:seen:${event.target}:${event.id}`);
      args.push(event.id, event.kind, event.target, 'instance' in event && event.instance ? event.instance : '', outcome, JSON.stringify(event));
    }
    const added = (await appendScript.run(redis, keys, args)) as (string | null)[];
    return added.map((id) => id !== null);
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
