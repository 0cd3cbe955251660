import { constants, existsSync, statSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { dirname } from 'node:path';
import { keySpace } from '../redis/key-space.js';
import type { Config } from '../config/config.js';
import { FileHistoryStore } from '../audit/history/file-history-store.js';
import { historyStoreFor } from '../audit/history/history-store-for.js';
import type { DoctorCheck } from './doctor-check.js';

/**
 * The audit history store: a warning when there is none (the trail lives only in Redis, bounded by
 * retention), otherwise whether it can be read and written and how far it holds records. A files
 * store is only looked at, never created: the doctor run as root must not leave a folder that the
 * service's user cannot write.
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
      if (store instanceof FileHistoryStore) return await checkFolder(store);
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

/** A files store's folder: how far it holds records, or, not there yet, whether this user could create it. */
async function checkFolder(store: FileHistoryStore): Promise<DoctorCheck> {
  const writable = (path: string) =>
    access(path, constants.W_OK | constants.X_OK).then(
      () => true,
      () => false,
    );
  if (existsSync(store.dir)) {
    const head = await store.head();
    const holds = head ? `holds records up to ${head.id}` : 'holds no record yet';
    if (await writable(store.dir)) return { name: 'history', ok: true, detail: `files store ${store.dir} ${holds}` };
    return {
      name: 'history',
      ok: true,
      warning: true,
      detail: `files store ${store.dir} ${holds}, but this user cannot write it`,
      fix: 'fine when reflex run runs as another user (the service runs as reflex): run the doctor as that user to check it writes',
    };
  }
  let parent = dirname(store.dir);
  while (!existsSync(parent) && dirname(parent) !== parent) parent = dirname(parent);
  if (!statSync(parent).isDirectory()) throw new Error(`${parent} is not a folder`);
  if (await writable(parent))
    return { name: 'history', ok: true, detail: `files store ${store.dir} holds no record yet (reflex run creates the folder)` };
  return {
    name: 'history',
    ok: true,
    warning: true,
    detail: `files store ${store.dir} does not exist, and this user cannot create it in ${parent}`,
    fix: `fine when reflex run runs as a user that can (the service's state directory); otherwise make ${parent} writable by Reflex`,
  };
}
