import type { Queue } from '../redis/commonjs-packages.js';
import type { RedisConnection } from '../redis/connect.js';
import type { KeySpace } from '../redis/key-space.js';
import { lateNamesOf, type LedgerSource } from './schedule-plan.js';
import { SnapshotLedger, type JobReport } from './snapshot-ledger.js';

/** The ledger sources of a read-only plan, one per target, and what closes them. */
export interface PlanSources {
  source(target: string): LedgerSource;
  close(): Promise<void>;
}

/**
 * Where `reflex housekeeping plan` reads ownership from: the same ledger, job states and audit
 * trail a tick reads (tick-runner.ts), with BullMQ and the audit trail loaded at the first entry
 * that needs them. Most entries are settled (their snapshot made and listed), so most plans read
 * neither, and a command a person waits for does not load 200 modules it does not use.
 */
export function planSources(redis: RedisConnection, keys: KeySpace): PlanSources {
  const ledger = new SnapshotLedger(redis, keys.schedules);
  let queue: Queue | undefined;
  let jobStates: Promise<LedgerSource['jobState']> | undefined;
  let lateNames: Promise<NonNullable<LedgerSource['lateNames']>> | undefined;
  const jobState = async (jobId: string): Promise<JobReport> => {
    jobStates ??= (async () => {
      const [{ Queue }, { jobStateOf }] = await Promise.all([import('../redis/commonjs-packages.js'), import('./job-state.js')]);
      queue = new Queue(keys.actionsQueue, { connection: redis, prefix: keys.bullPrefix });
      return jobStateOf(queue);
    })();
    return (await jobStates)(jobId);
  };
  const late: NonNullable<LedgerSource['lateNames']> = async (...args) => {
    lateNames ??= import('../audit/audit-log.js').then(({ AuditLog }) => lateNamesOf(new AuditLog(redis, keys.audit)));
    return (await lateNames)(...args);
  };
  return {
    source: (target) => ({ ledger, target, jobState, lateNames: late }),
    async close() {
      await queue?.close();
    },
  };
}
