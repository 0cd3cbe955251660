import { pino } from 'pino';
import { AuditLog } from '../../src/audit/audit-log.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import type { RedisConnection } from '../../src/redis/connect.js';
import { keySpace, type KeySpace } from '../../src/redis/key-space.js';
import type { Schedule, ScheduleDefinition } from '../../src/schedules/schedule.js';
import { startScheduler, type RunningScheduler, type SchedulerOptions } from '../../src/schedules/scheduler.js';
import type { SeedInstance } from '../../src/simulator/controls.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { startActionRunner } from './action-runner.js';
import { redisClient, uniquePrefix } from './redis.js';

/** The simulator and one replica's housekeeping parts on a fresh prefix: see {@link startScheduleBed}. */
export interface ScheduleBed {
  sim: RunningSimulator;
  redis: RedisConnection;
  prefix: string;
  keys: KeySpace;
  /** The simulator's socket as a target URL. */
  target: string;
  client: InstanceClient;
  audit: AuditLog;
  /** The action runner the ticks' jobs go to (its `actions` queue). */
  runner: ReturnType<typeof startActionRunner>;
  /** Starts a scheduler on the bed's parts with `schedules` (and `more` options over them); stopped with the bed. */
  scheduler(schedules: Schedule[], more?: Partial<SchedulerOptions>): Promise<RunningScheduler>;
  /** Stops the schedulers, the runner, the client, the connection and the simulator. */
  stop(): Promise<void>;
}

/**
 * Starts the simulator (tasks of `taskMs`, default 5 ms, with `instances` added) and, on a fresh
 * prefix labelled `label`, what a scheduler needs of one replica: a Redis connection, an API
 * client, the action runner and the audit log. The scheduler itself is started by the test
 * ({@link ScheduleBed.scheduler}), once its instances and faults are set.
 */
export async function startScheduleBed(label: string, o: { taskMs?: number; instances?: SeedInstance[] } = {}): Promise<ScheduleBed> {
  const sim = await startSimulator({ instances: 0, timings: { taskMs: o.taskMs ?? 5 } });
  for (const instance of o.instances ?? []) sim.controls.addInstance(instance);
  const redis = redisClient();
  const prefix = uniquePrefix(label);
  const keys = keySpace(prefix);
  const target = `unix://${sim.socketPath}`;
  const client = new InstanceClient(parseTarget(target));
  const runner = startActionRunner(redis, keys, () => client);
  const audit = new AuditLog(redis, keys.audit);
  const schedulers: RunningScheduler[] = [];
  return {
    sim,
    redis,
    prefix,
    keys,
    target,
    client,
    audit,
    runner,
    async scheduler(schedules, more = {}) {
      const s = await startScheduler({
        target,
        redis,
        client,
        audit,
        keys,
        logger: pino({ level: 'silent' }),
        schedules,
        actions: runner.actions,
        ...more,
      });
      schedulers.push(s);
      return s;
    },
    async stop() {
      for (const s of schedulers.splice(0).reverse()) await s.stop().catch(() => undefined);
      await runner.stop().catch(() => undefined);
      await client.close().catch(() => undefined);
      redis.disconnect();
      await sim.stop();
    },
  };
}

/** A schedule definition that snapshots every instance with `user.backup=true` every `every`, named by `namePattern`, and keeps the last `keepLast`. */
export function backupEvery(name: string, every: string, namePattern: string, keepLast: number): ScheduleDefinition {
  return {
    name,
    every,
    scope: { filter: 'config.user.backup eq true' },
    tasks: [
      { task: 'snapshot', namePattern },
      { task: 'retention', keepLast },
    ],
  };
}
