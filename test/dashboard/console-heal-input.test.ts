import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { RedisConnection } from '../../src/redis/connect.js';
import { keySpace } from '../../src/redis/key-space.js';
import { startObservabilityBed, type ObservabilityBed } from '../metrics/observability-bed.js';
import { redisClient } from '../support/redis.js';

/**
 * The console's heal checks every input before it queues: a target that is not configured or a bad
 * name is 400, an instance the target does not have is 404, answered at once; nothing is queued
 * or audited (before, an unknown target was accepted: 202, retries, a dead letter and a critical alert).
 */
describe('the console heal API validates its input', () => {
  const readToken = `heal-read-${Math.random().toString(36).slice(2)}`;
  const writeToken = `heal-write-${Math.random().toString(36).slice(2)}`;
  let bed: ObservabilityBed;
  let redis: RedisConnection;
  let actions: Queue;

  beforeAll(async () => {
    bed = await startObservabilityBed({
      rulesDir: 'rules',
      instances: [{ name: 'web-1' }],
      config: { dashboardToken: readToken, dashboardWriteToken: writeToken },
    });
    redis = redisClient();
    const keys = keySpace(bed.prefix);
    actions = new Queue(keys.actionsQueue, { connection: redis, prefix: keys.bullPrefix });
  });

  afterAll(async () => {
    await actions?.close();
    redis?.disconnect();
    await bed?.stop();
  });

  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${bed.url}/dashboard/console/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${writeToken}`, origin: bed.url, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { error?: string; jobId?: string } };
  };

  it('answers 400 for a target that is not configured or a bad name, 404 for an instance the target lacks, and queues nothing', async () => {
    const target = bed.reflex.target;
    expect(await post('heal', { target: 'https://elsewhere.example:8443', project: 'default', instance: 'web-1' })).toEqual({
      status: 400,
      body: { error: expect.stringMatching(/^target: "https:\/\/elsewhere\.example:8443" is not a configured target \(configured: unix:\/\//) },
    });
    expect((await post('heal', { target, project: 'default', instance: 'web 1' })).status).toBe(400);
    expect((await post('heal', { target, project: '../x', instance: 'web-1' })).status).toBe(400);
    expect(await post('heal', { target, project: 'default', instance: 'web-9' })).toEqual({
      status: 404,
      body: { error: `no instance web-9 in project default on ${target}` },
    });
    expect((await post('quarantine/release', { target: 'nowhere', project: 'default', instance: 'web-1' })).status).toBe(400);
    expect(await actions.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed')).toEqual({
      waiting: 0,
      active: 0,
      delayed: 0,
      failed: 0,
      completed: 0,
    });
    expect((await new AuditLog(redis, keySpace(bed.prefix).audit).read({})).filter((r) => r.rule === 'heal')).toEqual([]);
  });

  it('queues a heal of an instance that exists (202)', async () => {
    const res = await post('heal', { target: bed.reflex.target, project: 'default', instance: 'web-1', actor: 'alice' });
    expect(res.status).toBe(202);
    expect(res.body.jobId).toMatch(/^heal-/);
  });
});
