import { keySpace } from '../redis/key-space.js';
import type { Config } from '../config/config.js';
import { historyStoreFor } from '../audit/history/history-store-for.js';
import type { DoctorCheck } from './doctor-check.js';

/**
 * The audit history store: a warning when there is none (the trail lives only in Redis, bounded by
 * retention), otherwise whether it opens (a files folder that can be created and written, a
 * database that answers and takes the schema) and how far it holds records.
 */
export async function checkHistory(config: Config): Promise<DoctorCheck> {
  if (config.history.store === 'none') {
    return {
      name: 'history',
      ok: true,
      warning: true,
      detail: 'history.store is none: audit records live only in Redis and are gone once retention (auditMaxRecords, auditMaxAgeMs) trims them',
      fix: 'keep them beyond Redis: history.store files (a persistent, backed-up folder in history.dir) or postgres (docs/operations.md, Audit history)',
    };
  }
  try {
    const store = historyStoreFor(config.history, config.prefix, keySpace(config.prefix).audit)!;
    try {
      await store.open();
      const head = await store.head();
      return { name: 'history', ok: true, detail: `${store.kind} store opens; ${head ? `holds records up to ${head.id}` : 'holds no record yet'}` };
    } finally {
      await store.close();
    }
  } catch (err) {
    return {
      name: 'history',
      ok: false,
      detail: `the ${config.history.store} history store does not open: ${(err as Error).message}`,
      fix:
        config.history.store === 'files' ? `make ${config.history.dir} writable by Reflex` : `check the database at ${config.history.postgresUrlEnv}`,
    };
  }
}
