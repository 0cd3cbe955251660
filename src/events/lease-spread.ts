import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { RedisConnection } from '../redis/connect.js';
import { ReplicaRoster } from '../redis/replica-roster.js';

/** Options of {@link LeaseSpread}. */
export interface LeaseSpreadOptions {
  redis: RedisConnection;
  /** Sorted set of the live replicas (`keys.replicas`). */
  key: string;
  logger: Logger;
  /** How long a replica counts as alive without a heartbeat; the lease TTL. Default 3000 ms. */
  ttlMs?: number;
  /** How often this replica beats and checks its share. Default ttl/3. */
  everyMs?: number;
  /**
   * How long a vacancy stays free before a replica at its fair share takes it anyway (a roster
   * that could not be read, a replica that cannot take more). Default 2 × ttl.
   */
  patienceMs?: number;
  /** Name of this replica in the roster. Default the pid and a random id. */
  member?: string;
}

/** A lease of this process, and how to give it up without losing frames. */
interface Registered {
  lease: { readonly isHeld: boolean };
  handOver: () => Promise<void>;
}

/**
 * Spreads the subscriber leases of a deployment over its replicas. Each replica that reads event
 * streams beats in a sorted set (`{@link LeaseSpreadOptions.key}`) and so knows how many replicas
 * are alive (R); with N targets its fair share is ceil(N / R). A replica below its share takes a
 * vacant lease at once; one at its share leaves it to the others for `patienceMs` (then takes it:
 * a lease is never left unread). A replica above its share hands the surplus over: it writes what
 * it buffered, releases the lease cleanly (free at once for another replica, whose window covers
 * the frames of the handover) and follows. Nothing to configure: a replica that starts is counted
 * within one heartbeat, a dead one drops out of the count when its heartbeat runs out (the lease
 * TTL), about when its leases lapse. One replica alone holds every lease, as without the spread.
 */
export class LeaseSpread {
  private readonly member: string;
  private readonly roster: ReplicaRoster;
  private readonly ttlMs: number;
  private readonly everyMs: number;
  private readonly patienceMs: number;
  private readonly leases: Registered[] = [];
  private replicas: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private handingOver = false;

  constructor(private readonly opts: LeaseSpreadOptions) {
    this.ttlMs = opts.ttlMs ?? 3_000;
    this.everyMs = opts.everyMs ?? Math.max(100, Math.floor(this.ttlMs / 3));
    this.patienceMs = opts.patienceMs ?? 2 * this.ttlMs;
    this.member = opts.member ?? `${process.pid}:${randomUUID()}`;
    this.roster = new ReplicaRoster(opts.redis, opts.key);
  }

  /** Live replicas reading event streams as last counted (this one included); undefined before the first count. */
  get replicaCount(): number | undefined {
    return this.replicas;
  }

  /** The most leases this replica should hold now. */
  get fairShare(): number {
    return Math.ceil(this.leases.length / Math.max(1, this.replicas ?? 1));
  }

  /** Leases this replica holds now. */
  get held(): number {
    return this.leases.filter((r) => r.lease.isHeld).length;
  }

  /** Adds one of this process's leases; `handOver` gives it up cleanly (write the buffer, release). */
  register(lease: { readonly isHeld: boolean }, handOver: () => Promise<void>): void {
    this.leases.push({ lease, handOver });
  }

  /**
   * Whether this replica should take a vacant lease now: below its fair share, or the lease has
   * been free for `patienceMs` and nobody else took it.
   */
  mayTake(vacantForMs: number): boolean {
    return this.held < this.fairShare || vacantForMs >= this.patienceMs;
  }

  /** Joins the roster (one heartbeat, so the first lease checks know the count) and keeps beating. */
  async start(): Promise<void> {
    await this.beat();
    // Hands over only on a fresh count: a replica that cannot reach Redis keeps what it holds. With
    // one target the count decides nothing (the share of one lease is one whatever the replicas,
    // and every replica of a deployment reads the same targets), so a single-target deployment
    // does not beat: 6 Redis commands a second less per idle replica.
    this.timer = setInterval(() => {
      if (this.leases.length !== 1) void this.beat().then((counted) => (counted ? this.rebalance() : undefined));
    }, this.everyMs);
    this.timer.unref();
  }

  /** Leaves the roster at once, so the others' shares grow without waiting for the heartbeat to run out. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.roster.leave(this.member).catch(() => undefined);
  }

  private async beat(): Promise<boolean> {
    try {
      this.replicas = await this.roster.beat(this.member, this.ttlMs);
      return true;
    } catch (err) {
      // The last count stands; leases left free too long are taken anyway (patience).
      this.opts.logger.debug({ err }, 'replica heartbeat failed');
      return false;
    }
  }

  private async rebalance(): Promise<void> {
    if (this.handingOver) return;
    const surplus = this.held - this.fairShare;
    if (surplus <= 0) return;
    this.handingOver = true;
    try {
      const give = this.leases.filter((r) => r.lease.isHeld).slice(-surplus);
      this.opts.logger.info(
        { held: this.held, share: this.fairShare, replicas: this.replicas, handing: give.length },
        'more subscriber leases than a fair share: handing the surplus over',
      );
      for (const r of give) await r.handOver();
    } catch (err) {
      this.opts.logger.warn({ err }, 'subscriber lease hand-over failed');
    } finally {
      this.handingOver = false;
    }
  }
}
