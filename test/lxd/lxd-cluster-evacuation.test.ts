import { afterAll, afterEach, expect, it } from 'vitest';
import type { StoredAuditRecord } from '../../src/audit/audit-log.js';
import { eventOf, fullTrail, trailLines, waitForAudit } from '../support/audit-trail.js';
import { describeBed, STATUS_RUNNING } from '../support/daemon-bed.js';
import { clusterBed, clusterInstanceStatus, memberLxc, memberSocket, restoreMembers } from '../support/lxd-cluster-bed.js';
import { redisUrl, reflexRunArgs, uniquePrefix } from '../support/redis.js';
import { noActionPending } from '../support/settled.js';
import { startReflexProcess } from '../support/reflex-process.js';
import { cleanupsAfterEach } from '../support/stopped-after-each.js';

/**
 * `lxc cluster evacuate` and `lxc cluster restore` are an operator's decision. On LXD 5.0.2 the
 * evacuation stops each instance with an `instance-shutdown` that names no requestor — the same
 * event as a crash — then moves it (created/deleted/renamed) and starts it on another member;
 * the restore does the same on the way back. Reflex must not take that stop for a crash.
 */

const viaM1 = `unix://${memberSocket('m1')}`;

await describeBed(clusterBed, 'a real two-member LXD cluster: evacuating and restoring a member', () => {
  const created: string[] = [];
  afterEach(async () => {
    await memberLxc('m1', ['cluster', 'restore', 'm2', '--force']).catch(() => undefined);
    await restoreMembers();
  });
  afterAll(async () => {
    for (const name of created) await clusterBed.remove(name);
  });
  // Registered after the restore above, so that it runs before it: Reflex stops before the members are restored.
  const stopped = cleanupsAfterEach();

  it("takes the stops of `lxc cluster evacuate` and `restore` for the operator's, not for crashes: no restart, no crash alert, and a crash afterwards is healed", async () => {
    const prefix = uniquePrefix('cevac');
    const reflex = startReflexProcess(['run', ...reflexRunArgs(prefix, viaM1)], { REFLEX_LOG_LEVEL: 'info' });
    stopped.push(() => reflex.stop());
    await reflex.waitForLog('reflex running');
    const name = await clusterBed.launch({ member: 'm2', config: { 'user.reflex.autorestart': 'true' } });
    created.push(name);
    const started = (rs: StoredAuditRecord[]) => rs.filter((r) => r.type === 'event' && eventOf(r)?.action === 'instance-started').length;
    await waitForAudit(redisUrl(), prefix, name, (rs) => started(rs) === 1, 10_000);

    await memberLxc('m1', ['cluster', 'evacuate', 'm2', '--force'], 60_000);
    expect((await clusterInstanceStatus(name)).location).toBe('m1');
    await clusterBed.waitForStatus(name, STATUS_RUNNING, 10_000);
    await waitForAudit(redisUrl(), prefix, name, (rs) => started(rs) === 2, 10_000);
    await memberLxc('m1', ['cluster', 'restore', 'm2', '--force'], 60_000);
    expect((await clusterInstanceStatus(name)).location).toBe('m2');
    await clusterBed.waitForStatus(name, STATUS_RUNNING, 10_000);
    await waitForAudit(redisUrl(), prefix, name, (rs) => started(rs) === 3, 10_000);
    await noActionPending(redisUrl(), prefix);

    const trail = await fullTrail(redisUrl(), prefix);
    const mine = trail.filter((r) => r.instance === name);
    expect(
      mine.filter((r) => ['action', 'call', 'alert'].includes(r.type) || (r.type === 'decision' && (r as { matched?: boolean }).matched !== false)),
      trailLines(mine),
    ).toEqual([]);
    const stops = mine.filter((r) => r.type === 'event' && eventOf(r)?.action === 'instance-shutdown');
    expect(stops.length, trailLines(mine)).toBe(2);
    expect(
      stops.map((r) => eventOf(r)?.intent),
      trailLines(mine),
    ).toEqual(['requested', 'requested']);

    // Back on a member that is Online again, a crash is a crash.
    await clusterBed.crash(name);
    const healed = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'outcome') && started(rs) === 4, 15_000);
    expect(
      healed.filter((r) => r.type === 'call' && /\bstart\b/.test(r.summary)),
      trailLines(healed),
    ).toHaveLength(1);
  }, 120_000);
});
