import { afterAll, beforeAll, expect, it } from 'vitest';
import { waitForAudit } from '../support/audit-trail.js';
import { describeBed, lxdBed } from '../support/daemon-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { startStack, type DaemonStack } from '../support/stack.js';
import { queueIdle } from '../support/settled.js';

/**
 * The exec action on the real daemon: a health check run when an operator starts an instance
 * (busybox: `sh -c 'echo out; echo err >&2; sleep 1; exit 3'`) fails, and the rule's onFailure
 * branch force-restarts the instance; a command that outlives its timeout is killed on the daemon.
 * The check sleeps a second before it exits: LXD before 5.14 (5.0.2 here) sometimes closes the
 * output streams of a command that exits at once before their last output (canonical/lxd#11890),
 * and this test is about what Reflex records of the output the daemon does send.
 */
const rules = {
  'check.ts': `import { StatusCode, defineRule } from 'reflex-lxd';
export default [
  defineRule({
    name: 'check-after-start',
    on: { kind: 'instance.status', to: [StatusCode.Running], intent: ['requested'] },
    scope: { filter: 'config.user.reflex.exec-test eq fail' },
    actions: [{ action: 'exec', params: { command: ['sh', '-c', 'echo out; echo err >&2; sleep 1; exit 3'], timeout: '10s' }, onFailure: [{ action: 'restart', params: { force: true } }] }],
  }),
  defineRule({
    name: 'slow-check',
    on: { kind: 'instance.status', to: [StatusCode.Running], intent: ['requested'] },
    scope: { filter: 'config.user.reflex.exec-test eq slow' },
    actions: [{ action: 'exec', params: { command: ['sleep', '30'], timeout: '1s' } }],
  }),
  defineRule({
    name: 'on-exec',
    on: { kind: 'lifecycle', action: ['instance-exec'] },
    scope: { filter: 'config.user.reflex.exec-test eq fail' },
    actions: [{ action: 'exec', params: { command: ['true'] } }],
  }),
];
`,
};

await describeBed(lxdBed, 'the exec action on real LXD', () => {
  const instances: string[] = [];
  let stack: DaemonStack | undefined;
  const prefix = uniquePrefix('exec-lxd');

  beforeAll(async () => {
    stack = await startStack({ redisUrl: redisUrl(), daemon: lxdBed.target, rules, prefix });
  }, 30_000);

  afterAll(async () => {
    await stack?.stop();
    for (const name of instances) await lxdBed.remove(name);
  });

  it('a failing check records exit code 3, "out", "err" and the duration, then its onFailure branch restarts the instance; its own exec triggers no rule', async () => {
    const name = await lxdBed.launch({ config: { 'user.reflex.exec-test': 'fail' } });
    instances.push(name);
    const pidBefore = (await lxdBed.status(name)).pid;
    const trail = await waitForAudit(
      redisUrl(),
      prefix,
      name,
      (rs) => rs.some((r) => r.type === 'outcome' && String(r.summary).startsWith('restart')),
      45_000,
    );
    const exec = trail.find((r) => r.type === 'call' && r.action === 'exec' && r.exitCode !== undefined)!;
    expect(exec).toMatchObject({
      command: ['sh', '-c', 'echo out; echo err >&2; sleep 1; exit 3'],
      exitCode: 3,
      stdout: 'out\n',
      stderr: 'err\n',
      timedOut: false,
    });
    expect(exec.durationMs).toBeGreaterThan(0);
    expect(trail.find((r) => r.type === 'outcome' && r.code === 'EXEC_FAILED')!.summary).toMatch(
      /exited with 3 \(expected 0\); running its onFailure branch \(restart\)$/,
    );
    expect(trail.find((r) => r.type === 'outcome' && String(r.summary).startsWith('restart'))).toMatchObject({ result: 'done' });
    expect(trail.filter((r) => r.type === 'give-up' || r.type === 'alert')).toEqual([]);
    const after = await lxdBed.status(name);
    expect(after.status).toBe('Running');
    expect(after.pid).not.toBe(pidBefore);
    // Reflex's exec sent an instance-exec event; no rule answered it (the restart, Reflex's own, neither).
    await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'event' && String(r.summary).startsWith('instance-exec')));
    await queueIdle(redisUrl(), prefix, 'eventsQueue'); // every event heard so far is decided on
    const final = await waitForAudit(redisUrl(), prefix, name, () => true);
    expect(final.some((r) => r.type === 'event' && String(r.summary).startsWith('instance-exec'))).toBe(true);
    expect(final.filter((r) => r.type === 'decision' && r.rule === 'on-exec')).toEqual([]);
    expect(final.filter((r) => r.type === 'call' && r.action === 'exec' && r.exitCode !== undefined)).toHaveLength(1);
  }, 90_000);

  it("an operator's exec does trigger the lifecycle rule", async () => {
    const name = instances[0]!;
    await lxdBed.cli(['exec', name, '--', 'true']);
    const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'decision' && r.rule === 'on-exec'), 20_000);
    expect(trail.find((r) => r.type === 'decision' && r.rule === 'on-exec')).toMatchObject({ matched: true });
  }, 30_000);

  it('a command that outlives its timeout is killed on the daemon and recorded as timed out', async () => {
    const name = await lxdBed.launch({ config: { 'user.reflex.exec-test': 'slow' } });
    instances.push(name);
    const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'give-up'), 45_000);
    const exec = trail.find((r) => r.type === 'call' && r.action === 'exec' && r.timedOut !== undefined)!;
    expect(exec).toMatchObject({ command: ['sleep', '30'], timedOut: true, exitCode: 137 });
    expect(exec.durationMs).toBeLessThan(10_000);
    expect(trail.find((r) => r.type === 'outcome' && r.result === 'failed')).toMatchObject({ code: 'EXEC_TIMEOUT' });
    const ps = await lxdBed.cli(['exec', name, '--', 'ps']);
    expect(ps).not.toMatch(/sleep 30/);
  }, 90_000);
});
