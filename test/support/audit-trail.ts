import { AuditLog, type StoredAuditRecord } from '../../src/audit/audit-log.js';
import { keySpace } from '../../src/redis/key-space.js';
import { runReflex } from './reflex-process.js';
import { redisFromUrl } from '../../src/redis/connect.js';
import { until } from './wait.js';

/** Reads the audit trail through the CLI, exactly as an operator would: `reflex audit --json --instance NAME`. */
export async function auditTrail(redisUrl: string, prefix: string, instance: string): Promise<StoredAuditRecord[]> {
  const res = await runReflex(['audit', '--json', '--instance', instance, '--redis', redisUrl, '--prefix', prefix]);
  if (res.code !== 0) throw new Error(`reflex audit failed (${res.code}): ${res.stderr}`);
  return res.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as StoredAuditRecord);
}

/** Polls the audit trail (straight from Redis, cheap) until `done` says it is complete. */
export async function waitForAudit(
  redisUrl: string,
  prefix: string,
  instance: string,
  done: (records: StoredAuditRecord[]) => boolean,
  timeoutMs = 30_000,
): Promise<StoredAuditRecord[]> {
  const redis = redisFromUrl(redisUrl);
  const log = new AuditLog(redis, keySpace(prefix).audit);
  try {
    return await until(
      `the audit trail of ${instance}`,
      async () => {
        const records = await log.read({ instance });
        if (done(records)) return records;
        throw new Error(`incomplete: ${records.map((r) => `${r.type}: ${r.summary}`).join(' | ')}`);
      },
      timeoutMs,
      100,
    );
  } finally {
    redis.disconnect();
  }
}

/** A prefix's whole audit trail, every instance, straight from Redis. */
export async function fullTrail(redisUrl: string, prefix: string): Promise<StoredAuditRecord[]> {
  const redis = redisFromUrl(redisUrl);
  try {
    return await new AuditLog(redis, keySpace(prefix).audit).read({});
  } finally {
    redis.disconnect();
  }
}

/** The event an `event` record carries (its lifecycle action, member and intent), if any. */
export const eventOf = (r: StoredAuditRecord) => (r as { event?: { action?: string; location?: string; intent?: string } }).event;

/** Records one per line (`type instance member: summary`), for an assertion's message. */
export const trailLines = (rs: StoredAuditRecord[]) =>
  rs.map((r) => `${r.type} ${r.instance ?? ''} ${eventOf(r)?.location ?? ''}: ${r.summary}`).join('\n');
