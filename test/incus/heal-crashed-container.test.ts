import { afterAll, beforeAll, expect, it } from 'vitest';
import { auditTrail, waitForAudit } from '../support/audit-trail.js';
import { crashIncusInstance, deleteIncusInstance, describeIncus, incus, incusInstanceStatus, launchIncusInstance, sleep, startReflexOnIncus, waitForIncusStatus } from '../support/incus-bed.js';
import { STATUS_RUNNING, STATUS_STOPPED } from '../support/lxd-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import type { ReflexProcess } from '../support/reflex-process.js';
import { show } from '../remediation/trail.js';

const optIn = { 'user.reflex.autorestart': 'true' };

await describeIncus('a crashed container on real Incus 6.0 comes back by itself', () => {
  const prefix = uniquePrefix('incus-heal');
  const instances: string[] = [];
  let reflex: ReflexProcess;

  beforeAll(async () => {
    reflex = startReflexOnIncus(redisUrl(), prefix);
    await reflex.waitForLog('event stream connected');
    await reflex.waitForLog('reflex running');
  });

  afterAll(async () => {
    await reflex?.stop();
    for (const name of instances) await deleteIncusInstance(name);
  });

  it('restarts an opted-in container whose init was killed with kill -9 within 5 s, and audits event → decision → call → outcome', async () => {
    const name = await launchIncusInstance({ config: optIn });
    instances.push(name);
    const killedAt = Date.now();
    await crashIncusInstance(name);
    await waitForIncusStatus(name, STATUS_STOPPED, 2_000);
    await waitForIncusStatus(name, STATUS_RUNNING, 5_000 - (Date.now() - killedAt));
    expect(Date.now() - killedAt).toBeLessThan(5_000);

    await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'outcome'));
    const trail = await auditTrail(redisUrl(), prefix, name);
    const crash = trail.find((r) => r.type === 'event' && r.summary.includes('103 → 102 (unrequested, instance-shutdown)'));
    expect(crash, `crash event recorded\n${show(trail)}`).toBeDefined();
    const incident = trail.filter((r) => r.correlationId === crash!.correlationId);
    expect(incident.map((r) => r.type)).toEqual(['event', 'decision', 'action', 'call', 'outcome']);
    expect(incident[1]).toMatchObject({ rule: 'restart-on-crash', matched: true });
    expect(incident[3]!.summary).toMatch(new RegExp(`PUT /1.0/instances/${name}/state(\\?project=default)? \\(start\\) → operation [0-9a-f-]{36}`));
    expect(incident[4]).toMatchObject({ result: 'done', instance: name });
  }, 60_000);

  it('leaves an opted-in container stopped with incus stop alone, and records the stop as requested', async () => {
    const name = await launchIncusInstance({ config: optIn });
    instances.push(name);
    await sleep(2_500); // the stream reports the launch's start: Running is tracked
    await incus(['stop', name], 20_000);
    await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'decision' && r.summary.includes('intent is requested')));
    await sleep(8_000);
    const trail = await auditTrail(redisUrl(), prefix, name);
    expect((await incusInstanceStatus(name)).status_code, show(trail)).toBe(STATUS_STOPPED);
    expect(trail.some((r) => r.type === 'event' && r.summary.endsWith('103 → 102 (requested, instance-shutdown)')), show(trail)).toBe(true);
    expect(trail.filter((r) => r.type === 'call'), show(trail)).toEqual([]);
  }, 60_000);
});
