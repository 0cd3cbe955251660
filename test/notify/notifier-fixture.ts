import type { RedisConnection } from '../../src/redis/connect.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { AlertInput } from '../../src/alerts/alert.js';
import { Notifier, type NotifierOptions } from '../../src/notify/notifier.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { keySpace } from '../../src/redis/key-space.js';

/** A Standard Webhooks signing secret for tests: whsec_ and the base64 of 32 bytes. */
export const testWebhookSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

/** Fast timings for tests: group wait 100 ms, group interval 300 ms, no repeats. */
export const fastTimings = { groupWaitMs: 100, groupIntervalMs: 300, repeatIntervalMs: 3_600_000 } as const;

/** Notifiers sharing one Redis prefix (replicas), closed together. */
export class NotifierFixture {
  readonly prefix = uniquePrefix('notify');
  readonly redis: RedisConnection = redisClient();
  readonly audit = new AuditLog(this.redis, keySpace(this.prefix).audit);
  private readonly notifiers: Notifier[] = [];

  replica(opts: Omit<NotifierOptions, 'redis' | 'audit' | 'prefix'>): Notifier {
    const n = new Notifier({ ...opts, redis: this.redis, audit: this.audit, prefix: this.prefix });
    this.notifiers.push(n);
    return n;
  }

  async close(): Promise<void> {
    await Promise.all(this.notifiers.map((n) => n.close()));
    const keys = await this.redis.keys(`${this.prefix}:*`);
    if (keys.length) await this.redis.del(...keys);
    this.redis.disconnect();
  }
}

/** A crash alert of one instance, as a rule would raise it. */
export function crashAlert(instance: string, extra: Partial<AlertInput> = {}): AlertInput {
  return {
    kind: 'instance.crashed',
    severity: 'critical',
    target: 'local',
    project: 'default',
    instance,
    summary: `${instance} stopped without a request (status 102 Stopped)`,
    actions: [{ action: 'start', result: 'done', summary: 'started (was Stopped)', operationId: `op-${instance}` }],
    outcome: 'restarted',
    correlationId: `evt-${instance}`,
    startsAt: '2025-01-02T03:04:05.000Z',
    ...extra,
  };
}
