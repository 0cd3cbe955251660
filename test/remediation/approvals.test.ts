import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { Metrics } from '../../src/metrics/metrics.js';
import type { RedisConnection } from '../../src/redis/connect.js';
import { keySpace, type KeySpace } from '../../src/redis/key-space.js';
import type { HeldJob } from '../../src/remediation/approvals.js';
import { PendingActions, type PendingAction } from '../../src/remediation/pending-actions.js';
import type { InstanceRef } from '../../src/redis/key-space.js';
import { recordingAlerts } from '../alerts/recording-alerts.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { VirtualClock } from '../support/virtual-clock.js';

/**
 * The approval store on real Redis (issue #42, approvals): the first decision wins across
 * deciders, a decision needs the rule's role, a deadline is a deadline whoever decides, a settle
 * round run twice queues once, an approved back-off keeps what is left of its delay, and the
 * signed link verifies only as signed. The real daemons' walk (a crash held, approved, denied,
 * timed out, withdrawn): real-approvals.test.ts.
 */
describe('actions held for approval', () => {
  let redis: RedisConnection;
  const queues: Queue[] = [];
  beforeAll(() => {
    redis = redisClient();
  });
  afterAll(async () => {
    for (const q of queues) await q.close();
    redis.disconnect();
  });

  function parts(clock = new VirtualClock()): { keys: KeySpace; pending: PendingActions; queue: Queue; audit: AuditLog; clock: VirtualClock } {
    const keys = keySpace(uniquePrefix('approvals'));
    const queue = new Queue(keys.actionsQueue, { connection: redis, prefix: keys.bullPrefix });
    queues.push(queue);
    const audit = new AuditLog(redis, keys.audit);
    return {
      keys,
      queue,
      audit,
      clock,
      pending: new PendingActions(redis, keys, queue, { audit, clock, consoleUrl: 'https://reflex.example.org/dashboard' }),
    };
  }
  const ref = { target: 'unix:///sim', project: 'default', instance: 'web-1' };
  const job = (i: number, delay?: number): HeldJob => ({
    name: 'start',
    data: { action: 'start', rule: 'r', correlationId: 'c-1', ...ref },
    opts: { jobId: `r:c-1:${i}`, ...(delay ? { delay } : {}) },
  });
  const request = (o: { role?: 'operator' | 'admin'; timeoutMs?: number; jobs?: HeldJob[] } = {}) => ({
    rule: 'r',
    ...ref,
    correlationId: 'c-1',
    summary: 'matched',
    role: o.role ?? 'operator',
    timeoutMs: o.timeoutMs ?? 60_000,
    jobs: o.jobs ?? [job(0)],
  });
  const alice = { actor: 'alice', origin: 'console', role: 'operator' } as const;
  const bob = { actor: 'bob', origin: 'cli', role: 'admin' } as const;

  it('takes the first of two decisions sent at once, and tells the other it came second', async () => {
    const { pending } = parts();
    const a = await pending.holdForApproval(ref, request());
    const [one, two] = await Promise.all([pending.approvals.decide(a.id, 'approved', alice), pending.approvals.decide(a.id, 'denied', bob)]);
    expect([one.decided, two.decided].sort()).toEqual([false, true]);
    const loser = one.decided ? two : one;
    expect(!loser.decided && loser.why).toMatch(/already; nothing was done/);
    expect((await pending.approvals.get(a.id))!.status).toBe(one.decided ? 'approved' : 'denied');
  });

  it('asks once per rule and incident: the event job retried after a failure half-way finds its request, deadline unchanged', async () => {
    const { pending, audit, clock } = parts();
    const first = await pending.holdForApproval(ref, request());
    clock.advance(1_000);
    const again = await pending.holdForApproval(ref, request());
    expect(again.id).toBe(first.id);
    expect(again.expiresAt).toBe(first.expiresAt);
    expect((await audit.read({})).filter((r) => r.type === 'approval').map((r) => r.result)).toEqual(['requested']);
    expect(await pending.approvals.list()).toHaveLength(1);
  });

  it('refuses a decider below the role the rule asks for, audited, and decides nothing', async () => {
    const { pending, audit } = parts();
    const a = await pending.holdForApproval(ref, request({ role: 'admin' }));
    await expect(pending.approvals.decide(a.id, 'approved', alice)).rejects.toMatchObject({ code: 'APPROVAL_FORBIDDEN' });
    await expect(pending.approvals.decide(a.id, 'approved', { actor: 'vera', origin: 'console', role: 'viewer' })).rejects.toMatchObject({
      code: 'APPROVAL_FORBIDDEN',
    });
    expect((await pending.approvals.get(a.id))!.status).toBe('pending');
    const refused = (await audit.read({})).filter((r) => r.type === 'approval' && r.result === 'refused');
    expect(refused.map((r) => r.actor)).toEqual(['alice', 'vera']);
    expect((await pending.approvals.decide(a.id, 'approved', bob)).decided).toBe(true);
  });

  it('times out a request past its deadline, whoever decides: a late approval is refused and nothing is queued', async () => {
    const { pending, queue, clock, audit } = parts();
    const a = await pending.holdForApproval(ref, request({ timeoutMs: 5_000 }));
    clock.advance(5_000);
    const late = await pending.approvals.decide(a.id, 'approved', bob);
    expect(late.decided).toBe(false);
    expect(!late.decided && late.why).toMatch(/timed out/);
    await pending.approvals.settleDue();
    expect(await queue.getJobCounts('waiting', 'delayed')).toEqual({ waiting: 0, delayed: 0 });
    const records = (await audit.read({})).filter((r) => r.type === 'approval');
    expect(records.map((r) => r.result)).toEqual(['requested', 'expired']);
  });

  it('a settle round run twice (two replicas) queues the approved jobs once, with what is left of their back-off', async () => {
    const { pending, queue, clock, keys } = parts();
    const a = await pending.holdForApproval(ref, request({ jobs: [job(0, 10_000), job(1)] }));
    clock.advance(4_000);
    await pending.approvals.decide(a.id, 'approved', alice);
    await Promise.all([pending.approvals.settleDue(), pending.approvals.settleDue()]);
    await pending.approvals.settleDue();
    const jobs = await queue.getJobs(['waiting', 'delayed']);
    expect(jobs.map((j) => j.id).sort()).toEqual(['r:c-1:0', 'r:c-1:1']);
    expect(jobs.find((j) => j.id === 'r:c-1:0')!.opts.delay).toBe(6_000);
    // The delayed one is indexed with the instance's pending actions: an operator's transition removes it.
    expect(Object.keys(await redis.hgetall(keys.pendingActions(ref)))).toEqual(['r:c-1:0']);
    expect((await pending.approvals.get(a.id))!.settled).toBe(true);
  });

  it("is withdrawn by an operator's transition of the instance while it waits, and then cannot be approved", async () => {
    const { pending } = parts();
    const a = await pending.holdForApproval(ref, request());
    const cancelled = await pending.cancel(ref);
    expect(cancelled).toMatchObject([{ approval: a.id, rule: 'r', action: 'start' }]);
    const late = await pending.approvals.decide(a.id, 'approved', bob);
    expect(!late.decided && late.why).toMatch(/withdrawn already/);
  });

  it("is withdrawn before anyone is asked when an operator's transition lands between the rule's decision and its request", async () => {
    const keys = keySpace(uniquePrefix('approvals'));
    const queue = new Queue(keys.actionsQueue, { connection: redis, prefix: keys.bullPrefix });
    queues.push(queue);
    const audit = new AuditLog(redis, keys.audit);
    const { alerts, raised } = recordingAlerts(audit);
    const cancelled: PendingAction[] = [];
    /** The operator's stop lands the moment the request is indexed, before it is made. */
    class Raced extends PendingActions {
      override async add(r: InstanceRef, p: PendingAction): Promise<void> {
        await super.add(r, p);
        if (p.approval) cancelled.push(...(await this.cancel(r)));
      }
    }
    const pending = new Raced(redis, keys, queue, { audit, alerts });
    const a = await pending.holdForApproval(ref, request());
    expect(cancelled).toMatchObject([{ approval: a.id }]);
    expect(a).toMatchObject({ status: 'withdrawn', unasked: true });
    await pending.approvals.settleDue();
    expect(raised, 'nobody asked, nothing to end').toEqual([]);
    const records = (await audit.read({})).filter((r) => r.type === 'approval');
    expect(records.map((r) => r.result)).toEqual(['withdrawn']);
    expect(records[0]!.summary).toMatch(/^start of web-1 \(rule r\) not done: the approval request was withdrawn/);
    const late = await pending.approvals.decide(a.id, 'approved', bob);
    expect(!late.decided && late.why).toMatch(/withdrawn already/);
    expect(await queue.getJobCounts('waiting', 'delayed')).toEqual({ waiting: 0, delayed: 0 });
  });

  it('counts a decision once when two replicas settle it at the same time', async () => {
    const keys = keySpace(uniquePrefix('approvals'));
    const queue = new Queue(keys.actionsQueue, { connection: redis, prefix: keys.bullPrefix });
    queues.push(queue);
    const audit = new AuditLog(redis, keys.audit);
    const metrics = new Metrics({ processMetrics: false });
    const replicas = [0, 1].map(() => new PendingActions(redis, keys, queue, { audit, metrics }));
    const a = await replicas[0]!.holdForApproval(ref, request());
    await replicas[1]!.approvals.decide(a.id, 'denied', bob);
    await Promise.all(replicas.map((p) => p.approvals.settleDue()));
    const counted = (await metrics.approvals.get()).values.map((v) => [v.labels.result, v.value]);
    expect(counted.sort()).toEqual([
      ['denied', 1],
      ['requested', 1],
    ]);
  });

  it('signs its links: the signature of the link verifies, a changed one or another id does not', async () => {
    const { pending } = parts();
    const a = await pending.holdForApproval(ref, request());
    const link = await pending.approvals.links.link(a.id);
    expect(link).toMatch(new RegExp(`^https://reflex\\.example\\.org/dashboard/approvals/${a.id}\\?sig=[A-Za-z0-9_-]{32}$`));
    const sig = new URL(link).searchParams.get('sig')!;
    expect(await pending.approvals.links.verify(a.id, sig)).toBe(true);
    expect(await pending.approvals.links.verify(a.id, `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`)).toBe(false);
    expect(await pending.approvals.links.verify('ap-other', sig)).toBe(false);
    expect(await pending.approvals.links.verify(a.id, '')).toBe(false);
  });
});
