import type { Alerts } from '../alerts/alerts.js';
import type { RedisConnection } from '../redis/connect.js';
import type { Logger } from 'pino';
import type { InstanceClient } from '../client/client.js';
import type { KeySpace } from '../redis/key-space.js';
import { LuaScript } from '../redis/script.js';

/** Options of {@link startMemberWatch}. */
export interface MemberWatchOptions {
  targets: { id: string; client: InstanceClient }[];
  redis: RedisConnection;
  keys: KeySpace;
  /** Raises `member.offline` and resolves it. */
  alerts: Pick<Alerts, 'raise' | 'resolve'>;
  logger: Logger;
  /** How often each target's members are read. Default 15 s. */
  intervalMs?: number;
}

// Sets a member's status and returns the one it replaces, atomically: of several replicas that
// see the same change, exactly one sees the old status, and only that one alerts.
const swapStatus = new LuaScript(`local old = redis.call('HGET', KEYS[1], ARGV[1]); redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]); return old`);

/**
 * A member of a clustered target that goes Offline is an alert of its own (`member.offline`, on
 * `member:NAME`), resolved when it is Online again; by default it inhibits the crash and Error
 * alerts of that member's instances (src/alerts/inhibition.ts). A member found Offline when Reflex
 * starts alerts too; Evacuated is an operator's decision and does not. Every replica reads the
 * members; the status kept in Redis makes each change alert once. A server that is not
 * clustered is asked nothing more than `GET /1.0`. Returns a stop function.
 */
export function startMemberWatch(opts: MemberWatchOptions): () => Promise<void> {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const check = async (t: { id: string; client: InstanceClient }) => {
    const server = await t.client.server();
    if (!server.environment?.server_clustered) return;
    for (const m of await t.client.clusterMembers()) {
      const down = m.status === 'Offline';
      const old = (await swapStatus.run(opts.redis, [opts.keys.members(t.id)], [m.server_name, m.status])) as string | null;
      // Alerts on a change into or out of Offline; a member first seen Online is no news.
      if (down === (old === 'Offline')) continue;
      const summary = down
        ? `cluster member ${m.server_name} is offline${m.message ? `: ${m.message}` : ''}; its instances cannot be reached or remediated`
        : `cluster member ${m.server_name} is ${m.status} again`;
      opts.logger[down ? 'error' : 'info']({ target: t.id, member: m.server_name, status: m.status }, summary);
      const alert = {
        kind: 'member.offline',
        severity: 'critical',
        summary,
        target: t.id,
        project: '',
        instance: `member:${m.server_name}`,
        member: m.server_name,
        correlationId: `member:${t.id}:${m.server_name}:${Date.now()}`,
      } as const;
      await (down ? opts.alerts.raise(alert) : opts.alerts.resolve(alert));
    }
  };
  const round = async () => {
    for (const t of opts.targets) {
      if (stopped) return;
      await check(t).catch((err: unknown) => opts.logger.debug({ err, target: t.id }, 'cluster members not read'));
    }
  };
  running = round();
  const timer = setInterval(() => {
    running = running.then(round);
  }, opts.intervalMs ?? 15_000);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
