import { describe, expect, it } from 'vitest';
import { waitForAudit } from '../support/audit-trail.js';
import { redisUrl } from '../support/redis.js';
import { startReflexBed } from './reflex-bed.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';

const rules = {
  'restart.ts': `import { StatusCode, defineRule } from 'reflex-lxd';
export default defineRule({ name: 'restart', on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] }, actions: [{ action: 'start' }] });
`,
};

describe('an action that fails for good', () => {
  const stopped = stoppedAfterEach();

  it('is recorded as a give-up with one alert naming the dead-letter queue', async () => {
    const bed = stopped(await startReflexBed(rules));
    bed.sim.controls.addInstance({ name: 'web1' });
    bed.sim.controls.failNext('web1', 10, 'Injected failure');
    bed.sim.controls.crash('web1');
    const trail = await waitForAudit(redisUrl(), bed.prefix, 'web1', (rs) => rs.some((r) => r.type === 'alert' && r.kind === 'action.failed'));
    const giveUps = trail.filter((r) => r.type === 'give-up');
    expect(giveUps).toHaveLength(1);
    expect(giveUps[0]!.summary).toMatch(
      /^start on web1 gave up after \d attempt\(s\): .*Injected failure.*; job .+ is in the dead-letter queue \(reflex dlq list, reflex dlq retry\)$/,
    );
    expect(trail.filter((r) => r.type === 'alert' && r.kind !== 'instance.crashed').map((r) => r.summary)).toEqual([giveUps[0]!.summary]);
    expect(trail.filter((r) => r.type === 'outcome').at(-1)!.summary).toMatch(/giving up$/);
  }, 60_000);
});
