import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { keySpace } from '../../src/redis/key-space.js';
import type { ActionJobInput } from '../../src/actions/action-job.js';
import { waitForAudit } from '../support/audit-trail.js';
import { describeBed, lxdBed, lxdSocketPath, STATUS_RUNNING, STATUS_STOPPED } from '../support/daemon-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { startReflexProcess, type ReflexProcess } from '../support/reflex-process.js';

await describeBed(lxdBed, 'a start the daemon refuses while its stop hook runs', () => {
  const prefix = uniquePrefix('busy');
  let worker: ReflexProcess | undefined;
  let name: string | undefined;

  afterAll(async () => {
    await worker?.stop();
    if (name) await lxdBed.remove(name);
  });

  it('is retried with backoff until the instance runs, and every attempt is audited', async () => {
    name = await lxdBed.launch();
    const target = `unix://${lxdSocketPath()}`;
    worker = startReflexProcess(
      ['run', '--role', 'worker', '--target', target, '--redis', redisUrl(), '--prefix', prefix, '--rules', 'rules', '--http-port', '0'],
      { REFLEX_LOG_LEVEL: 'info' },
    );
    await worker.waitForLog('reflex running');
    const keys = keySpace(prefix);
    const connection = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    const actions = new Queue(keys.actionsQueue, { connection, prefix: keys.bullPrefix });
    try {
      await lxdBed.crash(name);
      // /state reads Stopped ~60 ms after the kill, LXD's stop hook finishes ~600 ms later: start inside that window.
      await lxdBed.waitForStatus(name, STATUS_STOPPED, 2_000);
      const job: ActionJobInput = {
        rule: 'heal',
        action: 'start',
        params: {},
        target,
        project: 'default',
        instance: name,
        correlationId: 'busy-1',
        origin: 'operator',
        dryRun: false,
      };
      await actions.add('start', job, { jobId: 'busy-1', attempts: 8, backoff: { type: 'exponential', delay: 200 } });
      await lxdBed.waitForStatus(name, STATUS_RUNNING, 10_000);
    } finally {
      await actions.close();
      connection.disconnect();
    }
    const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'outcome' && r.result === 'done'));
    const outcomes = trail.filter((r) => r.type === 'outcome');
    expect(outcomes.at(-1)).toMatchObject({ result: 'done' });
    // Every failed attempt before success was the daemon saying it was busy, and was retried.
    for (const o of outcomes.slice(0, -1)) {
      expect(o.result).toBe('retrying');
      expect(o.code).toBe('API_BUSY');
    }
    process.stderr.write(`busy-retry: ${outcomes.length - 1} busy refusal(s) before the start went through\n`);
  });
});
