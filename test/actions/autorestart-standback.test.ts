import { describe, expect, it } from 'vitest';
import type { StoredAuditRecord } from '../../src/audit/audit-log.js';
import { waitForAudit } from '../support/audit-trail.js';
import { redisUrl } from '../support/redis.js';
import { startReflexBed } from './reflex-bed.js';
import { until } from '../support/wait.js';
import { settled } from '../support/settled.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';

const restartOnCrash = `import { StatusCode, configFlag, defineRule } from 'reflex-lxd';
export default defineRule({
  name: 'restart-on-crash',
  on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] },
  when: ({ instance }) => configFlag(instance, 'user.reflex.autorestart'),
  actions: [{ action: 'start' }],
});
`;
const standBackMs = 1_500;
const has = (re: RegExp) => (rs: StoredAuditRecord[]) => rs.some((r) => re.test(r.summary));
const count = (rs: StoredAuditRecord[], re: RegExp) => rs.filter((r) => re.test(r.summary)).length;

describe('Incus boot.autorestart', () => {
  const stopped = stoppedAfterEach();

  it('stands back while boot.autorestart retries, then takes over', async () => {
    const bed = stopped(await startReflexBed({ 'restart-on-crash.ts': restartOnCrash }, { autorestartStandBackMs: standBackMs }));
    const { sim, client, prefix } = bed;
    sim.controls.addInstance({ name: 'ar1', config: { 'user.reflex.autorestart': 'true', 'boot.autorestart': 'true' } });
    sim.controls.addInstance({ name: 'plain', config: { 'user.reflex.autorestart': 'true' } });

    // Without boot.autorestart Reflex acts at once.
    let crashedAt = Date.now();
    sim.controls.crash('plain');
    await until('plain Running again', () => sim.controls.statusCode('plain') === 103, 10_000);
    expect(Date.now() - crashedAt).toBeLessThan(standBackMs);

    // The instance comes back while Reflex stands back (here started through the API, so the delayed
    // start is superseded at once; a start by the daemon itself would find it Running): nothing more is done.
    sim.controls.crash('ar1');
    // The decision and the queued action are two records, appended one after the other: wait for both.
    const queued = (rs: StoredAuditRecord[]) => rs.some((r) => r.type === 'action' && r.summary === `queued start to run in ${standBackMs} ms`);
    let trail = await waitForAudit(redisUrl(), prefix, 'ar1', (rs) => has(/boot\.autorestart is on: standing back 1500 ms/)(rs) && queued(rs));
    expect(queued(trail)).toBe(true);
    await (await client.changeState('ar1', { action: 'start' })).wait({ timeoutMs: 10_000 });
    trail = await waitForAudit(redisUrl(), prefix, 'ar1', has(/^start skipped: superseded by a requested transition/), 15_000);
    // No action job left (the delayed start is gone with the skip): a start it wrongly kept would be one.
    await settled(redisUrl(), prefix);
    expect(sim.controls.calls('ar1', 'start')).toBe(1);

    // The daemon gives up (the instance stays down): once the stand-back is over, Reflex starts it.
    crashedAt = Date.now();
    sim.controls.crash('ar1');
    await until('ar1 Running again', () => sim.controls.statusCode('ar1') === 103, 15_000);
    expect(Date.now() - crashedAt).toBeGreaterThanOrEqual(standBackMs);
    trail = await waitForAudit(redisUrl(), prefix, 'ar1', (rs) => count(rs, /^start: started/) === 1);
    expect(sim.controls.calls('ar1', 'start')).toBe(2);
    expect(count(trail, /boot\.autorestart is on: standing back/)).toBe(2);
  }, 60_000);
});
