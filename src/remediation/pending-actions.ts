import { Job, type Queue } from 'bullmq';
import type { RedisConnection } from '../redis/connect.js';
import type { InstanceRef, KeySpace } from '../redis/key-space.js';
import { approvalIdOf, Approvals, type Approval, type HeldJob } from './approvals.js';

/** A delayed action job as the index keeps it, or the jobs of a request waiting for approval (`approval`: its id). */
export interface PendingAction {
  jobId: string;
  action: string;
  rule: string;
  correlationId: string;
  approval?: string;
}

/** How long an entry of the index lives (longer than any back-off). */
const PENDING_TTL_MS = 24 * 3600_000;

/**
 * Index of Reflex's actions on an instance that have not started yet: the jobs waiting out a delay
 * (crash-loop back-off, boot.autorestart stand-back) and the requests waiting for an operator's
 * approval, per instance, so an operator's stop or start removes them at once. The re-check before
 * each action stays the authority: a job this misses (already active) is skipped there.
 */
export class PendingActions {
  /** The requests waiting for approval; queued through {@link queueJobs} once approved. */
  readonly approvals: Approvals;

  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: KeySpace,
    private readonly queue: Queue,
    approvals: Omit<ConstructorParameters<typeof Approvals>[0], 'redis' | 'keys' | 'pending'>,
  ) {
    this.approvals = new Approvals({ ...approvals, redis, keys: keys.approvals, pending: this });
  }

  /**
   * Queues an admitted decision's action jobs (the one way they reach the actions queue: a rule's
   * decision, or its approval): the delayed ones indexed first, so an operator's transition in
   * between still finds them.
   */
  async queueJobs(ref: InstanceRef, jobs: readonly HeldJob[]): Promise<void> {
    for (const j of jobs)
      if (j.opts.delay)
        await this.add(ref, {
          jobId: j.opts.jobId,
          action: j.data.action,
          rule: String(j.data.rule),
          correlationId: String(j.data.correlationId),
        });
    await this.queue.addBulk(jobs.map((j) => ({ name: j.name, data: j.data, opts: j.opts })));
  }

  /** Holds an admitted decision's jobs for an operator's approval, indexed with the instance's pending actions. */
  async holdForApproval(ref: InstanceRef, request: Parameters<Approvals['request']>[0]): Promise<Approval> {
    // Indexed before it is made, as a delayed job is before it is queued: an operator's transition
    // in between withdraws it before anyone is asked (the request then finds it withdrawn).
    const id = approvalIdOf(request.rule, request.correlationId);
    await this.add(ref, {
      jobId: `approval:${id}`,
      action: request.jobs.map((j) => j.data.action).join(', '),
      rule: request.rule,
      correlationId: request.correlationId,
      approval: id,
    });
    return this.approvals.request(request);
  }

  async add(ref: InstanceRef, p: PendingAction): Promise<void> {
    const key = this.keys.pendingActions(ref);
    await this.redis.multi().hset(key, p.jobId, JSON.stringify(p)).pexpire(key, PENDING_TTL_MS).exec();
  }

  async remove(ref: InstanceRef, jobId: string): Promise<void> {
    await this.redis.hdel(this.keys.pendingActions(ref), jobId);
  }

  /** Removes the instance's delayed or waiting jobs; answers those removed. */
  async cancel(ref: InstanceRef): Promise<PendingAction[]> {
    const key = this.keys.pendingActions(ref);
    const entries = Object.values(await this.redis.hgetall(key)).map((v) => JSON.parse(v) as PendingAction);
    const removed: PendingAction[] = [];
    for (const p of entries) {
      if (p.approval) {
        // Withdrawn unless decided already (an approved request's jobs are indexed on their own).
        if (await this.approvals.withdraw(p.approval, "an operator's own transition of the instance came first")) removed.push(p);
        await this.remove(ref, p.jobId);
        continue;
      }
      const job = await Job.fromId(this.queue, p.jobId);
      if (!job) {
        await this.remove(ref, p.jobId);
        continue;
      }
      const state = await job.getState();
      if (state !== 'delayed' && state !== 'waiting' && state !== 'prioritized') continue;
      try {
        await job.remove();
      } catch {
        continue; // taken by a worker meanwhile: its re-check sees the transition
      }
      await this.remove(ref, p.jobId);
      removed.push(p);
    }
    return removed;
  }
}
