import { describe, expect, it } from 'vitest';
import { startReflexBed } from '../actions/reflex-bed.js';
import { startStack } from '../support/stack.js';
import { auditTrail, waitForAudit } from '../support/audit-trail.js';
import { redisUrl } from '../support/redis.js';
import { until } from '../support/wait.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';
import { StateTracker } from '../../src/events/state-tracker.js';
import { noActionPending } from '../support/settled.js';

/**
 * Moves and evacuations on a cluster, on the simulator (the same on the real cluster in
 * test/lxd/lxd-cluster-*.test.ts).
 *
 * Issue 16: the crash-loop budget belongs to the instance (target + project + name), not to the
 * cluster member it runs on. An instance that moves between members after using up its budget is
 * quarantined at its next crash instead of starting over with a fresh budget.
 */

const rules = {
  'restart.ts': `import { StatusCode, defineRule } from 'reflex-lxd';
export default defineRule({
  name: 'restart',
  on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] },
  cooldownMs: 0,
  crashLoop: { maxRestarts: 2, windowMs: 600000, initialBackoffMs: 0, maxBackoffMs: 0, resetAfterMs: 600000 },
  actions: [{ action: 'start' }],
});
`,
};

const decisions = async (prefix: string, name: string): Promise<string[]> =>
  (await auditTrail(redisUrl(), prefix, name)).filter((r) => r.type === 'decision').map((r) => r.summary);

describe('an instance moved between cluster members', () => {
  const stopped = stoppedAfterEach();

  it('keeps its crash-loop budget: at the edge on m1, moved to m2, the next crash is quarantined', async () => {
    const bed = stopped(await startReflexBed(rules, {}, { cluster: { members: ['m1', 'm2', 'm3'] } }));
    const { sim, prefix } = bed;
    sim.controls.addInstance({ name: 'web1', location: 'm1' });

    for (let n = 1; n <= 2; n++) {
      sim.controls.crash('web1');
      await until(
        `restart ${n} on m1`,
        async () => (await decisions(prefix, 'web1')).length === n && sim.controls.statusCode('web1') === 103,
        15_000,
      );
    }
    expect(await decisions(prefix, 'web1')).toEqual([
      expect.stringMatching(/restart 1 of the budget/),
      expect.stringMatching(/restart 2 of the budget/),
    ]);
    expect(sim.controls.calls('web1', 'start')).toBe(2);

    sim.controls.move('web1', 'm2');
    expect(sim.controls.locationOf('web1')).toBe('m2');
    await until('web1 running on m2', () => sim.controls.statusCode('web1') === 103, 5_000);
    sim.controls.crash('web1');

    const trail = await waitForAudit(
      redisUrl(),
      prefix,
      'web1',
      (rs) => rs.some((r) => r.type === 'decision' && /quarantined|restart 3 of the budget/.test(r.summary)),
      15_000,
    );
    const summaries = trail.filter((r) => r.type === 'decision').map((r) => r.summary);
    // The move's own shutdown carries a requestor: no crash, skipped, nothing taken from the budget.
    expect(summaries).toEqual([
      expect.stringMatching(/restart 1 of the budget/),
      expect.stringMatching(/restart 2 of the budget/),
      expect.stringMatching(/^skipped: intent is requested/),
      expect.stringMatching(/^quarantined: crash loop \(2 restarts/),
    ]);
    await noActionPending(redisUrl(), prefix);
    expect(sim.controls.calls('web1', 'start'), 'no start after the quarantine').toBe(2);
    expect(sim.controls.statusCode('web1')).toBe(102);
  }, 60_000);

  it("takes the stops of an evacuation and a restore for the operator's, though the evacuation's names no requestor: no restart, and a crash afterwards is healed", async () => {
    const bed = stopped(
      await startStack({
        redisUrl: redisUrl(),
        label: 'bed',
        rules,
        simulator: { cluster: { members: ['m1', 'm2', 'm3'] } },
        instances: [{ name: 'web1', location: 'm1' }],
      }),
    );
    const { sim, prefix, client, target } = bed;
    // The start-up resync has read web1 Running (a seeded instance sends no event): the tracked status says so.
    const tracker = new StateTracker(bed.redis, bed.keys);
    await until('web1 read Running', async () => (await tracker.get({ target, project: 'default', instance: 'web1' }))?.status === 103, 10_000);
    const memberState = (action: string) => client.transport.request('POST', '/1.0/cluster/members/m1/state', { body: { action } });

    // Restored right after: the evacuation's stop is judged by its operation, still listed, when the member reads Online again.
    await memberState('evacuate');
    await until('web1 running on another member', () => sim.controls.locationOf('web1') !== 'm1' && sim.controls.statusCode('web1') === 103, 5_000);
    await memberState('restore');
    await until('web1 running on m1 again', () => sim.controls.locationOf('web1') === 'm1' && sim.controls.statusCode('web1') === 103, 5_000);
    await waitForAudit(redisUrl(), prefix, 'web1', (rs) => rs.filter((r) => r.type === 'decision').length === 2, 10_000);
    await noActionPending(redisUrl(), prefix);
    const trail = await auditTrail(redisUrl(), prefix, 'web1');
    expect(trail.filter((r) => r.type === 'decision').map((r) => r.summary)).toEqual([
      expect.stringMatching(/^skipped: intent is requested/),
      expect.stringMatching(/^skipped: intent is requested/),
    ]);
    expect(trail.filter((r) => ['action', 'call', 'alert'].includes(r.type))).toEqual([]);
    expect(sim.controls.calls('web1', 'start')).toBe(0);

    sim.controls.crash('web1');
    await until('web1 healed', () => sim.controls.calls('web1', 'start') === 1 && sim.controls.statusCode('web1') === 103, 10_000);
  }, 60_000);
});
