import { expect, it } from 'vitest';
import { auditTrail, waitForAudit } from '../support/audit-trail.js';
import { STATUS_RUNNING, STATUS_STOPPED, describeEachBed, startReflexOn } from '../support/daemon-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { appendedAt, runningTracked, show, startCallsSince } from './trail.js';

/** Issue 13: the same unix socket, the same requestor, Reflex's own start and an operator's stop told apart by operation ids. */
await describeEachBed('who made a transition', (bed) => {
  it("records Reflex's own start after a crash as self, and an operator's stop right after it as requested, which stays stopped", async () => {
    const prefix = uniquePrefix('attr');
    const reflex = startReflexOn(bed, redisUrl(), prefix);
    let name: string | undefined;
    try {
      await reflex.waitForLog('reflex running');
      name = await bed.launch({ config: { 'user.reflex.autorestart': 'true' } });
      await runningTracked(redisUrl(), prefix, name);
      await bed.crash(name);
      await bed.waitForStatus(name, STATUS_STOPPED, 5_000);
      await bed.waitForStatus(name, STATUS_RUNNING, 10_000);
      const selfStart = `${name}: 102 → 103 (self, instance-started)`;
      await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'event' && r.summary === selfStart));
      const stoppedAt = Date.now();
      await bed.cli(['stop', name], 20_000);
      // Once the rules have decided on the stop, nothing is left that could start it again.
      await waitForAudit(redisUrl(), prefix, name, (rs) =>
        rs.some((r) => r.type === 'decision' && appendedAt(r) >= stoppedAt && r.summary.includes('intent is requested')),
      );
      const trail = await auditTrail(redisUrl(), prefix, name);
      expect((await bed.status(name)).status_code, `stays stopped\n${show(trail)}`).toBe(STATUS_STOPPED);
      const events = trail.filter((r) => r.type === 'event').map((r) => r.summary.replace(`${name}: `, ''));
      expect(events, show(trail)).toContain('103 → 102 (unrequested, instance-shutdown)');
      expect(events, show(trail)).toContain('102 → 103 (self, instance-started)');
      expect(
        trail.some((r) => r.type === 'event' && appendedAt(r) >= stoppedAt && r.summary.endsWith('103 → 102 (requested, instance-shutdown)')),
        `the operator's stop is requested, not self\n${show(trail)}`,
      ).toBe(true);
      expect(startCallsSince(trail, stoppedAt)).toEqual([]);
    } finally {
      await reflex.stop();
      if (name) await bed.remove(name);
    }
  }, 90_000);
});
