import { execFileSync } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, expect, it } from 'vitest';
import { slowStopLogMs } from '../../src/app/role-root.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { redisFromUrl } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { defineSchedule } from '../../src/schedules/schedule.js';
import { startScheduler } from '../../src/schedules/scheduler.js';
import { startSimulator } from '../../src/simulator/simulator.js';
import { startActionRunner } from '../support/action-runner.js';
import { ownRedis, type OwnRedis } from '../support/own-redis.js';
import { uniquePrefix } from '../support/redis.js';
import { startStack } from '../support/stack.js';
import { until } from '../support/wait.js';

/** Each test's own Redis, all stopped and removed at the end (a test restarts its Redis, so it is left running). */
const servers: OwnRedis[] = [];
afterAll(async () => {
  for (const server of servers) {
    await server.stop().catch(() => undefined);
    server.remove();
  }
});

async function ownServer(): Promise<OwnRedis> {
  const server = await ownRedis();
  servers.push(server);
  return server;
}

it('a queue worker stopped during a Redis outage stops once Redis is back (a connection told to end while it waited to reconnect never said it had ended)', async () => {
  const redis = await ownServer();
  const sim = await startSimulator({ instances: 0 });
  const conn = redisFromUrl(redis.url);
  // The outage is the test's own doing: its errors are not news.
  conn.on('error', () => undefined);
  const keys = keySpace(uniquePrefix('stop-outage'));
  const target = `unix://${sim.socketPath}`;
  const client = new InstanceClient(parseTarget(target));
  const runner = startActionRunner(conn, keys, () => client);
  for (const queue of [runner.actions, runner.events]) queue.on('error', () => undefined);
  const scheduler = await startScheduler({
    target,
    redis: conn,
    client,
    audit: new AuditLog(conn, keys.audit),
    keys,
    logger: pino({ level: 'silent' }),
    schedules: [defineSchedule({ name: 'snap', every: '1h', scope: { filter: 'config.user.backup eq true' }, tasks: [{ task: 'snapshot' }] })],
    actions: runner.actions,
  });
  try {
    // Both workers wait for a job on their blocking connections.
    const blocked = () => execFileSync('redis-cli', ['-u', redis.url, 'client', 'list'], { encoding: 'utf8' }).split('cmd=bzpopmin').length - 1;
    await until('both workers blocked on their queues', () => blocked() >= 2, 10_000);
    let reconnects = 0;
    conn.on('reconnecting', () => reconnects++);
    await redis.stop();
    // Every connection now waits between its attempts to reconnect, as the workers' do.
    await until('the connection tried to reconnect 5 times', () => reconnects >= 5, 10_000);
    const stopping = Promise.all([scheduler.stop(), runner.stop()]);
    await redis.start();
    const stopped = await Promise.race([stopping.then(() => true), delay(20_000, false, { ref: false })]);
    expect(stopped, 'stopped within 20 s of Redis coming back').toBe(true);
  } finally {
    await client.close();
    conn.disconnect();
    await sim.stop();
  }
});

it('says every 5 s which part of a stopping Reflex still waits while Redis is down, and stops once Redis is back', async () => {
  const redis = await ownServer();
  const warnings: Record<string, unknown>[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line) as Record<string, unknown>) });
  const stack = await startStack({ redisUrl: redis.url, label: 'stop-outage', logger, config: { httpPort: 0 } });
  await redis.stop();
  const stopping = stack.stop();
  const waiting = () => warnings.filter((w) => String(w.msg).includes('has not stopped yet'));
  await until('a part logged as still stopping', () => waiting().length >= 1, 3 * slowStopLogMs);
  // Named, with how long it has waited; logged again at each interval until it stops.
  const [line] = waiting();
  expect(line!.part).toEqual(expect.any(String));
  expect(line!.msg).toBe(`stopping: ${String(line!.part)} has not stopped yet (waiting on Redis, or on its work in flight)`);
  expect(line!.waitedMs).toBeGreaterThanOrEqual(slowStopLogMs);
  await redis.start();
  const stopped = await Promise.race([stopping.then(() => true), delay(20_000, false, { ref: false })]);
  expect(stopped, 'stopped within 20 s of Redis coming back').toBe(true);
});
