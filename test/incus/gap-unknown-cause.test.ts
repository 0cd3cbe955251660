import { expect, it } from 'vitest';
import { auditTrail, waitForAudit } from '../support/audit-trail.js';
import { crashIncusInstance, deleteIncusInstance, describeIncus, incusInstanceStatus, launchIncusInstance, sleep, startReflexOnIncus, waitForIncusStatus } from '../support/incus-bed.js';
import { STATUS_STOPPED } from '../support/lxd-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { show, startCallsSince } from '../remediation/trail.js';

/**
 * Real Incus: an opted-in container crashes while no Reflex runs. The resync of the next `reflex run`
 * finds it Stopped with nothing left to say who stopped it (intent unknown): the bundled rule does not
 * start it on a guess, and the audit carries the alert saying how to heal it.
 */
await describeIncus('a crash while Reflex is stopped, on real Incus 6.0', () => {
  it('is found by the resync on restart with intent unknown, alerted, and left stopped', async () => {
    const prefix = uniquePrefix('incus-gap');
    let reflex = startReflexOnIncus(redisUrl(), prefix);
    let name: string | undefined;
    try {
      await reflex.waitForLog('event stream connected');
      name = await launchIncusInstance({ config: { 'user.reflex.autorestart': 'true' } });
      await sleep(2_500); // the stream reports the launch's start: Running is tracked
      await reflex.stop();

      await crashIncusInstance(name);
      await waitForIncusStatus(name, STATUS_STOPPED, 5_000);
      await sleep(1_500); // instance-shutdown went out while nobody listened

      reflex = startReflexOnIncus(redisUrl(), prefix);
      await reflex.waitForLog('event stream connected');
      const alerted = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'alert'), 20_000);
      await sleep(5_000);
      const trail = await auditTrail(redisUrl(), prefix, name);
      expect((await incusInstanceStatus(name)).status_code, show(trail)).toBe(STATUS_STOPPED);
      expect(trail.some((r) => r.type === 'event' && /103 → 102 \(unknown\b/.test(r.summary)), `the stop is recorded with intent unknown\n${show(trail)}`).toBe(true);
      expect(alerted.find((r) => r.type === 'alert')!.summary).toContain(`${name} found Stopped after a gap, cause unknown`);
      expect(startCallsSince(trail), show(trail)).toEqual([]);
    } finally {
      await reflex.stop();
      if (name) await deleteIncusInstance(name);
    }
  }, 90_000);
});
