import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { keySpace } from '../../src/redis/key-space.js';
import { auditTrail, waitForAudit } from '../support/audit-trail.js';
import { STATUS_RUNNING, STATUS_STOPPED, describeEachBed, lxdBed, reflexWatchingSuite, startReflexOn } from '../support/daemon-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import type { ReflexProcess } from '../support/reflex-process.js';
import { until } from '../support/wait.js';
import { runningTracked, show } from '../remediation/trail.js';

const optIn = { 'user.reflex.autorestart': 'true' };

await describeEachBed('a crashed container comes back by itself', (bed) => {
  const prefix = uniquePrefix('e2e');
  const instances: string[] = [];
  afterAll(async () => {
    for (const name of instances) await bed.remove(name);
  });
  reflexWatchingSuite(bed, redisUrl(), prefix);

  // How fast is bench/crash-to-running.ts's matter: a timed assertion here failed only when CI's load slowed the daemon.
  it('restarts an opted-in container whose init was killed with kill -9, and audits event → decision → call → outcome', async () => {
    const name = await bed.launch({ config: optIn });
    instances.push(name);
    await bed.crash(name);
    await bed.waitForStatus(name, STATUS_STOPPED, 5_000);
    await bed.waitForStatus(name, STATUS_RUNNING, 30_000);

    await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'outcome'));
    const trail = await auditTrail(redisUrl(), prefix, name); // what `reflex audit --json --instance NAME` shows
    const crash = trail.find((r) => r.type === 'event' && r.summary.includes('103 → 102 (unrequested, instance-shutdown)'));
    expect(crash, `crash event recorded\n${show(trail)}`).toBeDefined();
    // The crash's alert is written beside the action's records (after the action is queued, while it runs).
    const incident = trail.filter((r) => r.correlationId === crash!.correlationId && r.type !== 'alert');
    expect(incident.map((r) => r.type)).toEqual(['event', 'decision', 'action', 'call', 'outcome']);
    expect(trail.filter((r) => r.correlationId === crash!.correlationId && r.type === 'alert').length, show(trail)).toBeGreaterThanOrEqual(1);
    expect(incident[1]).toMatchObject({ rule: 'restart-on-crash', matched: true });
    expect(incident[1]!.summary).toMatch(/^matched/);
    expect(incident[3]!.summary).toMatch(new RegExp(`PUT /1.0/instances/${name}/state(\\?project=default)? \\(start\\) → operation [0-9a-f-]{36}`));
    expect(incident[4]).toMatchObject({ result: 'done', instance: name });
  }, 60_000);

  it(`leaves an opted-in container stopped with ${bed.cliName} stop alone, and records the stop as requested and why it was left`, async () => {
    const name = await bed.launch({ config: optIn });
    instances.push(name);
    await runningTracked(redisUrl(), prefix, name);
    await bed.cli(['stop', name], 20_000);
    // Once the rules have decided on the stop, nothing is left that could start it again.
    const trail = await waitForAudit(redisUrl(), prefix, name, (rs) =>
      rs.some((r) => r.type === 'decision' && r.summary.includes('intent is requested')),
    );
    expect((await bed.status(name)).status_code, show(trail)).toBe(STATUS_STOPPED);
    expect(
      trail.some((r) => r.type === 'event' && r.summary.endsWith('103 → 102 (requested, instance-shutdown)')),
      show(trail),
    ).toBe(true);
    expect(
      trail.find((r) => r.type === 'decision'),
      show(trail),
    ).toMatchObject({ rule: 'restart-on-crash', matched: false });
    expect(
      trail.filter((r) => r.type === 'call' || r.type === 'action'),
      show(trail),
    ).toEqual([]);
  }, 60_000);

  // The opt-in is read the same way whatever the daemon: LXD alone covers it.
  it.runIf(bed.kind === 'lxd')(
    'leaves a crashed container without the opt-in key alone, and records why',
    async () => {
      const name = await bed.launch();
      instances.push(name);
      await bed.crash(name);
      const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'decision'));
      expect(trail.find((r) => r.type === 'decision')!.summary).toContain('not opted in');
      expect((await bed.status(name)).status_code).toBe(STATUS_STOPPED);
      expect(
        trail.filter((r) => r.type === 'call' || r.type === 'action'),
        show(trail),
      ).toEqual([]);
    },
    60_000,
  );
});

await describeEachBed(
  'a worker killed between the crash event and the restart',
  (bed) => {
    const prefix = uniquePrefix('e2e-kill');
    let subscriber: ReflexProcess;
    let name: string;

    afterAll(async () => {
      await subscriber?.stop();
      if (name) await bed.remove(name);
    });

    it('still brings the instance back once it runs again, because the event was in Redis', async () => {
      name = await bed.launch({ config: optIn });
      subscriber = startReflexOn(bed, redisUrl(), prefix, { args: ['--role', 'subscriber'] });
      await subscriber.waitForLog('event stream connected');
      const worker = startReflexOn(bed, redisUrl(), prefix, { args: ['--role', 'worker'] });
      await worker.waitForLog('reflex running');
      await worker.kill(); // SIGKILL: no chance to clean up

      await bed.crash(name);
      await bed.waitForStatus(name, STATUS_STOPPED, 2_000);
      const keys = keySpace(prefix);
      const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
      const events = new Queue(keys.eventsQueue, { connection, prefix: keys.bullPrefix });
      try {
        await until('the crash event waiting in Redis', async () => (await events.getWaitingCount()) > 0, 10_000, 100);
        expect((await bed.status(name)).status_code, 'nothing acted while the worker was dead').toBe(STATUS_STOPPED);
      } finally {
        await events.close();
        connection.disconnect();
      }

      const again = startReflexOn(bed, redisUrl(), prefix, { args: ['--role', 'worker'] });
      try {
        await bed.waitForStatus(name, STATUS_RUNNING, 30_000);
        const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'outcome'));
        expect(trail.filter((r) => r.type === 'outcome')).toHaveLength(1);
      } finally {
        await again.stop();
      }
    }, 90_000);
  },
  [lxdBed],
);
