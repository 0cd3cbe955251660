import { Queue } from 'bullmq';
import { alertSchema, type Alert, type AlertChange } from '../alerts/alert.js';
import type { AlertSubject } from '../alerts/alerts.js';
import type { RedisConnection } from '../redis/connect.js';
import type { NotifyKeys } from '../redis/key-space.js';
import { TokenLock } from '../redis/token-lock.js';
import { AlertBoard } from './alert-board.js';
import { AlertGrouper, flushJobSchema } from './alert-grouper.js';

/** The notifier's lock of one alert, as long as it waits for it (notifier.ts). */
const alertLockMs = 5_000;

/**
 * Updates the firing alerts of one subject (an instance) in place, as the notifier amends one, and
 * puts each back in the groups that hold it: the receivers that got the alert get it again at the
 * group's next flush, as an update of the same alert (same fingerprint, still firing), never as a
 * new one. It needs no receiver settings (an update goes where the alert went), so the CLI updates
 * as the console does.
 */
export class AlertUpdates {
  private readonly lock: TokenLock;
  private readonly board: AlertBoard;
  private queue: Queue | undefined;

  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: NotifyKeys,
  ) {
    this.lock = new TokenLock(redis, { ttlMs: alertLockMs });
    this.board = new AlertBoard(redis, keys);
  }

  /**
   * Changes each firing alert about `subject` that `change` answers fields for (undefined: left
   * alone), under the alert's lock; answers the alerts changed, as stored.
   */
  async update(subject: AlertSubject, change: (known: Alert) => AlertChange | undefined): Promise<Alert[]> {
    const about = (await this.board.firing()).filter(
      (a) => a.target === subject.target && a.project === subject.project && a.instance === subject.instance,
    );
    const out: Alert[] = [];
    for (const { fingerprint } of about) {
      // As the notifier does: a holder that died lets go within the lock's life; past twice that, go ahead.
      const held = await this.lock.acquire(this.keys.alertLock(fingerprint), 2 * alertLockMs, 20);
      try {
        const raw = await this.redis.get(this.keys.alert(fingerprint));
        const known = raw ? alertSchema.safeParse(JSON.parse(raw)) : undefined;
        if (!known?.success || known.data.status !== 'firing') continue;
        const fields = change(known.data);
        if (!fields) continue;
        const alert = alertSchema.parse({ ...known.data, ...fields });
        await this.redis.set(this.keys.alert(fingerprint), JSON.stringify(alert), 'KEEPTTL');
        await this.regroup(alert);
        out.push(alert);
      } finally {
        await held?.release();
      }
    }
    return out;
  }

  /** Stops using the flush queue (the Redis connection is the caller's). */
  async close(): Promise<void> {
    await this.queue?.close();
  }

  /** Puts the alert back in every group holding it; the group's flush (scheduled while it holds a firing alert) sends it. */
  private async regroup(alert: Alert): Promise<void> {
    const groups = await this.redis.hgetall(this.keys.groups);
    for (const [groupKey, json] of Object.entries(groups)) {
      if (!(await this.redis.hexists(this.keys.group(groupKey), alert.fingerprint))) continue;
      const group = flushJobSchema.safeParse(JSON.parse(json));
      if (!group.success) continue;
      this.queue ??= new Queue(this.keys.flushQueue, { connection: this.redis, prefix: this.keys.bullPrefix });
      // Only add() is used: the flush, and so the sending, is the workers'.
      await new AlertGrouper(this.redis, this.keys, this.queue, async () => undefined).add(alert, group.data);
    }
  }
}
