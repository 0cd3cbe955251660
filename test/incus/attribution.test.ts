import { expect, it } from 'vitest';
import { auditTrail } from '../support/audit-trail.js';
import { crashIncusInstance, deleteIncusInstance, describeIncus, incus, incusInstanceStatus, launchIncusInstance, sleep, startReflexOnIncus, waitForIncusStatus } from '../support/incus-bed.js';
import { STATUS_RUNNING, STATUS_STOPPED } from '../support/lxd-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { appendedAt, show, startCallsSince } from '../remediation/trail.js';

/** Issue 13 on Incus, as test/remediation/attribution.test.ts on LXD: same unix socket, same requestor, told apart by operation ids. */
await describeIncus('who made a transition, on real Incus 6.0', () => {
  it('records Reflex\'s own start after a crash as self, and an operator\'s incus stop 2 s later as requested, which stays stopped', async () => {
    const prefix = uniquePrefix('incus-attr');
    const reflex = startReflexOnIncus(redisUrl(), prefix);
    let name: string | undefined;
    try {
      await reflex.waitForLog('reflex running');
      name = await launchIncusInstance({ config: { 'user.reflex.autorestart': 'true' } });
      await sleep(2_500);
      await crashIncusInstance(name);
      await waitForIncusStatus(name, STATUS_STOPPED, 5_000);
      await waitForIncusStatus(name, STATUS_RUNNING, 10_000);
      await sleep(2_000);
      const stoppedAt = Date.now();
      await incus(['stop', name], 20_000);
      await sleep(8_000);
      const trail = await auditTrail(redisUrl(), prefix, name);
      expect((await incusInstanceStatus(name)).status_code, `stays stopped\n${show(trail)}`).toBe(STATUS_STOPPED);
      const events = trail.filter((r) => r.type === 'event').map((r) => r.summary.replace(`${name}: `, ''));
      expect(events, show(trail)).toContain('103 → 102 (unrequested, instance-shutdown)');
      expect(events, show(trail)).toContain('102 → 103 (self, instance-started)');
      expect(trail.some((r) => r.type === 'event' && appendedAt(r) >= stoppedAt && r.summary.endsWith('103 → 102 (requested, instance-shutdown)')), `the operator's stop is requested, not self\n${show(trail)}`).toBe(true);
      expect(startCallsSince(trail, stoppedAt)).toEqual([]);
    } finally {
      await reflex.stop();
      if (name) await deleteIncusInstance(name);
    }
  }, 90_000);
});
