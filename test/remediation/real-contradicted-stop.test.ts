import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEventProxy, type EventProxy } from '../ingestion/support/event-proxy.js';
import { auditTrail, waitForAudit } from '../support/audit-trail.js';
import { STATUS_RUNNING, TEST_INSTANCE_PREFIX, describeEachBed, startReflexOn, type DaemonBed } from '../support/daemon-bed.js';
import type { ReflexProcess } from '../support/reflex-process.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { noActionPending } from '../support/settled.js';
import { appendedAt, crashEvents, runningTracked, show, startCallsSince, type StoredAuditRecord } from './trail.js';

/**
 * Issue 39, item 2 on the real daemons (LXD 5.0.2, Incus 6.0): Reflex watches the daemon through a
 * proxy that passes its frames through and lets the test add its own. A forged `instance-shutdown`
 * (no requestor, the shape of a crash) of a running opted-in container is audited as contradicted
 * and spends nothing; a real crash (kill -9 of init) is still healed, at once, with restart 1 of the
 * budget: the confirmation waits for the daemon's status, it never dismisses a real stop. The same
 * on the simulator: contradicted-stop.test.ts.
 */

const contradictions = (trail: StoredAuditRecord[]) => trail.filter((r) => r.type === 'event' && 'contradicted' in r);

await describeEachBed('a stop the daemon contradicts is never spent', (bed: DaemonBed) => {
  const prefix = uniquePrefix('contra-real');
  let proxy: EventProxy;
  let reflex: ReflexProcess;
  const created: string[] = [];

  beforeAll(async () => {
    proxy = await startEventProxy(bed.socket);
    reflex = startReflexOn({ ...bed, target: `unix://${proxy.socketPath}` }, redisUrl(), prefix);
    await reflex.waitUntilWatching();
  });
  afterAll(async () => {
    await reflex?.stop();
    await proxy?.close();
    for (const name of created) await bed.remove(name);
  });

  /** A shutdown without requestor, as the daemon sends it after a crash (LXD 5.0.2 has no name in the metadata, Incus does). */
  const forge = (name: string) =>
    JSON.stringify({
      type: 'lifecycle',
      timestamp: new Date().toISOString(),
      metadata: { action: 'instance-shutdown', source: `/1.0/instances/${name}`, context: {}, name, project: 'default' },
      location: 'none',
      project: 'default',
    });

  it('a forged shutdown of a running opted-in container spends nothing; its real crash after is healed with restart 1 of the budget', async () => {
    const name = `${TEST_INSTANCE_PREFIX}${randomBytes(4).toString('hex')}`;
    const twin = `${name}-twin`;
    created.push(name, twin);
    for (const n of [name, twin]) {
      await bed.launch({ name: n, config: { 'user.reflex.autorestart': 'true' } });
      await runningTracked(redisUrl(), prefix, n);
    }
    // The yardstick for the report: a crash with nothing before it, on a twin.
    const baselineAt = Date.now();
    await bed.crash(twin);
    await waitForAudit(redisUrl(), prefix, twin, (rs) => rs.some((r) => r.type === 'outcome'), 20_000);
    const baseline = Date.now() - baselineAt;

    const forgedAt = Date.now();
    proxy.inject(forge(name));
    await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'event' && appendedAt(r) >= forgedAt), 20_000);
    // Whatever the frame made Reflex queue has run by now.
    await noActionPending(redisUrl(), prefix);
    const afterForged = await auditTrail(redisUrl(), prefix, name);
    expect(
      afterForged.filter((r) => r.type === 'decision'),
      `the rules never saw it\n${show(afterForged)}`,
    ).toEqual([]);
    expect(startCallsSince(afterForged, forgedAt), `no start for a forged stop\n${show(afterForged)}`).toEqual([]);
    expect(contradictions(afterForged)[0], show(afterForged)).toMatchObject({ contradicted: 'not-down' });
    expect((await bed.status(name)).status_code, 'still running').toBe(STATUS_RUNNING);

    const crashedAt = Date.now();
    await bed.crash(name);
    const healed = await waitForAudit(redisUrl(), prefix, name, (rs) => crashEvents(rs).length === 1 && rs.some((r) => r.type === 'outcome'), 20_000);
    const healedIn = Date.now() - crashedAt;
    await bed.waitForStatus(name, STATUS_RUNNING, 15_000);
    const crash = crashEvents(healed)[0]!;
    const decision = healed.find((r) => r.type === 'decision' && r.correlationId === crash.correlationId);
    expect(decision?.summary, `the real crash is confirmed, restart 1 with no back-off\n${show(healed)}`).toMatch(/restart 1 of the budget$/);
    expect(contradictions(healed), 'the real crash was not dismissed').toHaveLength(1);
    // The figure for the report: from the kill to the start's outcome in the trail (polled every 100 ms).
    console.info(
      `${bed.name}: a real crash healed in ${baseline} ms alone, ${healedIn} ms after a forged shutdown (ratio ${(healedIn / baseline).toFixed(2)})`,
    );
  }, 90_000);

  it('a forged shutdown of a name that exists nowhere is audited as contradicted, with no crash decision', async () => {
    const name = `${TEST_INSTANCE_PREFIX}ghost-${randomBytes(3).toString('hex')}`;
    proxy.inject(forge(name));
    const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => contradictions(rs).length === 1 && rs.some((r) => r.type === 'alert'), 20_000);
    expect(contradictions(trail)[0], show(trail)).toMatchObject({ contradicted: 'gone' });
    expect(
      trail.find((r) => r.type === 'alert'),
      show(trail),
    ).toMatchObject({ kind: 'event.contradicted' });
    expect(trail.filter((r) => r.type === 'decision')).toEqual([]);
  }, 60_000);
});
