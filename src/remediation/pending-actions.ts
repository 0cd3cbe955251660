import { Job, type Queue } from 'bullmq';
import type { RedisConnection } from '../redis/connect.js';
import type { InstanceRef, KeySpace } from '../redis/key-space.js';

/** A delayed action job as the index keeps it. */
export interface PendingAction {
  jobId: string;
  action: string;
  rule: string;
  correlationId: string;
}

/** How long an entry of the index lives (longer than any back-off). */
const PENDING_TTL_MS = 24 * 3600_000;

/**
 * Index of the action jobs waiting out a delay (crash-loop back-off, boot.autorestart stand-back)
 * per instance, so an operator's stop or start can remove them at once. The re-check before each
 * action stays the authority: a job this misses (already active) is skipped there.
 */
export class PendingActions {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: KeySpace,
    private readonly queue: Queue,
  ) {}

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
