import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { keySpace } from '../../src/redis/key-space.js';
import { eventOf, trailLines, waitForAudit } from '../support/audit-trail.js';
import { STATUS_RUNNING, STATUS_STOPPED, TEST_IMAGE, TEST_INSTANCE_PREFIX, crashInstance, deleteTestInstance, describeLxd, instanceStatus, lxc, waitForStatus } from '../support/lxd-bed.js';
import { redisClient, redisUrl, uniquePrefix } from '../support/redis.js';
import { startReflexRun } from '../support/remediation-bed.js';
import type { ReflexProcess } from '../support/reflex-process.js';

/**
 * On LXD 5.0.2 a launch whose start fails once the guest's setup began (here a missing init,
 * `raw.lxc=lxc.init.cmd=/nonexistent`) fails its start operation with "Failed to run: … forkstart
 * …" and 0.7 s later sends an `instance-shutdown` without requestor, as after a crash. The
 * instance never ran: the bundled rule must neither restart it nor spend its restart budget.
 */
await describeLxd('a failed launch on real LXD', () => {
  const prefix = uniquePrefix('failed-launch');
  const name = `${TEST_INSTANCE_PREFIX}${randomBytes(4).toString('hex')}`;
  let reflex: ReflexProcess;

  beforeAll(async () => {
    reflex = startReflexRun(redisUrl(), prefix);
    await reflex.waitForLog('event stream connected');
    await reflex.waitForLog('reflex running');
  });
  afterAll(async () => {
    await reflex?.stop();
    await deleteTestInstance(name);
  });

  it('is neither restarted nor counted; the audit names the daemon\'s error and log; once fixed and started, a crash is healed', async () => {
    await expect(lxc(['launch', TEST_IMAGE, name, '-c', 'raw.lxc=lxc.init.cmd=/nonexistent', '-c', 'user.reflex.autorestart=true'], 60_000)).rejects.toThrow(/Failed to run: .*forkstart/);

    // The alert record comes after the rules decided and queued whatever they would queue.
    const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'alert'));
    const stop = trail.find((r) => r.type === 'event' && eventOf(r)?.action === 'instance-shutdown');
    expect(eventOf(stop!)?.intent, trailLines(trail)).toBe('failed-start');
    expect(trail.filter((r) => r.type === 'action' || r.type === 'call'), trailLines(trail)).toEqual([]);
    expect(trail.find((r) => r.type === 'alert')!.summary).toMatch(new RegExp(`^${name} failed to start and never ran: Failed to run: /usr/bin/lxd forkstart ${name} .*Try \`lxc info --show-log ${name}\` for more info; not a crash`));
    const restartsReserved = async () => {
      const redis = redisClient();
      try {
        return await redis.zcard(keySpace(prefix).restarts({ target: 'local', project: 'default', instance: name }));
      } finally {
        redis.disconnect();
      }
    };
    expect(await restartsReserved(), 'no restart reserved').toBe(0);
    expect((await instanceStatus(name)).status_code).toBe(STATUS_STOPPED);

    await lxc(['config', 'set', name, 'raw.lxc', 'lxc.init.cmd=/sbin/testinit']);
    await lxc(['start', name]);
    await waitForStatus(name, STATUS_RUNNING, 10_000);
    await crashInstance(name);
    await waitForStatus(name, STATUS_STOPPED, 5_000);
    await waitForStatus(name, STATUS_RUNNING, 15_000);
    const healed = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'outcome'));
    expect(healed.find((r) => r.type === 'outcome'), trailLines(healed)).toMatchObject({ result: 'done', rule: 'restart-on-crash' });
    expect(await restartsReserved(), 'the crash is restart 1 of the budget').toBe(1);
  }, 90_000);
});
