import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startReflex, type ReflexHandle } from '../../src/app/start-reflex.js';
import { parseConfig, type ConfigInput } from '../../src/config/config.js';
import type { RedisConnection } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { freePort } from '../support/free-port.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { until } from '../support/wait.js';
import { rulesFolder, startRule } from '../rules/support/reload-bed.js';

/**
 * Each role runs its own composition root, and /readyz checks what that root runs: the subscriber
 * its reader and the events queue it feeds, the worker its workers and the events and actions
 * queues it consumes, the scheduler the actions queue it feeds and its schedules queue; a process
 * of every role checks each queue once. In-process Reflex on the simulator, real Redis.
 */
type Report = { status: string; checks: Record<string, { ok: boolean; detail: string }> };

let sim: RunningSimulator;
let redis: RedisConnection;
const running: ReflexHandle[] = [];

beforeAll(async () => {
  sim = await startSimulator({ instances: 0 });
  sim.controls.addInstance({ name: 'web-1', config: { 'user.reflex.autorestart': 'true' } });
  redis = redisClient();
});

afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

afterAll(async () => {
  redis?.disconnect();
  await sim?.stop();
});

async function start(role: ConfigInput['role'], prefix = uniquePrefix('roots'), rulesDir = 'test/fixtures/rules-crash-loop'): Promise<ReflexHandle> {
  const config = parseConfig({
    target: `unix://${sim.socketPath}`,
    redisUrl: redisUrl(),
    rulesDir,
    prefix,
    role,
    resyncIntervalMs: 0,
    leaseTtlMs: 600,
    logLevel: 'silent',
    httpPort: await freePort(),
  });
  const reflex = await startReflex(config, pino({ level: 'silent' }));
  running.push(reflex);
  return reflex;
}

async function checksOf(reflex: ReflexHandle): Promise<string[]> {
  const res = await fetch(`${reflex.http!.url}/readyz`);
  return Object.keys(((await res.json()) as Report).checks).sort();
}

describe('a composition root per role (simulator, real Redis)', () => {
  it('a subscriber reads the target and holds no rules; /readyz checks its reader and the events queue it feeds', async () => {
    const reflex = await start('subscriber');
    expect(reflex.readers.map((r) => r.id)).toEqual([reflex.target]);
    expect(reflex.ruleSet).toBeUndefined();
    expect(reflex.reload).toBeUndefined();
    await until('the lease held and the stream open', () => reflex.lease?.isHeld && reflex.subscriber?.connected);
    expect(await checksOf(reflex)).toEqual(['queue:events', 'redis', 'redis-writes', 'subscriber']);
  });

  it('a worker reads no stream; /readyz checks its workers, the events and actions queues it consumes and the history store it ships to', async () => {
    const reflex = await start('worker');
    expect(reflex.readers).toEqual([]);
    expect(reflex.subscriber).toBeUndefined();
    expect(reflex.reload).toBeTypeOf('function');
    expect(await checksOf(reflex)).toEqual(['history', 'queue:actions', 'queue:events', 'redis', 'redis-writes', 'workers']);
  });

  it('a scheduler reads no stream and runs no worker; /readyz checks the actions queue it feeds and its schedules queue', async () => {
    const reflex = await start('scheduler');
    expect(reflex.readers).toEqual([]);
    expect(reflex.ruleSet).toBeDefined();
    expect(await checksOf(reflex)).toEqual(['queue:actions', 'queue:schedules', 'redis', 'redis-writes']);
  });

  it('a process of every role runs the three roots and checks each queue once', async () => {
    const reflex = await start('all');
    expect(reflex.readers).toHaveLength(1);
    expect(await checksOf(reflex)).toEqual([
      'history',
      'queue:actions',
      'queue:events',
      'queue:schedules',
      'redis',
      'redis-writes',
      'subscriber',
      'workers',
    ]);
  });

  it('the role that sends opens the notifier: a worker with receivers checks its queues and keeps notifying across reloads; a scheduler or subscriber opens none', async () => {
    const receivers = `import { defineNotifications } from 'reflex-lxd';
export default defineNotifications({ receivers: [{ kind: 'slack', name: 'ops', url: 'http://127.0.0.1:9/hook' }], route: { receiver: 'ops' } });
`;
    const folder = rulesFolder({ 'heal.ts': startRule('heal'), 'receivers.ts': receivers });
    const prefix = uniquePrefix('roots');
    const worker = await start('worker', prefix, folder.dir);
    const scheduler = await start('scheduler', prefix, folder.dir);
    const subscriber = await start('subscriber', prefix, folder.dir);
    expect(await checksOf(worker)).toEqual([
      'history',
      'queue:actions',
      'queue:deliveries',
      'queue:events',
      'queue:flush',
      'redis',
      'redis-writes',
      'workers',
    ]);
    expect(await checksOf(scheduler)).toEqual(['queue:actions', 'queue:schedules', 'redis', 'redis-writes']);
    expect(subscriber.ruleSet).toBeUndefined();
    folder.write({ 'receivers.ts': undefined });
    expect((await worker.reload!({ by: 'signal' })).summary).toMatch(
      /no notification receiver is defined any more but this process started with some/,
    );
    expect((await scheduler.reload!({ by: 'signal' })).result).toBe('reloaded');
  });

  it('a stopped subscriber gives its lease up at once, for another replica to take', async () => {
    const prefix = uniquePrefix('roots');
    const reflex = await start('subscriber', prefix);
    const lease = keySpace(prefix).lease(reflex.target);
    await until('the lease held', async () => reflex.lease?.isHeld && (await redis.exists(lease)) === 1);
    await reflex.stop();
    running.splice(running.indexOf(reflex), 1);
    expect(await redis.exists(lease)).toBe(0);
  });
});
