import { expect, it } from 'vitest';
import { auditTrail } from '../support/audit-trail.js';
import { STATUS_RUNNING, STATUS_STOPPED, crashInstance, deleteTestInstance, describeLxd, instanceStatus, launchTestInstance, lxc, waitForStatus } from '../support/lxd-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { startReflexRun } from '../support/remediation-bed.js';
import { appendedAt, show, sleep, startCallsSince } from './trail.js';

await describeLxd('who made a transition, on real LXD', () => {
  it('records Reflex\'s own start after a crash as self, and an operator\'s lxc stop 2 s later as requested, which stays stopped', async () => {
    const prefix = uniquePrefix('attr');
    const reflex = startReflexRun(redisUrl(), prefix);
    let name: string | undefined;
    try {
      await reflex.waitForLog('reflex running');
      name = await launchTestInstance({ config: { 'user.reflex.autorestart': 'true' } });
      await sleep(2_500); // the stream reports the launch's start: Running is tracked
      await crashInstance(name);
      await waitForStatus(name, STATUS_STOPPED, 5_000);
      await waitForStatus(name, STATUS_RUNNING, 10_000);
      await sleep(2_000);
      const stoppedAt = Date.now();
      await lxc(['stop', name], 20_000);
      await sleep(8_000);
      const trail = await auditTrail(redisUrl(), prefix, name);
      expect((await instanceStatus(name)).status_code, `stays stopped\n${show(trail)}`).toBe(STATUS_STOPPED);
      const events = trail.filter((r) => r.type === 'event').map((r) => r.summary.replace(`${name}: `, ''));
      expect(events, show(trail)).toContain('103 → 102 (unrequested, instance-shutdown)');
      expect(events, show(trail)).toContain('102 → 103 (self, instance-started)');
      expect(trail.some((r) => r.type === 'event' && appendedAt(r) >= stoppedAt && r.summary.endsWith('103 → 102 (requested, instance-shutdown)')), `the operator's stop is requested, not self\n${show(trail)}`).toBe(true);
      expect(startCallsSince(trail, stoppedAt)).toEqual([]);
    } finally {
      await reflex.stop();
      if (name) await deleteTestInstance(name);
    }
  }, 90_000);
});
