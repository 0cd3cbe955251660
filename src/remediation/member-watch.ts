import type { Alerts } from '../alerts/alerts.js';
import type { AlertKind } from '../alerts/catalogue.js';
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

// The members' statuses of one target, each as `ROUND STATUS`, and the field `:round` (no member's
// name has a colon) counting the readings begun. A reading takes its round before it asks the
// daemon; a status is set only by a reading begun after the one that set it, and the status it
// replaces is returned: of several replicas that see the same change, exactly one sees the old
// status and alerts, and a reading that began before a newer one was kept (a replica's slow or
// delayed answer) changes nothing. Statuses kept without a round count as round 0.
const ROUND_FIELD = ':round';
const beginReading = new LuaScript(`return redis.call('HINCRBY', KEYS[1], ARGV[1], 1)`);
const swapStatus = new LuaScript(`
local kept = redis.call('HGET', KEYS[1], ARGV[1])
local old, round = false, 0
if kept then
  local space = string.find(kept, ' ', 1, true)
  if space then
    round = tonumber(string.sub(kept, 1, space - 1))
    old = string.sub(kept, space + 1)
  else
    old = kept
  end
end
if tonumber(ARGV[3]) <= round then return {0, old} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3] .. ' ' .. ARGV[2])
return {1, old}`);

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
    const key = opts.keys.members(t.id);
    const round = (await beginReading.run(opts.redis, [key], [ROUND_FIELD])) as number;
    for (const m of await t.client.clusterMembers()) {
      const down = m.status === 'Offline';
      const [set, old] = (await swapStatus.run(opts.redis, [key], [m.server_name, m.status, round])) as [0 | 1, string | null];
      // Alerts on a change into or out of Offline; a member first seen Online is no news; an
      // older reading than the one kept is no news either.
      if (!set || down === (old === 'Offline')) continue;
      const summary = down
        ? `cluster member ${m.server_name} is offline${m.message ? `: ${m.message}` : ''}; its instances cannot be reached or remediated`
        : `cluster member ${m.server_name} is ${m.status} again`;
      opts.logger[down ? 'error' : 'info']({ target: t.id, member: m.server_name, status: m.status }, summary);
      const alert = {
        kind: 'member.offline' satisfies AlertKind,
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
