import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { RedisConnection } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { reflexInProcess } from './in-process.js';

/**
 * `reflex heal` checks what it is given before it queues anything (a bad name is a usage error, an
 * instance the target does not have is refused at once), and a heal no worker takes is withdrawn
 * with one line instead of BullMQ's "Job wait start timed out".
 */
describe('reflex heal checks its input and says when no worker runs', () => {
  let sim: RunningSimulator;
  let redis: RedisConnection;
  const prefix = uniquePrefix('heal-input');
  const keys = keySpace(prefix);
  let common: string[];
  const queued = async () => {
    const q = new Queue(keys.actionsQueue, { connection: redis, prefix: keys.bullPrefix });
    try {
      return await q.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed');
    } finally {
      await q.close();
    }
  };
  const records = () => new AuditLog(redis, keys.audit).read({});

  beforeAll(async () => {
    sim = await startSimulator({ instances: 0 });
    sim.controls.addInstance({ name: 'web-1', config: {} });
    redis = redisClient();
    common = ['--target', `unix://${sim.socketPath}`, '--redis', redisUrl(), '--prefix', prefix];
  });

  afterAll(async () => {
    redis?.disconnect();
    await sim?.stop();
  });

  it('refuses an instance the target does not have, in one line and exit 1, and queues nothing', async () => {
    const res = await reflexInProcess(['heal', 'web-9', ...common]);
    expect(res).toEqual({
      code: 1,
      stdout: '',
      stderr: `reflex: no instance web-9 in project default on unix://${sim.socketPath}; nothing queued\n`,
    });
    const project = await reflexInProcess(['heal', 'web-1', '--project', 'nope', ...common]);
    expect(project.code).toBe(1);
    expect(Object.values(await queued()).every((n) => n === 0)).toBe(true);
    expect(await records()).toEqual([]);
  });

  it('refuses an invalid instance or project name as a usage error (exit 2)', async () => {
    for (const args of [
      ['heal', 'web_1!', ...common],
      ['heal', 'web-1', '--project', 'a/b', ...common],
    ]) {
      const res = await reflexInProcess(args);
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/^reflex: (instance|project): "[^"]+" is not a valid (instance|project) name[^\n]*\n$/);
    }
    expect(await records()).toEqual([]);
  });

  it('refuses a target that does not answer with exit 4', async () => {
    const res = await reflexInProcess(['heal', 'web-1', '--target', 'unix:///nonexistent/lxd.sock', '--redis', redisUrl(), '--prefix', prefix]);
    expect(res.code).toBe(4);
    expect(res.stderr).toMatch(/^reflex: cannot read default\/web-1 on unix:\/\/\/nonexistent\/lxd\.sock: [^\n]*; nothing queued\n$/);
  });

  it('with no worker running, withdraws the heal after the wait and says so in one line (exit 1), audited', async () => {
    const res = await reflexInProcess(['heal', 'web-1', '--wait', '2s', ...common]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      `reflex: default/web-1: no worker took the heal within 2s (is a reflex run with role worker or all running on prefix ${prefix}?); withdrawn, nothing started\n`,
    );
    expect(Object.values(await queued()).every((n) => n === 0)).toBe(true);
    const trail = await records();
    expect(trail.map((r) => r.summary)).toEqual([
      expect.stringMatching(/^operator \S+ asked Reflex to start default\/web-1 \(reflex heal\)$/),
      expect.stringMatching(/^withdrawn: the heal of default\/web-1 asked by \S+ was not started, no worker took it within 2s$/),
    ]);
    expect(new Set(trail.map((r) => r.correlationId)).size).toBe(1);
  });
});
