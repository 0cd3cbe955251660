import { Cluster } from 'ioredis';
import { AuditLog } from '../../src/audit/audit-log.js';
import { redisFromUrl, type RedisConnection } from '../../src/redis/connect.js';
import { expect } from 'vitest';
import { keySpace } from '../../src/redis/key-space.js';
import { eventOf, waitForAudit, type auditTrail } from '../support/audit-trail.js';
import { until } from '../support/wait.js';

/**
 * Readings of an instance's audit trail shared by the remediation acceptance tests. The trail is
 * what `reflex audit --json --instance NAME` prints (test/support/audit-trail.ts).
 */

/** One record as the trail returns it (typed through the support helper, not Reflex's source, which is moving). */
export type StoredAuditRecord = Awaited<ReturnType<typeof auditTrail>>[number];
type AuditRecord = StoredAuditRecord & Record<string, unknown>;

/** Milliseconds since the epoch at which the record was appended (same host clock as the test). */
export function appendedAt(r: StoredAuditRecord): number {
  return Date.parse(r.at);
}

/** The crash incidents (event records with intent `unrequested`), oldest first. */
export function crashEvents(trail: StoredAuditRecord[]): StoredAuditRecord[] {
  return trail.filter((r) => r.type === 'event' && /\bunrequested\b/.test(r.summary));
}

/** Records that are about one incident: its correlation id, or a record naming it or one of its jobs. */
export function aboutIncident(trail: StoredAuditRecord[], correlationId: string): StoredAuditRecord[] {
  const jobIds = new Set(
    trail
      .filter((r) => r.correlationId === correlationId && typeof (r as AuditRecord).jobId === 'string')
      .map((r) => (r as AuditRecord).jobId as string),
  );
  return trail.filter((r) => {
    if (r.correlationId === correlationId || r.summary.includes(correlationId)) return true;
    const jobId = (r as AuditRecord).jobId;
    return typeof jobId === 'string' && jobIds.has(jobId);
  });
}

/** Start calls Reflex made (call records of a start, dry-runs excluded) appended at or after `sinceMs`. */
export function startCallsSince(trail: StoredAuditRecord[], sinceMs = 0): StoredAuditRecord[] {
  return trail.filter((r) => r.type === 'call' && /\bstart\b/.test(r.summary) && !/dry-run/.test(r.summary) && appendedAt(r) >= sinceMs);
}

/** One decision record per incident and rule: a decision recorded twice means an event was processed twice. */
export function expectOneDecisionPerRule(trail: StoredAuditRecord[]): void {
  const seen = new Map<string, string[]>();
  for (const r of trail.filter((x) => x.type === 'decision')) {
    const key = `${r.correlationId} ${r.rule ?? '?'}`;
    seen.set(key, [...(seen.get(key) ?? []), r.summary]);
  }
  const duplicated = [...seen].filter(([, summaries]) => summaries.length > 1).map(([key, summaries]) => `${key}: ${summaries.join(' | ')}`);
  expect(duplicated, 'decision records recorded more than once for the same incident and rule').toEqual([]);
}

/** The trail, one line a record, for assertion messages. */
export function show(trail: StoredAuditRecord[]): string {
  return trail.map((r) => `${r.at} ${r.correlationId.slice(0, 12)} ${r.type}${r.rule ? `[${r.rule}]` : ''}: ${r.summary}`).join('\n');
}

/**
 * Waits until Reflex knows the instance is Running: its state tracker says so (an instance running
 * before Reflex started is read by the start-up resync as a baseline, which is not audited), or an
 * event record of the trail has it reach Running.
 */
export async function runningTracked(redisUrl: string, prefix: string, name: string, timeoutMs = 15_000): Promise<void> {
  const redis = redisFromUrl(redisUrl);
  const log = new AuditLog(redis, keySpace(prefix).audit);
  try {
    await until(
      `Reflex tracking ${name} as Running`,
      async () =>
        (await trackedStatuses(redis, prefix, name)).includes(103) ||
        (await log.read({ instance: name })).some((r) => r.type === 'event' && (eventOf(r) as { to?: number } | undefined)?.to === 103),
      timeoutMs,
      100,
    );
  } finally {
    redis.disconnect();
  }
}

/** The statuses every target's state tracker of `prefix` holds for `name` (any project). */
async function trackedStatuses(redis: RedisConnection, prefix: string, name: string): Promise<number[]> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const keys = (await Promise.all(nodes.map((n) => n.keys(`*${prefix}*:state`)))).flat();
  const values = await Promise.all(keys.map(async (k) => Object.entries(await redis.hgetall(k))));
  return values
    .flat()
    .filter(([field]) => field.endsWith(`/${name}`))
    .map(([, raw]) => (JSON.parse(raw) as { status: number }).status);
}
