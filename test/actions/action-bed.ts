import { Queue } from 'bullmq';
import { pino } from 'pino';
import type { ActionRegistry } from '../../src/actions/registry.js';
import { AuditLog, type StoredAuditRecord } from '../../src/audit/audit-log.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { StateTracker } from '../../src/events/state-tracker.js';
import { duplicateConnection, type RedisConnection } from '../../src/redis/connect.js';
import { keySpace, type KeySpace } from '../../src/redis/key-space.js';
import { actionJobOptions, type ActionJobInput } from '../../src/actions/action-job.js';
import { startRemediation } from '../../src/remediation/remediation.js';
import { RuleEngine } from '../../src/rules/engine.js';
import type { Rule } from '../../src/rules/rule.js';
import { Silences } from '../../src/silences/silences.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { queueIdle } from '../support/settled.js';
import { until } from '../support/wait.js';

/**
 * The remediation core of one replica on real Redis and the simulator, with a given rule set and
 * action registry: action jobs are added to its queue and run by its worker, through the executor
 * with the one retry policy, as `reflex run` runs them.
 */
export interface ActionBed {
  redis: RedisConnection;
  keys: KeySpace;
  sim: RunningSimulator;
  client: InstanceClient;
  audit: AuditLog;
  /** Queues an action job (attempts default to the retry policy's). */
  queue(
    job: Omit<ActionJobInput, 'target' | 'project' | 'correlationId'> & { correlationId?: string },
    opts?: { attempts?: number },
  ): Promise<string>;
  /** Polls the audit log of the job's incident until `done` says it is complete. */
  waitFor(correlationId: string, done: (records: StoredAuditRecord[]) => boolean, timeoutMs?: number): Promise<StoredAuditRecord[]>;
  /** Waits until no action job is waiting, delayed or running: nothing is left that could audit more. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

export async function startActionBed(
  o: { rules?: Rule[] | (() => RuleEngine); actions?: ActionRegistry | (() => ActionRegistry); instances?: string[] } = {},
): Promise<ActionBed> {
  const redis = redisClient();
  const prefix = uniquePrefix('act');
  const keys = keySpace(prefix);
  const sim = await startSimulator({ instances: 0, timings: { taskMs: 10 } });
  for (const name of o.instances ?? []) sim.controls.addInstance({ name, status: 'Running' });
  const client = new InstanceClient(parseTarget(`unix://${sim.socketPath}`));
  const connection = duplicateConnection(redis);
  const queueOpts = { connection, prefix: keys.bullPrefix };
  const actionsQueue = new Queue(keys.actionsQueue, queueOpts);
  const eventsQueue = new Queue(keys.eventsQueue, queueOpts);
  const audit = new AuditLog(redis, keys.audit);
  const remediation = startRemediation({
    redis,
    connection,
    keys,
    client: () => client,
    tracker: new StateTracker(redis, keys),
    audit,
    silences: new Silences(redis, keys.silences),
    engine: typeof o.rules === 'function' ? o.rules : new RuleEngine(o.rules ?? []),
    eventsQueue,
    actionsQueue,
    logger: pino({ level: 'silent' }),
    ...(o.actions ? { actions: o.actions } : {}),
  });
  let n = 0;
  return {
    redis,
    keys,
    sim,
    client,
    audit,
    async queue(job, opts = {}) {
      const correlationId = job.correlationId ?? `incident-${++n}-${Date.now()}`;
      const jobId = `${job.rule}:${correlationId}:0`;
      await actionsQueue.add(
        job.action,
        { ...job, target: 't', project: 'default', correlationId } satisfies ActionJobInput,
        actionJobOptions({ jobId, attempts: opts.attempts }),
      );
      return correlationId;
    },
    waitFor(correlationId, done, timeoutMs = 20_000) {
      return until(
        `the audit of ${correlationId}`,
        async () => {
          const records = (await audit.read({})).filter((r) => r.correlationId === correlationId);
          if (done(records)) return records;
          throw new Error(`incomplete: ${records.map((r) => `${r.type}: ${r.summary}`).join(' | ')}`);
        },
        timeoutMs,
        50,
      );
    },
    idle: () => queueIdle(redisUrl(), prefix, 'actionsQueue'),
    async stop() {
      await remediation.stop();
      await Promise.all([actionsQueue.close(), eventsQueue.close()]);
      connection.disconnect();
      await client.close();
      await sim.stop();
      redis.disconnect();
    },
  };
}
