import { createHash } from 'node:crypto';
import type { JobsOptions } from 'bullmq';
import { z } from 'zod';
import { approvalRequestedKind, approvalTimedOutKind } from '../alerts/catalogue.js';
import type { Alerts } from '../alerts/alerts.js';
import type { AlertInput } from '../alerts/alert.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { Metrics } from '../metrics/metrics.js';
import { systemClock, type Clock } from '../clock/clock.js';
import { roleAtLeast, type Role } from '../config/roles.js';
import { ReflexError } from '../errors/reflex-error.js';
import type { RedisConnection } from '../redis/connect.js';
import type { ApprovalKeys, InstanceRef } from '../redis/key-space.js';
import { LuaScript } from '../redis/script.js';
import { formatDuration } from '../schedules/housekeeping/duration-text.js';
import { ApprovalLinks } from './approval-links.js';
import { Trail } from './trail.js';

/** What became of a request: waiting, or decided (by a person, the clock, or an operator's own transition). */
export const approvalStatuses = ['pending', 'approved', 'denied', 'expired', 'withdrawn'] as const;
export type ApprovalStatus = (typeof approvalStatuses)[number];

/** An action job as it will be added once approved: BullMQ's name, data and options. */
const heldJobSchema = z.object({
  name: z.string(),
  data: z.looseObject({ action: z.string() }),
  opts: z.custom<JobsOptions & { jobId: string; delay?: number }>(
    (v) => typeof v === 'object' && v !== null && typeof (v as { jobId?: unknown }).jobId === 'string',
    'job options with a jobId',
  ),
});
export type HeldJob = z.infer<typeof heldJobSchema>;

const requestSchema = z.object({
  id: z.string(),
  rule: z.string(),
  target: z.string(),
  project: z.string(),
  instance: z.string(),
  uuid: z.string().optional(),
  location: z.string().optional(),
  correlationId: z.string(),
  /** The decision as audited, e.g. "matched: restart-on-crash". */
  summary: z.string(),
  role: z.enum(['operator', 'admin']),
  requestedAt: z.number(),
  expiresAt: z.number(),
  jobs: z.array(heldJobSchema),
});
export type ApprovalRequest = z.infer<typeof requestSchema>;

const decisionSchema = z.object({ at: z.number(), actor: z.string().optional(), origin: z.string().optional(), reason: z.string().optional() });
export type ApprovalDecision = z.infer<typeof decisionSchema>;

/** An approval as stored: the request, where it stands, and the decision once there is one. */
export interface Approval extends ApprovalRequest {
  status: ApprovalStatus;
  decision?: ApprovalDecision;
  settled: boolean;
  /** Withdrawn before it was made: nobody was asked (no request record, no alert to end). */
  unasked: boolean;
}

/** The one request per rule and incident: an event job retried after a failure half-way finds the request it made. */
export function approvalIdOf(rule: string, correlationId: string): string {
  return `ap-${createHash('sha256').update(`${rule}\0${correlationId}`).digest('hex').slice(0, 24)}`;
}

/** Who decides: a console user (with a role), or a shell user of the CLI (who reaches Redis, so may). */
export interface Decider {
  actor: string;
  origin: 'console' | 'cli';
  /** The console user's role; the CLI's users are trusted as admins (they hold the Redis credentials). */
  role: Role;
}

/** What a decision came to: it was taken, or the request had already been decided (or had timed out meanwhile). */
export type DecideResult = { decided: true; approval: Approval } | { decided: false; approval: Approval; why: string };

/** How long a settled approval stays readable (`reflex approvals`, the console, the signed link). */
const keepSettledMs = 7 * 86_400_000;
/** How many settled approvals the recent list keeps. */
const keepRecent = 500;

/**
 * A request stored once, with its place in the open index: 1 when made now, 0 when it was there
 * already, 2 when it was withdrawn before it was made (an operator's transition raced the rule's
 * decision): stored as withdrawn, never asked, and due at once for the settle round to record.
 */
const createScript = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('HEXISTS', KEYS[1], 'request') == 1 then return 0 end
  redis.call('HSET', KEYS[1], 'request', ARGV[2], 'expiresAt', ARGV[3], 'unasked', '1')
  redis.call('ZADD', KEYS[2], 0, ARGV[1])
  return 2
end
redis.call('HSET', KEYS[1], 'request', ARGV[2], 'status', 'pending', 'expiresAt', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1
`);

/**
 * pending → decided, once: a decision on a request past its time makes it `expired`, whoever sent
 * it; `expired` itself is taken only past that time; `withdrawn` (an operator's transition) at any
 * time, even before the request is made (it is then made withdrawn, see createScript). The decided
 * request is scored 0 in the open index: the next settle round takes it now.
 */
const decideScript = new LuaScript(`
local status = redis.call('HGET', KEYS[1], 'status')
if not status then
  if ARGV[2] ~= 'withdrawn' then return {'missing'} end
  redis.call('HSET', KEYS[1], 'status', 'withdrawn', 'decision', ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
  return {'changed', 'withdrawn'}
end
if status ~= 'pending' then return {'decided', status} end
local expires = tonumber(redis.call('HGET', KEYS[1], 'expiresAt'))
local now = tonumber(ARGV[3])
local to = ARGV[2]
local decision = ARGV[4]
if to == 'expired' then
  if now < expires then return {'pending'} end
elseif to ~= 'withdrawn' and now >= expires then
  to = 'expired'
  decision = ARGV[5]
end
redis.call('HSET', KEYS[1], 'status', to, 'decision', decision)
redis.call('ZADD', KEYS[2], 0, ARGV[1])
return {'changed', to}
`);

/**
 * Actions that wait for an operator's approval (a rule's `approval`, docs/approvals.md), as
 * StackStorm's inquiries and Rundeck's approval steps: the admitted decision's jobs are held in
 * Redis instead of queued, an alert asks for a decision (with a signed link to the console's page
 * and the `reflex approve|deny ID` commands), and whoever decides first wins, atomically, on every
 * replica. What follows a decision is {@link settle}d by the workers, each step idempotent (job
 * ids, audit once-keys), so a decider that dies after deciding loses nothing: approved, the jobs
 * are queued and run through the executor like any other, re-checked at the moment of acting;
 * denied, timed out (no decision in time: an alert, nothing done) or withdrawn by an operator's
 * own transition of the instance (never undone), nothing is queued. Every step is audited in the
 * incident's trail, the decision with who took it.
 */
export class Approvals {
  private readonly clock: Clock;
  /** The signed links to each request's page on the console. */
  readonly links: ApprovalLinks;

  constructor(
    private readonly deps: {
      redis: RedisConnection;
      keys: ApprovalKeys;
      audit: Pick<AuditLog, 'append'>;
      /** Raises and resolves the approval alerts; none (the CLI, the console): the workers' settle round does. */
      alerts?: Pick<Alerts, 'raise' | 'resolve'>;
      /** The instance's pending actions: queues the approved jobs (the delayed ones indexed), and forgets a settled request. None: only decides (the CLI, the console). */
      pending?: { queueJobs(ref: InstanceRef, jobs: HeldJob[]): Promise<void>; remove(ref: InstanceRef, jobId: string): Promise<void> };
      /** Where the console's /dashboard is reached from a receiver's message, for the signed link. Default: none (the link is a path). */
      consoleUrl?: string;
      clock?: Clock;
      metrics?: Pick<Metrics, 'approvals'>;
    },
  ) {
    this.clock = deps.clock ?? systemClock;
    this.links = new ApprovalLinks({ redis: deps.redis, key: deps.keys.linkKey, ...(deps.consoleUrl ? { consoleUrl: deps.consoleUrl } : {}) });
  }

  /** Holds an admitted decision's jobs for approval; audits the request and raises its alert. */
  async request(req: Omit<ApprovalRequest, 'id' | 'requestedAt' | 'expiresAt' | 'jobs'> & { timeoutMs: number; jobs: HeldJob[] }): Promise<Approval> {
    const { timeoutMs, ...rest } = req;
    const requestedAt = this.clock.now();
    // One request per rule and incident: an event job retried after a failure half-way (the alert
    // not sent) finds the request it made, and neither asks twice nor moves its deadline.
    const id = approvalIdOf(req.rule, req.correlationId);
    const fresh: ApprovalRequest = { ...rest, id, requestedAt, expiresAt: requestedAt + timeoutMs };
    const { redis, keys } = this.deps;
    const created = await createScript.run(redis, [keys.record(id), keys.open], [id, JSON.stringify(fresh), fresh.expiresAt]);
    const approval = created === 1 ? ({ ...fresh, status: 'pending', settled: false, unasked: false } as Approval) : (await this.get(id))!;
    if (created === 1) this.deps.metrics?.approvals.inc({ result: 'requested' });
    if (approval.status !== 'pending') return approval;
    const link = await this.links.link(id);
    await this.trail(approval).write(
      'approval',
      `${describeActions(approval)} waits for the approval of ${approval.role === 'admin' ? 'an admin' : 'an operator'} until ${new Date(approval.expiresAt).toISOString()} (approval ${approval.id})`,
      { approval: approval.id, result: 'requested', role: approval.role, expiresAt: new Date(approval.expiresAt).toISOString() },
      `approval:${approval.id}:requested`,
    );
    await this.deps.alerts?.raise(
      {
        ...this.alertOf(approval),
        summary: `${describeActions(approval)} waits for approval (${approval.role} or above) for ${formatDuration(approval.expiresAt - approval.requestedAt)}: decide at ${link}, or reflex approve ${approval.id} / reflex deny ${approval.id}`,
      },
      { once: `approval-alert:${approval.id}`, record: { rule: approval.rule } },
    );
    return approval;
  }

  /** The approval `id`, or undefined (never requested, or settled longer ago than a week). */
  async get(id: string): Promise<Approval | undefined> {
    const h = await this.deps.redis.hgetall(this.deps.keys.record(id));
    if (!h.request) return undefined;
    const request = requestSchema.parse(JSON.parse(h.request));
    const decision = h.decision ? decisionSchema.parse(JSON.parse(h.decision)) : undefined;
    return {
      ...request,
      status: h.status as ApprovalStatus,
      ...(decision ? { decision } : {}),
      settled: h.settled === '1',
      unasked: h.unasked === '1',
    };
  }

  /** The requests waiting for a decision, oldest first, and the newest settled ones (up to `recent`). */
  async list(recent = 50): Promise<Approval[]> {
    const { redis, keys } = this.deps;
    const ids = [...(await redis.zrange(keys.open, '0', '-1')), ...(await redis.zrange(keys.recent, '0', String(recent - 1), 'REV'))];
    const all = await Promise.all([...new Set(ids)].map((id) => this.get(id)));
    return all.filter((a): a is Approval => a !== undefined);
  }

  /**
   * Approves or denies `id` for `by`: refused (FORBIDDEN) below the role the rule asks for; taken
   * only while the request is pending and in time (past it, it is timed out instead, whoever
   * asked). The decision is audited with who took it; the workers settle the rest.
   */
  async decide(id: string, verdict: 'approved' | 'denied', by: Decider, reason?: string): Promise<DecideResult> {
    const known = await this.get(id);
    if (!known) throw new ReflexError('APPROVAL_UNKNOWN', `no approval ${id}: never requested, or settled more than a week ago`);
    if (!roleAtLeast(by.role, known.role)) {
      const summary = `approval ${id} needs ${known.role} or above; ${by.actor} is ${by.role}: nothing decided`;
      await this.trail(known).write('approval', `refused: ${summary}`, {
        approval: id,
        result: 'refused',
        actor: by.actor,
        origin: by.origin,
        role: known.role,
      });
      throw new ReflexError('APPROVAL_FORBIDDEN', summary);
    }
    const decision: ApprovalDecision = { at: this.clock.now(), actor: by.actor, origin: by.origin, ...(reason ? { reason } : {}) };
    const outcome = await this.transition(id, verdict, decision);
    const now = (await this.get(id))!;
    if (outcome === verdict) {
      await this.auditDecision(now);
      return { decided: true, approval: now };
    }
    if (outcome === 'expired') await this.auditDecision(now);
    const why = outcome === 'expired' ? `it timed out at ${new Date(now.expiresAt).toISOString()}` : `it was ${now.status} already`;
    return { decided: false, approval: now, why: `approval ${id} not ${verdict}: ${why}; nothing was done` };
  }

  /** Withdraws a pending request: an operator's own transition of the instance came first. Answers whether it was pending. */
  async withdraw(id: string, why: string): Promise<boolean> {
    return (await this.transition(id, 'withdrawn', { at: this.clock.now(), reason: why })) === 'withdrawn';
  }

  /**
   * One settle round (each worker, every second): times out the requests past their time, and
   * finishes each decided one: approved, its jobs are queued; each ends its alert, and is kept a
   * week for `reflex approvals` and the console. Every step may run twice (another replica, a
   * worker killed half-way) with one effect. Answers how many it settled.
   */
  async settleDue(limit = 100): Promise<number> {
    const { redis, keys } = this.deps;
    const due = await redis.zrangebyscore(keys.open, '-inf', this.clock.now(), 'LIMIT', 0, limit);
    for (const id of due) {
      await this.transition(id, 'expired', { at: this.clock.now() });
      await this.settle(id);
    }
    return due.length;
  }

  /** Moves a pending request to `to` (or to expired, past its time): answers the status it moved to, or why it did not move. */
  private async transition(
    id: string,
    to: ApprovalStatus,
    decision: ApprovalDecision,
  ): Promise<ApprovalStatus | 'missing' | 'not-pending' | 'not-due'> {
    const { redis, keys } = this.deps;
    const late = JSON.stringify({ at: decision.at, reason: `${decision.actor ?? 'a decision'} came after the timeout` });
    const answer = (await decideScript.run(
      redis,
      [keys.record(id), keys.open],
      [id, to, decision.at, JSON.stringify(decision), late, keepSettledMs],
    )) as string[];
    if (answer[0] === 'changed') return answer[1] as ApprovalStatus;
    return answer[0] === 'missing' ? 'missing' : answer[0] === 'decided' ? 'not-pending' : 'not-due';
  }

  private async settle(id: string): Promise<void> {
    const { redis, keys } = this.deps;
    const a = await this.get(id);
    if (!a || a.status === 'pending') return;
    if (!a.settled) {
      await this.auditDecision(a);
      if (a.status === 'approved') await this.queueApproved(a);
      if (a.status === 'expired')
        await this.deps.alerts?.raise(
          {
            ...this.alertOf(a),
            kind: approvalTimedOutKind,
            notice: true,
            summary: `${describeActions(a)} was not done: nobody approved or denied it within ${formatDuration(a.expiresAt - a.requestedAt)} (approval ${a.id})`,
          },
          { once: `approval-timed-out:${a.id}`, record: { rule: a.rule } },
        );
      // Counted by the one replica that claims it: two settling at once both get here.
      if (await redis.hsetnx(keys.record(id), 'counted', '1')) this.deps.metrics?.approvals.inc({ result: a.status });
      const outcome = { approved: 'approved', denied: 'denied', expired: 'timed out', withdrawn: 'withdrawn' }[a.status];
      if (!a.unasked)
        await this.deps.alerts?.resolve(
          { ...this.alertOf(a), summary: `approval ${a.id} ${outcome}`, outcome },
          { once: `approval-alert-end:${a.id}`, record: { rule: a.rule } },
        );
    }
    await this.deps.pending?.remove(a, `approval:${id}`);
    await redis
      .multi()
      .hset(keys.record(id), 'settled', '1')
      .pexpire(keys.record(id), keepSettledMs)
      .zrem(keys.open, id)
      .zadd(keys.recent, this.clock.now(), id)
      .zremrangebyrank(keys.recent, 0, -keepRecent - 1)
      .exec();
  }

  /** Queues an approved request's jobs, each with what is left of its delay (a back-off) since the request. */
  private async queueApproved(a: Approval): Promise<void> {
    if (!this.deps.pending) return;
    const elapsed = this.clock.now() - a.requestedAt;
    const jobs: HeldJob[] = a.jobs.map((j) => {
      const delay = Math.max(0, (j.opts.delay ?? 0) - elapsed);
      const { delay: _, ...opts } = j.opts;
      return { name: j.name, data: j.data, opts: delay ? { ...opts, delay } : opts };
    });
    await this.deps.pending.queueJobs(a, jobs);
    const trail = this.trail(a);
    for (const j of jobs)
      await trail.queued(
        { jobId: j.opts.jobId },
        `queued ${j.data.action}, approved by ${a.decision?.actor ?? 'an operator'}${j.opts.delay ? ` to run in ${j.opts.delay} ms` : ''}`,
        { approval: a.id },
      );
  }

  /** The decision's record (once), with who took it. */
  private async auditDecision(a: Approval): Promise<void> {
    if (a.status === 'pending') return;
    const d = a.decision;
    const by = d?.actor ? ` by ${d.actor}${d.origin ? ` (${d.origin})` : ''}` : '';
    const why = d?.reason ? `: ${d.reason}` : '';
    const summary =
      a.status === 'expired'
        ? `${describeActions(a)} not done: the approval timed out at ${new Date(a.expiresAt).toISOString()}${why}`
        : a.status === 'withdrawn'
          ? `${describeActions(a)} not done: the approval request was withdrawn${why}`
          : `${describeActions(a)} ${a.status}${by}${why}`;
    await this.trail(a).write(
      'approval',
      summary,
      { approval: a.id, result: a.status, role: a.role, ...(d?.actor ? { actor: d.actor } : {}), ...(d?.origin ? { origin: d.origin } : {}) },
      `approval:${a.id}:decided`,
    );
  }

  private trail(a: ApprovalRequest): Trail {
    return new Trail(this.deps.audit, {
      correlationId: a.correlationId,
      target: a.target,
      instance: a.instance,
      rule: a.rule,
      ...(a.uuid ? { uuid: a.uuid } : {}),
    });
  }

  private alertOf(a: ApprovalRequest): AlertInput {
    return {
      kind: approvalRequestedKind,
      severity: 'warning',
      summary: '',
      target: a.target,
      project: a.project,
      instance: a.instance,
      ...(a.location ? { member: a.location } : {}),
      correlationId: a.correlationId,
      labels: { approval: a.id, rule: a.rule },
    };
  }
}

/** "restart of web-1 by rule restart-on-crash", as the audit and the alerts say it. */
export function describeActions(a: Pick<ApprovalRequest, 'jobs' | 'instance' | 'rule'>): string {
  return `${a.jobs.map((j) => j.data.action).join(', ')} of ${a.instance} (rule ${a.rule})`;
}
