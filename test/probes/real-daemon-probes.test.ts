import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { StoredAuditRecord } from '../../src/audit/audit-log.js';
import { waitForAudit } from '../support/audit-trail.js';
import { STATUS_STOPPED, TEST_INSTANCE_PREFIX, describeEachBed, startReflexOn } from '../support/daemon-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { writeRules } from '../support/stack.js';

/**
 * Issue 29 on a real daemon (LXD 5.0.2, Incus 6.0): a container whose probed command starts failing
 * (`test -f /tmp/ok`, the file removed: the service "hangs") is seen unhealthy after
 * failureThreshold checks, the rule restores it with exec (`touch /tmp/ok`), the probe is healthy
 * again, and the audit tells the story; an operator's stop of an unhealthy instance is never undone.
 */
const probeConfig = {
  'user.reflex.probe.exec': 'test -f /tmp/ok',
  'user.reflex.probe.period': '500ms',
  'user.reflex.probe.failure-threshold': '2',
  'user.reflex.probe.timeout': '5s',
};
const rules = (command: string, then = '') =>
  writeRules({
    'heal.ts': `import { defineRule } from 'reflex-lxd';
export default defineRule({
  name: 'heal-service',
  on: { kind: 'instance.health', health: ['unhealthy'] },
  crashLoop: { maxRestarts: 20, windowMs: 600_000, initialBackoffMs: 0 },
  actions: [{ action: 'exec', params: { command: ['sh', '-c', ${JSON.stringify(command)}], timeout: '30s' } }${then}],
});
`,
  });

const health = (r: StoredAuditRecord) => (r as { event?: { kind?: string; health?: string } }).event;
const healthOf = (rs: StoredAuditRecord[]) =>
  rs.filter((r) => r.type === 'event' && health(r)?.kind === 'instance.health').map((r) => health(r)!.health);
const show = (rs: StoredAuditRecord[]) => rs.map((r) => `${r.type}: ${r.summary}`).join('\n');

await describeEachBed('health probes on a real daemon', (bed) => {
  it('the hung service is seen unhealthy, restored by the rule’s exec, and healthy again', async () => {
    const prefix = uniquePrefix('probe-heal');
    const name = `${TEST_INSTANCE_PREFIX}${randomBytes(4).toString('hex')}`;
    await bed.launch({ name, config: probeConfig });
    await bed.cli(['exec', name, '--', 'touch', '/tmp/ok']);
    const run = startReflexOn(bed, redisUrl(), prefix, { args: ['--rules', rules('touch /tmp/ok'), '--no-typecheck'] });
    try {
      await run.waitForLog('reflex running');
      await bed.cli(['exec', name, '--', 'rm', '/tmp/ok']);
      const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => healthOf(rs).includes('healthy'), 90_000);
      expect(healthOf(trail), show(trail)).toEqual(['unhealthy', 'healthy']);
      const unhealthy = trail.findIndex((r) => health(r)?.health === 'unhealthy');
      const exec = trail.findIndex(
        (r) => r.type === 'outcome' && /touch \/tmp\/ok' exited with 0|touch \/tmp\/ok exited with 0/.test(String(r.summary)),
      );
      const healthy = trail.findIndex((r) => health(r)?.health === 'healthy');
      expect(exec, show(trail)).toBeGreaterThan(unhealthy);
      expect(healthy).toBeGreaterThan(exec);
      expect((health(trail[unhealthy]!) as { consecutive?: number }).consecutive).toBe(2);
    } finally {
      await run.stop();
      await bed.remove(name);
    }
  }, 300_000);

  it("an operator's stop while unhealthy is never undone", async () => {
    const prefix = uniquePrefix('probe-stop');
    const name = `${TEST_INSTANCE_PREFIX}${randomBytes(4).toString('hex')}`;
    await bed.launch({ name, config: probeConfig });
    const run = startReflexOn(bed, redisUrl(), prefix, { args: ['--rules', rules('true'), '--no-typecheck'] });
    try {
      await run.waitForLog('reflex running');
      await waitForAudit(redisUrl(), prefix, name, (rs) => healthOf(rs).includes('unhealthy'), 90_000);
      await bed.cli(['stop', name, '--force']);
      const trail = await waitForAudit(
        redisUrl(),
        prefix,
        name,
        // The stop's event, however attributed: whether a stop during Reflex's own exec is told
        // apart from Reflex's (issue #43 item 2) is not this test's; that it is never undone is.
        (rs) => rs.some((r) => r.type === 'event' && /→ 102 \(/.test(String(r.summary))),
        60_000,
      );
      // The stop was decided on (the bundled rules are not loaded: nothing listens to it) and the instance stays stopped.
      expect((await bed.status(name)).status_code, show(trail)).toBe(STATUS_STOPPED);
      expect(trail.filter((r) => r.type === 'call' && /\/state/.test(String(r.summary)))).toEqual([]);
    } finally {
      await run.stop();
      await bed.remove(name);
    }
  }, 300_000);

  it("an operator's stop while Reflex's exec runs is the operator's: the rule's next action (a restart) is not sent", async () => {
    const prefix = uniquePrefix('probe-stop-exec');
    const name = `${TEST_INSTANCE_PREFIX}${randomBytes(4).toString('hex')}`;
    await bed.launch({ name, config: probeConfig });
    // The race widened: Reflex's exec runs 20 s, and the operator stops the instance in the middle of it.
    const run = startReflexOn(bed, redisUrl(), prefix, { args: ['--rules', rules('sleep 20', ", { action: 'restart' }"), '--no-typecheck'] });
    try {
      await run.waitForLog('reflex running');
      await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'call' && /\/exec/.test(String(r.summary))), 90_000);
      await bed.cli(['stop', name, '--force']);
      const trail = await waitForAudit(
        redisUrl(),
        prefix,
        name,
        (rs) => rs.some((r) => r.type === 'event' && /→ 102 \(/.test(String(r.summary))) && rs.some((r) => r.type === 'outcome'),
        60_000,
      );
      // Long enough for the restart to be sent had the stop been taken for Reflex's own.
      await new Promise((r) => setTimeout(r, 5_000));
      const after = await waitForAudit(redisUrl(), prefix, name, () => true);
      const stop = after.find((r) => r.type === 'event' && /→ 102 \(/.test(String(r.summary)))!;
      expect(String(stop.summary), show(after)).toMatch(/→ 102 \(requested/);
      expect(
        after.filter((r) => r.type === 'call' && /\/state/.test(String(r.summary))),
        show(after),
      ).toEqual([]);
      expect((await bed.status(name)).status_code, show(trail)).toBe(STATUS_STOPPED);
    } finally {
      await run.stop();
      await bed.remove(name);
    }
  }, 300_000);
});
