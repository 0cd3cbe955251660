import type { StoredAuditRecord } from '../../src/audit/audit-log.js';
import { runReflex } from './reflex-process.js';

/** Reads the audit trail through the CLI, exactly as an operator would: `reflex audit --json --instance NAME`. */
export async function auditTrail(redisUrl: string, prefix: string, instance: string): Promise<StoredAuditRecord[]> {
  const res = await runReflex(['audit', '--json', '--instance', instance, '--redis', redisUrl, '--prefix', prefix]);
  if (res.code !== 0) throw new Error(`reflex audit failed (${res.code}): ${res.stderr}`);
  return res.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as StoredAuditRecord);
}

/** Polls the audit trail until `done` says it is complete. */
export async function waitForAudit(
  redisUrl: string,
  prefix: string,
  instance: string,
  done: (records: StoredAuditRecord[]) => boolean,
  timeoutMs = 15_000,
): Promise<StoredAuditRecord[]> {
  const until = Date.now() + timeoutMs;
  let records: StoredAuditRecord[] = [];
  while (Date.now() < until) {
    records = await auditTrail(redisUrl, prefix, instance);
    if (done(records)) return records;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`audit trail of ${instance} incomplete after ${timeoutMs} ms: ${records.map((r) => `${r.type}: ${r.summary}`).join(' | ')}`);
}
