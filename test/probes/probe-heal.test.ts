import { describe, expect, it } from 'vitest';
import type { StoredAuditRecord } from '../../src/audit/audit-log.js';
import { Silences } from '../../src/silences/silences.js';
import { waitForAudit } from '../support/audit-trail.js';
import { redisUrl } from '../support/redis.js';
import { startStack } from '../support/stack.js';
import { stoppedAfterEach } from '../support/stopped-after-each.js';
import { until } from '../support/wait.js';

/** An instance probed by its own config keys: `command` every 300 ms, unhealthy after 2 failures. */
const probed = (name: string, command: string) => ({
  name,
  status: 'Running' as const,
  config: { 'user.reflex.probe.exec': command, 'user.reflex.probe.period': '300ms', 'user.reflex.probe.failure-threshold': '2' },
});

/** A rule healing an unhealthy instance by `command`, under a crash-loop budget of `maxRestarts`. */
const healRule = (command: string, maxRestarts = 5) => ({
  'heal.ts': `import { defineRule } from 'reflex-lxd';
export default defineRule({
  name: 'heal-service',
  on: { kind: 'instance.health', health: ['unhealthy'] },
  crashLoop: { maxRestarts: ${maxRestarts}, windowMs: 600_000, initialBackoffMs: 0 },
  actions: [{ action: 'exec', params: { command: ['sh', '-c', ${JSON.stringify(command)}], timeout: '5s' } }],
});
`,
});

const health = (r: StoredAuditRecord) => (r as { event?: { kind?: string; health?: string; previous?: string } }).event;
const healthEvents = (rs: StoredAuditRecord[]) =>
  rs.filter((r) => r.type === 'event' && health(r)?.kind === 'instance.health').map((r) => `${health(r)!.previous}→${health(r)!.health}`);
const lines = (rs: StoredAuditRecord[]) => rs.map((r) => `${r.type}: ${r.summary}`).join('\n');

describe('health probes heal the hung service (simulator)', () => {
  const stopped = stoppedAfterEach();

  it('a failing probe is unhealthy after failureThreshold checks, the rule restores the service with exec, and the audit tells the story', async () => {
    const stack = stopped(
      await startStack({ redisUrl: redisUrl(), instances: [probed('web1', 'test -f /tmp/ok')], rules: healRule('touch /tmp/ok') }),
    );
    // The service works, then hangs: its file goes away.
    await (await stack.client.exec('web1', { command: ['touch', '/tmp/ok'] })).wait({ timeoutMs: 20_000 });
    await waitForAudit(redisUrl(), stack.prefix, 'web1', () => true);
    const rm = await (await stack.client.exec('web1', { command: ['rm', '/tmp/ok'] })).wait({ timeoutMs: 20_000 });
    expect(rm.exitCode).toBe(0);
    const trail = await waitForAudit(
      redisUrl(),
      stack.prefix,
      'web1',
      (rs) => healthEvents(rs).some((e) => e.endsWith('→healthy')) && healthEvents(rs).some((e) => e.endsWith('→unhealthy')),
      60_000,
    );
    const story = healthEvents(trail);
    expect(story[0], lines(trail)).toMatch(/→unhealthy$/);
    expect(story.at(-1)).toBe('unhealthy→healthy');
    const unhealthyAt = trail.findIndex((r) => health(r)?.health === 'unhealthy');
    const exec = trail.findIndex((r) => r.type === 'call' && (r as { action?: string }).action === 'exec');
    const healthyAt = trail.findIndex((r) => health(r)?.health === 'healthy');
    expect(unhealthyAt, lines(trail)).toBeGreaterThanOrEqual(0);
    expect(exec).toBeGreaterThan(unhealthyAt);
    expect(healthyAt).toBeGreaterThan(exec);
    const event = health(trail[unhealthyAt]!) as Record<string, unknown>;
    expect(event).toMatchObject({ probe: 'config', check: 'exec', consecutive: 2 });
    expect(String(event.output)).toMatch(/^exit 1/);
  }, 120_000);

  it('a probe that keeps failing is remediated again after each failed remediation, and ends in quarantine with one alert', async () => {
    const stack = stopped(await startStack({ redisUrl: redisUrl(), instances: [probed('web1', 'test -f /tmp/never')], rules: healRule('true', 2) }));
    const trail = await waitForAudit(
      redisUrl(),
      stack.prefix,
      'web1',
      (rs) => rs.some((r) => r.type === 'alert' && /crash-looping/.test(String(r.summary))),
      90_000,
    );
    // Unhealthy, exec (restart 1), still unhealthy, exec (restart 2), still unhealthy: quarantined.
    expect(healthEvents(trail)).toEqual(['unknown→unhealthy', 'unhealthy→unhealthy', 'unhealthy→unhealthy']);
    expect(trail.filter((r) => r.type === 'outcome' && /exec: sh -c true exited with 0/.test(String(r.summary)))).toHaveLength(2);
    expect(
      trail.filter((r) => r.type === 'alert'),
      lines(trail),
    ).toHaveLength(1);
    // The audit records transitions, not each check: the daemon's announcements of the probe's execs are not in it.
    const probeExecs = trail.filter((r) => JSON.stringify((r as { event?: { context?: unknown } }).event?.context ?? {}).includes('/tmp/never'));
    expect(probeExecs).toEqual([]);
  }, 120_000);

  it('an instance an operator opts in while Reflex runs is probed within the 10 s cadence: the daemon announces the change, though no instance had a probe', async () => {
    const stack = stopped(await startStack({ redisUrl: redisUrl(), instances: [{ name: 'web1', status: 'Running' }], rules: healRule('true') }));
    const runner = stack.reflex.probes!;
    await until('the first listing', () => (runner.counts.listings >= 1 ? true : undefined), 30_000);
    stack.sim.controls.scriptCommand({ command: 'check-web', outcomes: [{ exitCode: 1 }] });
    const optedInAt = Date.now();
    await stack.client.update('web1', (i) => ({ ...i, config: { ...i.config, ...probed('web1', 'check-web').config } }));
    // Without the announcement the next listing would come a minute after the first.
    const trail = await waitForAudit(redisUrl(), stack.prefix, 'web1', (rs) => healthEvents(rs).length >= 1, 40_000);
    expect(Date.now() - optedInAt, lines(trail)).toBeLessThan(40_000);
  }, 120_000);

  it('a silenced instance is not probed; its neighbour is', async () => {
    const stack = stopped(
      await startStack({
        redisUrl: redisUrl(),
        instances: [probed('quiet', 'check-web'), probed('loud', 'check-web')],
        rules: healRule('true'),
        reflex: false,
      }),
    );
    stack.sim.controls.scriptCommand({ command: 'check-web', outcomes: [{ exitCode: 1, stderr: 'down\n' }] });
    await new Silences(stack.redis, stack.keys.silences).add({ scope: { instance: 'quiet' }, reason: 'maintenance', durationMs: 600_000 });
    await stack.replica();
    await waitForAudit(redisUrl(), stack.prefix, 'loud', (rs) => healthEvents(rs).length >= 1, 60_000);
    expect(stack.sim.controls.commandCalls('loud', 'check-web')).toBeGreaterThanOrEqual(2);
    expect(stack.sim.controls.commandCalls('quiet', 'check-web')).toBe(0);
  }, 120_000);

  it("an operator's stop while unhealthy is never undone, and the stopped instance is not probed", async () => {
    const stack = stopped(await startStack({ redisUrl: redisUrl(), instances: [probed('web1', 'check-web')], rules: healRule('true', 100) }));
    stack.sim.controls.scriptCommand({ command: 'check-web', outcomes: [{ exitCode: 1 }] });
    await waitForAudit(redisUrl(), stack.prefix, 'web1', (rs) => healthEvents(rs).length >= 1, 60_000);
    await (await stack.client.changeState('web1', { action: 'stop', force: true })).wait({ timeoutMs: 20_000 });
    const calls = await waitForAudit(
      redisUrl(),
      stack.prefix,
      'web1',
      (rs) => rs.some((r) => r.type === 'event' && /→ 102/.test(String(r.summary))),
      60_000,
    );
    // Two more periods' worth of passes: a probe of the stopped instance would have run by then.
    const before = stack.sim.controls.commandCalls('web1', 'check-web');
    const runner = stack.reflex.probes!;
    const passes = runner.counts.checks;
    await waitForAudit(redisUrl(), stack.prefix, 'web1', () => true);
    expect(calls.some((r) => r.type === 'event')).toBe(true);
    expect(stack.sim.controls.commandCalls('web1', 'check-web')).toBeLessThanOrEqual(before + 1);
    expect(runner.counts.checks).toBeLessThanOrEqual(passes + 1);
    expect((await stack.client.getInstance('web1')).value.status).toBe('Stopped');
  }, 120_000);
});
