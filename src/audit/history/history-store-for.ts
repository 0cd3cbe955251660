import { join, resolve } from 'node:path';
import type { Config } from '../../config/config.js';
import { ReflexError } from '../../errors/reflex-error.js';
import { FileHistoryStore } from './file-history-store.js';
import type { HistoryStore } from './history-store.js';
import { PostgresHistoryStore } from './postgres-history-store.js';

/**
 * The history store the configuration names, not yet opened; undefined for `none`. A `files`
 * store keeps each prefix in a sub-folder of `dir`, within `maxBytes` and `maxAgeMs`; a `postgres`
 * store takes its URL from the environment variable `postgresUrlEnv` names.
 */
export function historyStoreFor(
  history: Config['history'],
  prefix: string,
  streamKey: string,
  env: NodeJS.ProcessEnv = process.env,
): HistoryStore | undefined {
  switch (history.store) {
    case 'none':
      return undefined;
    case 'files':
      return new FileHistoryStore(join(resolve(history.dir), prefix), {
        segmentMaxBytes: history.segmentMaxBytes,
        maxBytes: history.maxBytes,
        maxAgeMs: history.maxAgeMs,
      });
    case 'postgres': {
      const url = env[history.postgresUrlEnv];
      if (!url)
        throw new ReflexError(
          'CONFIG_INVALID',
          `history.store is postgres but the environment variable ${history.postgresUrlEnv} (history.postgresUrlEnv) is not set: set it to postgres://user:password@host:5432/database (the packaged service reads it from /etc/reflex/env; in a shell: set -a; . /etc/reflex/env; set +a)`,
        );
      return new PostgresHistoryStore(url, streamKey);
    }
  }
}
