import { afterAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { ownRedis, type OwnRedis } from '../support/own-redis.js';
import { startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';
import { uniquePrefix } from '../support/redis.js';

/**
 * A replica started while Redis restarts (a replacement after a crash, a host's boot) waits for it
 * a little instead of exiting: the promise checker's replacement replica died with exit 4 when
 * its start fell inside a Redis restart.
 */
describe('reflex run started while Redis is down', () => {
  let sim: RunningSimulator | undefined;
  let redis: OwnRedis | undefined;
  let reflex: ReflexProcess | undefined;
  afterAll(async () => {
    await reflex?.stop();
    await redis?.stop();
    redis?.remove();
    await sim?.stop();
  });

  it('waits for Redis, saying so once, and runs once it answers', async () => {
    sim = await startSimulator({ instances: 1 });
    redis = await ownRedis();
    await redis.stop();
    reflex = startReflexProcess([
      'run',
      '--config',
      '/dev/null',
      '--target',
      `unix://${sim.socketPath}`,
      '--redis',
      redis.url,
      '--prefix',
      uniquePrefix('redis-wait'),
      '--rules',
      'rules',
      '--http-port',
      '0',
      '--no-typecheck',
    ]);
    const waiting = await reflex.waitForLog('Redis is not reachable yet');
    expect(waiting.msg).toMatch(/waiting for it \(up to 15 s\)/);
    await redis.start();
    await reflex.waitUntilWatching();
    expect(reflex.child.exitCode).toBeNull();
    expect(
      reflex.logs.filter((l) => String(l.msg).startsWith('Redis is not reachable yet')),
      'said once',
    ).toHaveLength(1);
  });
});
