import { Queue, QueueEvents } from 'bullmq';
import { duplicateConnection, type RedisConnection } from '../../src/redis/connect.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { AlertInput } from '../../src/alerts/alert.js';
import { Notifier, type NotifierOptions } from '../../src/notify/notifier.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { keySpace } from '../../src/redis/key-space.js';
import { until } from '../support/wait.js';
import { afterEach } from 'vitest';
import { startRecordingServer, type RecordingServer } from './recording-server.js';

/** Closes a test's fixture and recording server (either unset when the test stopped before opening it). */
export async function closeNotifier(fx: NotifierFixture | undefined, server: { close(): Promise<void> } | undefined): Promise<void> {
  await fx?.close();
  await server?.close();
}

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
  private flushes?: FlushCounter;
  private closed = false;

  replica(opts: Omit<NotifierOptions, 'redis' | 'audit' | 'prefix'>): Notifier {
    const n = new Notifier({ ...opts, redis: this.redis, audit: this.audit, prefix: this.prefix });
    this.notifiers.push(n);
    return n;
  }

  /** A replica sending every alert to `url` as one signed webhook receiver, `hook`: {@link fastTimings}, with `route` over them. */
  webhookReplica(url: string, route: Partial<NotifierOptions['route']> = {}): Notifier {
    return this.replica({
      receivers: [{ kind: 'webhook', name: 'hook', url, secretEnv: 'S' }],
      env: { S: testWebhookSecret },
      route: { receiver: 'hook', ...fastTimings, ...route },
    });
  }

  /**
   * A quiet period counted in flushes, not milliseconds: returns once `flushes` more group flushes
   * have run (or none is left to run: every group settled) and every delivery they queued is done.
   * Whatever the notifiers would send by then has been sent.
   */
  async quietFor(flushes: number): Promise<void> {
    this.flushes ??= await countFlushes(this.redis, this.prefix);
    const from = this.flushes.count;
    await until(
      `${flushes} more flushes, or no flush left to run`,
      async () => this.flushes!.count >= from + flushes || (await notificationsSettled(this.redis, this.prefix, 'flushes')),
    );
    await until('every queued delivery done', () => notificationsSettled(this.redis, this.prefix, 'deliveries'));
  }

  /** Closes the notifiers and removes the fixture's keys; once (a test may close it before its afterEach does). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.flushes?.close();
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

/** Finished group flushes under a prefix, counted from BullMQ's event stream of the flush queue. */
interface FlushCounter {
  readonly count: number;
  close(): Promise<void>;
}

async function countFlushes(redis: RedisConnection, prefix: string): Promise<FlushCounter> {
  const keys = keySpace(prefix).notify;
  const connection = duplicateConnection(redis);
  const events = new QueueEvents(keys.flushQueue, { connection, prefix: keys.bullPrefix });
  let count = 0;
  events.on('completed', () => void count++);
  await events.waitUntilReady();
  return {
    get count() {
      return count;
    },
    async close() {
      await events.close();
      connection.disconnect();
    },
  };
}

/**
 * Whether nothing more can go out under the prefix without a new alert: no group flush (or, with
 * `which`, only that queue: no delivery) is waiting, running or delayed.
 */
export async function notificationsSettled(
  redis: RedisConnection,
  prefix: string,
  which: 'flushes' | 'deliveries' | 'both' = 'both',
): Promise<boolean> {
  const keys = keySpace(prefix).notify;
  const names = which === 'both' ? [keys.flushQueue, keys.deliveryQueue] : [which === 'flushes' ? keys.flushQueue : keys.deliveryQueue];
  for (const name of names) {
    const queue = new Queue(name, { connection: redis, prefix: keys.bullPrefix });
    try {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      if (Object.values(counts).some((n) => n > 0)) return false;
    } finally {
      await queue.close();
    }
  }
  return true;
}

/**
 * What a describe's notifier tests start, closed after each test: `fixture()` a fresh
 * {@link NotifierFixture} (a key prefix of its own), `server(respond)` a recording server.
 */
export function closedAfterEach(): {
  fixture(): NotifierFixture;
  server(...args: Parameters<typeof startRecordingServer>): Promise<RecordingServer>;
} {
  const fixtures: NotifierFixture[] = [];
  const servers: RecordingServer[] = [];
  afterEach(async () => {
    for (const fx of fixtures.splice(0)) await fx.close();
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return {
    fixture: () => {
      const fx = new NotifierFixture();
      fixtures.push(fx);
      return fx;
    },
    server: async (...args) => {
      const s = await startRecordingServer(...args);
      servers.push(s);
      return s;
    },
  };
}
