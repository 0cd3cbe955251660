import type { Worker } from 'bullmq';
import { withDeadline, type RedisConnection } from '../redis/connect.js';
import type { EventSubscriber } from '../events/event-subscriber.js';
import type { SubscriberLease } from '../events/subscriber-lease.js';

/** One readiness check's verdict. */
export interface CheckResult {
  ok: boolean;
  detail: string;
}

/** Named checks; the process is ready when every one passes. */
export type ReadinessChecks = Record<string, () => Promise<CheckResult>>;

/** One target's lease and the subscriber it starts. */
export interface TargetReader {
  /** The target's name (check `subscriber:<name>` when there are several). */
  name: string;
  lease: SubscriberLease;
  subscriber: EventSubscriber;
}

/** What the process runs, for {@link readinessChecks}. */
export interface ReadinessParts {
  redis: RedisConnection;
  /** Subscriber role: one reader per target. */
  readers?: TargetReader[];
  /** Worker role: the queue workers. */
  workers?: Worker[];
  /** How long the Redis ping may take. Default 1000 ms. */
  redisTimeoutMs?: number;
}

/**
 * The checks behind /readyz: Redis answers a PING; for each target, the subscriber either holds
 * the lease with the event stream open or stands by (a standby replica is ready: it is there to
 * take over); the queue workers run. With one target its check is `subscriber`, with several
 * `subscriber:<name>` each.
 */
export function readinessChecks(parts: ReadinessParts): ReadinessChecks {
  const checks: ReadinessChecks = {
    redis: async () => {
      const timeoutMs = parts.redisTimeoutMs ?? 1_000;
      try {
        await withDeadline(parts.redis.ping(), timeoutMs);
        return { ok: true, detail: 'PING answered' };
      } catch (err) {
        return { ok: false, detail: `Redis unreachable: ${(err as Error).message}` };
      }
    },
  };
  const { readers = [], workers } = parts;
  for (const { name, lease, subscriber } of readers) {
    checks[readers.length === 1 ? 'subscriber' : `subscriber:${name}`] = async () => {
      // A replica that cannot reach its target is not ready, holder or standby: a standby that
      // cannot read the stream cannot take over either.
      const role = lease.isHeld ? 'lease holder' : 'standby (another replica holds the lease)';
      return subscriber.connected ? { ok: true, detail: `${role}, event stream connected` } : { ok: false, detail: `${role}, event stream not connected: the target is unreachable` };
    };
  }
  if (workers?.length) {
    checks.workers = async () => {
      const stopped = workers.filter((w) => !w.isRunning()).map((w) => w.name);
      return stopped.length ? { ok: false, detail: `not running: ${stopped.join(', ')}` } : { ok: true, detail: `running: ${workers.map((w) => w.name).join(', ')}` };
    };
  }
  return checks;
}

/** Runs every check (concurrently) and reports whether all passed. */
export async function runChecks(checks: ReadinessChecks): Promise<{ ready: boolean; checks: Record<string, CheckResult> }> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        return [name, await check()] as const;
      } catch (err) {
        return [name, { ok: false, detail: (err as Error).message }] as const;
      }
    }),
  );
  return { ready: entries.every(([, r]) => r.ok), checks: Object.fromEntries(entries) };
}
