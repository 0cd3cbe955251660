import type { RedisConnection } from '../redis/connect.js';
import type { AuditRecord } from '../audit/audit-log.js';

/** Follows an audit stream from its start and hands each record over as it is appended. */
export class AuditFeed {
  private stopped = false;
  private lastId = '0';

  constructor(
    private readonly redis: RedisConnection,
    private readonly key: string,
    private readonly onRecord: (record: AuditRecord & { id: string }) => void,
  ) {}

  /** Reads until `stop()`; resolves then. */
  async run(): Promise<void> {
    while (!this.stopped) {
      const res = (await this.redis.xread('COUNT', 500, 'BLOCK', 250, 'STREAMS', this.key, this.lastId)) as [string, [string, string[]][]][] | null;
      for (const [, entries] of res ?? []) {
        for (const [id, fields] of entries) {
          this.lastId = id;
          const json = fields[fields.indexOf('json') + 1];
          if (json) this.onRecord({ ...(JSON.parse(json) as AuditRecord), id });
        }
      }
    }
  }

  stop(): void {
    this.stopped = true;
  }
}

const colours = { event: 36, decision: 33, action: 35, call: 34, outcome: 32, alert: 31, rejected: 31 } as Record<string, number>;

/** One terminal line for an audit record: time, kind, instance, rule, summary. */
export function formatAuditLine(r: AuditRecord, colour: boolean): string {
  const time = r.at.slice(11, 23);
  const kind = r.type.toUpperCase().padEnd(12);
  const who = (r.instance ?? '').padEnd(8);
  const rule = r.rule ? `${r.rule}: ` : '';
  const failed = r.type === 'outcome' && (r as { result?: string }).result === 'failed';
  const c = failed ? 31 : (colours[r.type] ?? 0);
  const tag = colour ? `\x1b[${c}m${kind}\x1b[0m` : kind;
  return `${time}  ${tag} ${who} ${rule}${r.summary}`;
}
