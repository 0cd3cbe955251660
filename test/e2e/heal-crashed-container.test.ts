import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { keySpace } from '../../src/redis/key-space.js';
import { auditTrail, waitForAudit } from '../support/audit-trail.js';
import { STATUS_RUNNING, STATUS_STOPPED, crashInstance, deleteTestInstance, describeLxd, instanceStatus, launchTestInstance, lxc, lxdSocketPath, waitForStatus } from '../support/lxd-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';

const optIn = { 'user.reflex.autorestart': 'true' };

function reflexRun(prefix: string, extra: string[] = []): ReflexProcess {
  return startReflexProcess(['run', '--target', `unix://${lxdSocketPath()}`, '--redis', redisUrl(), '--prefix', prefix, '--rules', 'rules', '--http-port', '0', ...extra], { REFLEX_LOG_LEVEL: 'info' });
}

await describeLxd('a crashed container on real LXD comes back by itself', () => {
  const prefix = uniquePrefix('e2e');
  const instances: string[] = [];
  let reflex: ReflexProcess;

  beforeAll(async () => {
    reflex = reflexRun(prefix);
    await reflex.waitForLog('event stream connected');
    await reflex.waitForLog('reflex running');
  });

  afterAll(async () => {
    await reflex?.stop();
    for (const name of instances) await deleteTestInstance(name);
  });

  it('restarts an opted-in container whose init was killed with kill -9 within 5 s, and audits event → decision → call → outcome', async () => {
    const name = await launchTestInstance({ config: optIn });
    instances.push(name);
    const killedAt = Date.now();
    await crashInstance(name);
    await waitForStatus(name, STATUS_STOPPED, 2_000);
    await waitForStatus(name, STATUS_RUNNING, 5_000 - (Date.now() - killedAt));
    expect(Date.now() - killedAt).toBeLessThan(5_000);

    await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'outcome'));
    const trail = await auditTrail(redisUrl(), prefix, name); // what `reflex audit --json --instance NAME` shows
    const crash = trail.find((r) => r.type === 'event' && r.summary.includes('unrequested'));
    expect(crash, 'crash event recorded').toBeDefined();
    const incident = trail.filter((r) => r.correlationId === crash!.correlationId);
    expect(incident.map((r) => r.type)).toEqual(['event', 'decision', 'action', 'call', 'outcome']);
    expect(incident[1]).toMatchObject({ rule: 'restart-on-crash', matched: true });
    expect(incident[1]!.summary).toMatch(/^matched/);
    expect(incident[3]!.summary).toMatch(new RegExp(`PUT /1.0/instances/${name}/state(\\?project=default)? \\(start\\) → operation [0-9a-f-]{36}`));
    expect(incident[4]).toMatchObject({ result: 'done', instance: name });
  }, 60_000);

  it('leaves an opted-in container stopped with lxc stop alone, and records why', async () => {
    const name = await launchTestInstance({ config: optIn });
    instances.push(name);
    await lxc(['stop', name], 20_000);
    const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'decision'));
    await new Promise((r) => setTimeout(r, 10_000));
    expect((await instanceStatus(name)).status_code).toBe(STATUS_STOPPED);
    const decision = trail.find((r) => r.type === 'decision');
    expect(decision).toMatchObject({ rule: 'restart-on-crash', matched: false });
    expect(decision!.summary).toContain('intent is requested');
    const after = await waitForAudit(redisUrl(), prefix, name, () => true);
    expect(after.filter((r) => r.type === 'call')).toEqual([]);
  }, 60_000);

  it('leaves a crashed container without the opt-in key alone, and records why', async () => {
    const name = await launchTestInstance();
    instances.push(name);
    await crashInstance(name);
    const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'decision'));
    expect(trail.find((r) => r.type === 'decision')!.summary).toContain('not opted in');
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await instanceStatus(name)).status_code).toBe(STATUS_STOPPED);
  }, 60_000);
});

await describeLxd('a worker killed between the crash event and the restart', () => {
  const prefix = uniquePrefix('e2e-kill');
  let subscriber: ReflexProcess;
  let name: string;

  afterAll(async () => {
    await subscriber?.stop();
    if (name) await deleteTestInstance(name);
  });

  it('still brings the instance back once it runs again, because the event was in Redis', async () => {
    name = await launchTestInstance({ config: optIn });
    subscriber = reflexRun(prefix, ['--role', 'subscriber']);
    await subscriber.waitForLog('event stream connected');
    const worker = reflexRun(prefix, ['--role', 'worker']);
    await worker.waitForLog('reflex running');
    await worker.kill(); // SIGKILL: no chance to clean up

    await crashInstance(name);
    await waitForStatus(name, STATUS_STOPPED, 2_000);
    const keys = keySpace(prefix);
    const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    const events = new Queue(keys.eventsQueue, { connection, prefix: keys.bullPrefix });
    try {
      const until = Date.now() + 10_000;
      let waiting = 0;
      while (Date.now() < until && (waiting = await events.getWaitingCount()) === 0) await new Promise((r) => setTimeout(r, 100));
      expect(waiting, 'the crash event is waiting in Redis').toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 1_000));
      expect((await instanceStatus(name)).status_code, 'nothing acted while the worker was dead').toBe(STATUS_STOPPED);
    } finally {
      await events.close();
      connection.disconnect();
    }

    const again = reflexRun(prefix, ['--role', 'worker']);
    try {
      await waitForStatus(name, STATUS_RUNNING, 30_000);
      const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'outcome'));
      expect(trail.filter((r) => r.type === 'outcome')).toHaveLength(1);
    } finally {
      await again.stop();
    }
  }, 90_000);
});
