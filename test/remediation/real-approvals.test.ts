import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StoredAuditRecord } from '../../src/audit/audit-log.js';
import { auditTrail, waitForAudit } from '../support/audit-trail.js';
import { STATUS_RUNNING, describeEachBed } from '../support/daemon-bed.js';
import { redisUrl, uniquePrefix } from '../support/redis.js';
import { runReflex } from '../support/reflex-process.js';
import { startStack, type DaemonStack } from '../support/stack.js';
import { until } from '../support/wait.js';

/**
 * Issue #42, approvals, on the real daemons (LXD 5.0.2, Incus 6.0): a rule whose start needs an
 * operator's approval holds it after a crash; `reflex approve` starts the instance (the start
 * re-checked at the moment of acting), `reflex deny` leaves it down, and a request nobody decides
 * in time does nothing and alerts; an operator's own start withdraws a waiting request. Each
 * decision is audited with who took it.
 */
const STATUS_STOPPED = 102;

const rules = (timeout: string) => ({
  'approved-restart.ts': `import { StatusCode, defineRule } from 'reflex-lxd';
export default defineRule({
  name: 'approved-restart',
  on: { kind: 'instance.status', to: [StatusCode.Stopped], intent: ['unrequested'] },
  scope: { filter: 'config.user.reflex.approval-test eq yes' },
  actions: [{ action: 'start' }],
  approval: { role: 'operator', timeout: '${timeout}' },
});
`,
});

interface SentAlert {
  kind: string;
  status: string;
  summary: string;
  instance: string;
  labels: Record<string, string>;
}

await describeEachBed('actions held for approval', (bed) => {
  const names: string[] = [];
  let stack: DaemonStack | undefined;
  let shortStack: DaemonStack | undefined;
  const prefix = uniquePrefix(`approval-${bed.name}`);
  const shortPrefix = uniquePrefix(`approval-timeout-${bed.name}`);
  const sent = (s: DaemonStack | undefined): SentAlert[] => s!.webhook!.requests.flatMap((r) => (r.json as { alerts: SentAlert[] }).alerts);

  beforeAll(async () => {
    stack = await startStack({ redisUrl: redisUrl(), daemon: bed.target, rules: rules('10m'), prefix, webhook: true });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await shortStack?.stop();
    for (const name of names) await bed.remove(name);
  });

  async function crashed(p: string): Promise<{ name: string; approval: StoredAuditRecord }> {
    const name = await bed.launch({ config: { 'user.reflex.approval-test': 'yes' } });
    names.push(name);
    await bed.crash(name);
    const trail = await waitForAudit(redisUrl(), p, name, (rs) => rs.some((r) => r.type === 'approval' && r.result === 'requested'), 30_000);
    return { name, approval: trail.find((r) => r.type === 'approval')! };
  }
  const decide = (p: string, verb: string, id: string) =>
    runReflex([verb, id, '--reason', 'on call', '--redis', redisUrl(), '--prefix', p], { USER: 'alice' });

  it('holds the start until an operator approves it, then starts the instance, audited with the approver', async () => {
    const { name, approval } = await crashed(prefix);
    const id = String(approval.approval);
    expect(await bed.status(name)).toMatchObject({ status_code: STATUS_STOPPED });
    await until('the approval alert with its signed link', () =>
      sent(stack).find((a) => a.kind === 'action.approval-requested' && a.status === 'firing' && a.labels.approval === id),
    );
    const alert = sent(stack).find((a) => a.kind === 'action.approval-requested')!;
    expect(alert.summary).toMatch(new RegExp(`/dashboard/approvals/${id}\\?sig=[A-Za-z0-9_-]{32}`));
    expect(alert.summary).toContain(`reflex approve ${id}`);
    // Nothing was queued meanwhile: the instance is still down.
    expect((await auditTrail(redisUrl(), prefix, name)).filter((r) => r.type === 'action')).toEqual([]);

    const res = await decide(prefix, 'approve', id);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    await bed.waitForStatus(name, STATUS_RUNNING, 30_000);
    const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'outcome' && r.result === 'done'), 30_000);
    expect(trail.find((r) => r.type === 'approval' && r.result === 'approved')).toMatchObject({ actor: 'alice', origin: 'cli', approval: id });
    expect(trail.find((r) => r.type === 'action')).toMatchObject({ approval: id });
    await until('the approval alert resolved', () =>
      sent(stack).find((a) => a.kind === 'action.approval-requested' && a.status === 'resolved' && a.labels.approval === id),
    );
  });

  it('leaves the instance down when an operator denies, and a later approval changes nothing', async () => {
    const { name, approval } = await crashed(prefix);
    const id = String(approval.approval);
    const res = await decide(prefix, 'deny', id);
    expect(res.code).toBe(0);
    const trail = await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'approval' && r.result === 'denied'));
    expect(trail.find((r) => r.type === 'approval' && r.result === 'denied')).toMatchObject({ actor: 'alice', origin: 'cli' });
    const late = await decide(prefix, 'approve', id);
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(/not approved: it was denied already; nothing was done/);
    await until('the approval alert resolved as denied', () =>
      sent(stack).find((a) => a.kind === 'action.approval-requested' && a.status === 'resolved' && a.labels.approval === id),
    );
    expect(await bed.status(name)).toMatchObject({ status_code: STATUS_STOPPED });
    expect((await auditTrail(redisUrl(), prefix, name)).filter((r) => r.type === 'action' || r.type === 'call')).toEqual([]);
  });

  it('withdraws a waiting request when an operator starts the instance: approving it afterwards does nothing', async () => {
    const { name, approval } = await crashed(prefix);
    const id = String(approval.approval);
    await bed.start(name);
    await waitForAudit(redisUrl(), prefix, name, (rs) => rs.some((r) => r.type === 'outcome' && r.recheck === 'superseded'));
    const late = await decide(prefix, 'approve', id);
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(/it was withdrawn already/);
    expect((await auditTrail(redisUrl(), prefix, name)).filter((r) => r.type === 'call')).toEqual([]);
  });

  it('does nothing when nobody decides in time: the request times out with an alert, and a late approval is refused', async () => {
    shortStack = await startStack({ redisUrl: redisUrl(), daemon: bed.target, rules: rules('3s'), prefix: shortPrefix, webhook: true });
    // Only the short-timeout Reflex watches now: the first one would hold a 10-minute request for the same crash.
    await stack?.stop();
    stack = undefined;
    const { name, approval } = await crashed(shortPrefix);
    const id = String(approval.approval);
    const trail = await waitForAudit(redisUrl(), shortPrefix, name, (rs) => rs.some((r) => r.type === 'approval' && r.result === 'expired'), 30_000);
    expect(trail.find((r) => r.type === 'approval' && r.result === 'expired')!.summary).toMatch(/not done: the approval timed out/);
    await until('the timed-out notice', () => sent(shortStack).find((a) => a.kind === 'action.approval-timed-out' && a.labels.approval === id));
    const late = await decide(shortPrefix, 'approve', id);
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(/it was expired already/);
    expect(await bed.status(name)).toMatchObject({ status_code: STATUS_STOPPED });
    expect((await auditTrail(redisUrl(), shortPrefix, name)).filter((r) => r.type === 'call')).toEqual([]);
  });
});
