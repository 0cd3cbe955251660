import { Queue } from 'bullmq';
import { duplicateConnection, type RedisConnection } from '../../src/redis/connect.js';
import { pino } from 'pino';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { InstanceClient } from '../../src/client/client.js';
import { StateTracker } from '../../src/events/state-tracker.js';
import type { KeySpace } from '../../src/redis/key-space.js';
import { startRemediation, type RemediationOptions } from '../../src/remediation/remediation.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { Silences } from '../../src/silences/silences.js';

/**
 * The remediation core of one replica with no rules, as the scheduler tests need it: an actions
 * queue to hand tick jobs to, the workers that run them through the executor, and the events queue
 * emitted events go to. `opts` passes the action concurrency, metrics and alerts through.
 */
export function startActionRunner(
  redis: RedisConnection,
  keys: KeySpace,
  client: (target: string) => InstanceClient,
  opts: Pick<RemediationOptions, 'actionConcurrency' | 'metrics' | 'alerts'> = {},
): { actions: Queue; events: Queue; stop: () => Promise<void> } {
  const connection = duplicateConnection(redis);
  const queueOpts = { connection, prefix: keys.bullPrefix };
  const actions = new Queue(keys.actionsQueue, queueOpts);
  const events = new Queue(keys.eventsQueue, queueOpts);
  const remediation = startRemediation({
    redis,
    connection,
    keys,
    client,
    tracker: new StateTracker(redis, keys),
    audit: new AuditLog(redis, keys.audit),
    silences: new Silences(redis, keys.silences),
    engine: new RuleEngine([]),
    eventsQueue: events,
    actionsQueue: actions,
    logger: pino({ level: 'silent' }),
    ...opts,
  });
  return {
    actions,
    events,
    async stop() {
      await remediation.stop();
      await Promise.all([actions.close(), events.close()]);
      connection.disconnect();
    },
  };
}
