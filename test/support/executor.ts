import { Queue } from 'bullmq';
import { duplicateConnection, type RedisConnection } from '../../src/redis/connect.js';
import { pino } from 'pino';
import type { Alerts } from '../../src/alerts/alerts.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { InstanceClient } from '../../src/client/client.js';
import { OwnOperations } from '../../src/events/own-operations.js';
import { StateTracker } from '../../src/events/state-tracker.js';
import type { KeySpace } from '../../src/redis/key-space.js';
import { TokenLock } from '../../src/redis/token-lock.js';
import { ActionExecutor } from '../../src/remediation/action-executor.js';
import { PendingActions } from '../../src/remediation/pending-actions.js';
import { Recheck } from '../../src/remediation/recheck.js';
import { RuleEngine } from '../../src/rules/engine.js';
import type { Rule } from '../../src/rules/rule.js';
import { Silences } from '../../src/silences/silences.js';

/** An action executor wired on real Redis for tests that run jobs by hand; `close` releases its queue. */
export function testExecutor(
  redis: RedisConnection,
  keys: KeySpace,
  client: InstanceClient,
  rules: Rule[] = [],
  parts: { alerts?: Alerts } = {},
): { executor: ActionExecutor; close: () => Promise<void> } {
  const queue = new Queue(keys.actionsQueue, { connection: duplicateConnection(redis), prefix: keys.bullPrefix });
  const tracker = new StateTracker(redis, keys);
  const engine = new RuleEngine(rules);
  const ownOperations = new OwnOperations(redis, keys);
  const recheck = new Recheck({
    client: () => client,
    tracker,
    silences: new Silences(redis, keys.silences),
    engine: () => engine,
    redis,
    keys,
    ownOperations,
  });
  const executor = new ActionExecutor({
    client: () => client,
    audit: new AuditLog(redis, keys.audit),
    ownOperations,
    locks: new TokenLock(redis),
    recheck,
    pending: new PendingActions(redis, keys, queue, { audit: new AuditLog(redis, keys.audit) }),
    keys,
    redis,
    logger: pino({ level: 'silent' }),
    tracker,
    ...(parts.alerts ? { alerts: parts.alerts } : {}),
  });
  return { executor, close: async () => void (await queue.close()) };
}
