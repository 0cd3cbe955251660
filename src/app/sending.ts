import { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit-log.js';
import type { Config } from '../config/config.js';
import { queueHistory } from '../config/queue-history.js';
import { Notifier } from '../notify/notifier.js';
import { plainSecretUrlWarnings } from '../notify/receiver-config.js';
import type { RedisConnection } from '../redis/connect.js';
import type { KeySpace } from '../redis/key-space.js';
import { notifierPart, type RuleSet } from '../rules/rule-set.js';
import type { RoleNeeds } from './role-root.js';
import { quietQueue } from './quiet-queue.js';

/** The notifier of a process whose roles send, its queues as /readyz checks them, and their close. */
export interface Sending {
  /** None when no role of the process sends, or no receiver is configured. */
  notifier?: Notifier;
  queues: Queue[];
  close(): Promise<void>;
}

/**
 * The notifier of the roles that send (the worker), built from the rule set's receivers (the
 * config file, REFLEX_NOTIFY, or a defineNotifications file beside the rules). It is a part of
 * the rule set: a reload rebuilds its receivers, and one that adds the first or removes the last
 * is refused. Nothing is sent, and nothing opened, for roles that do not send.
 */
export function openSending(
  needs: RoleNeeds,
  ruleSet: RuleSet | undefined,
  s: { config: Config; redis: RedisConnection; connection: RedisConnection; keys: KeySpace; audit: AuditLog; logger: Logger },
): Sending {
  if (!needs.sends || !ruleSet) return { queues: [], close: async () => undefined };
  const { config, logger } = s;
  const notify = ruleSet.current.notify;
  const notifier =
    notify && new Notifier({ ...notify.settings, redis: s.redis, audit: s.audit, prefix: config.prefix, logger, jobHistory: queueHistory(config) });
  ruleSet.attach(notifierPart(notifier));
  if (!notify || !notifier) return { queues: [], close: async () => undefined };
  logger.info({ receivers: notify.settings.receivers.length, from: notify.from }, 'notifications configured');
  for (const w of plainSecretUrlWarnings(notify.settings.receivers)) logger.warn(w);
  // The notifier's own queues, checked by /readyz: handles of their own, closed with it.
  const queues = [s.keys.notify.flushQueue, s.keys.notify.deliveryQueue].map((name) =>
    quietQueue(new Queue(name, { connection: s.connection, prefix: s.keys.notify.bullPrefix }), logger),
  );
  return {
    notifier,
    queues,
    async close() {
      await notifier.close();
      await Promise.all(queues.map((q) => q.close()));
    },
  };
}
