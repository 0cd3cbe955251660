import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { keySpace } from '../../src/redis/key-space.js';
import { eventOf, trailLines, waitForAudit } from '../support/audit-trail.js';
import { STATUS_RUNNING, STATUS_STOPPED, TEST_IMAGE, TEST_INSTANCE_PREFIX, describeEachBed, reflexWatchingSuite } from '../support/daemon-bed.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import type { ReflexProcess } from '../support/reflex-process.js';

/**
 * A launch whose start fails once the guest's setup began (here a missing init,
 * `raw.lxc=lxc.init.cmd=/nonexistent`) fails its operation with "Failed to run: … forkstart …"
 * and then sends an `instance-shutdown` without requestor, as after a crash (LXD 5.0.2: the start
 * operation, stop 0.7 s later; Incus 6.0: the create-and-start operation, stop 0.9 s later). The
 * instance never ran: the bundled rule must neither restart it nor spend its restart budget.
 */
await describeEachBed('a failed launch', (bed) => {
  const prefix = uniquePrefix('failed-launch');
  const name = `${TEST_INSTANCE_PREFIX}${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    await bed.remove(name);
  });
  reflexWatchingSuite(bed, redisUrl(), prefix);

  it("is neither restarted nor counted; the audit names the daemon's error and log; once fixed and started, a crash is healed", async () => {
    await expect(
      bed.cli(['launch', TEST_IMAGE, name, '-c', 'raw.lxc=lxc.init.cmd=/nonexistent', '-c', 'user.reflex.autorestart=true'], 60_000),
    ).rejects.toThrow(/Failed to run: .*forkstart/);

    // The alert record comes after the rules decided and queued whatever they would queue.
    const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'alert'));
    const stop = trail.find((r) => r.type === 'event' && eventOf(r)?.action === 'instance-shutdown');
    expect(eventOf(stop!)?.intent, trailLines(trail)).toBe('failed-start');
    expect(
      trail.filter((r) => r.type === 'action' || r.type === 'call'),
      trailLines(trail),
    ).toEqual([]);
    expect(trail.find((r) => r.type === 'alert')!.summary).toMatch(
      new RegExp(
        `^${name} failed to start and never ran: Failed to run: \\S+ forkstart ${name} .*Try \`${bed.cliName} info --show-log ${name}\` for more info; not a crash`,
      ),
    );
    const restarts = keySpace(prefix).restarts({ target: stop!.target!, project: 'default', instance: name });
    const reserved = async () => {
      const redis = redisClient();
      try {
        return await redis.zcard(restarts);
      } finally {
        redis.disconnect();
      }
    };
    expect(await reserved(), 'no restart reserved').toBe(0);
    await bed.waitForStatus(name, STATUS_STOPPED, 1_000);

    await bed.cli(['config', 'set', name, 'raw.lxc', 'lxc.init.cmd=/sbin/testinit']);
    await bed.cli(['start', name]);
    await bed.waitForStatus(name, STATUS_RUNNING, 10_000);
    await bed.crash(name);
    await bed.waitForStatus(name, STATUS_STOPPED, 5_000);
    await bed.waitForStatus(name, STATUS_RUNNING, 15_000);
    const healed = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'outcome'));
    expect(
      healed.find((r) => r.type === 'outcome'),
      trailLines(healed),
    ).toMatchObject({ result: 'done', rule: 'restart-on-crash' });
    expect(await reserved(), 'the crash is restart 1 of the budget').toBe(1);
  }, 90_000);
});
