import { existsSync } from 'node:fs';
import { AuditLog } from '../audit/audit-log.js';
import { historyStoreFor } from '../audit/history/history-store-for.js';
import { FileHistoryStore } from '../audit/history/file-history-store.js';
import type { Config } from '../config/config.js';
import type { RedisConnection } from '../redis/connect.js';
import { keySpace } from '../redis/key-space.js';

/** The audit trail as a command reads it: across the configured history store and Redis. */
export interface AuditReading {
  log: AuditLog;
  /** Closes the history store (the Redis connection is the caller's). */
  close(): Promise<void>;
}

/**
 * Opens the audit trail of `config` for reading: the history store its `history` section names (as
 * `reflex run` ships to it) and Redis. When there is no store to read (`history.store: none`, or a
 * files store whose folder does not exist on this host), says so in one line on stderr, so that an
 * empty or short answer is never mistaken for the whole trail.
 */
export function openAuditReading(config: Config, redis: RedisConnection, configFile: string | undefined): AuditReading {
  const key = keySpace(config.prefix).audit;
  const store = historyStoreFor(config.history, config.prefix, key);
  const where = configFile ? `history in ${configFile}` : 'history in the config file (--config, REFLEX_CONFIG, /etc/reflex/config.yaml)';
  if (!store) process.stderr.write(`reflex: history.store is none: only the audit records Redis still holds are shown (set ${where} to read more)\n`);
  const missing = store instanceof FileHistoryStore && !existsSync(store.dir);
  if (missing)
    process.stderr.write(
      `reflex: no files history store at ${store.dir}: only the audit records Redis still holds are shown (history.dir names the folder reflex run writes; set ${where})\n`,
    );
  const history = missing ? undefined : store;
  return {
    log: new AuditLog(redis, key, { history }),
    close: async () => void (await store?.close()),
  };
}
