import { redactUrl } from '../log/redaction.js';
import { connectRedis, type RedisConnection } from '../redis/connect.js';
import type { DoctorCheck } from './doctor.js';

/** The oldest Redis BullMQ supports (it relies on commands and Lua behaviour of 6.2). */
const MIN_REDIS_VERSION = [6, 2, 0] as const;

/**
 * Reachability, version (≥ 6.2), eviction policy (`noeviction`) and persistence of the Redis at
 * `url`. BullMQ keeps jobs and locks in Redis: a policy that evicts keys loses them silently under
 * memory pressure, so any policy but `noeviction` fails the check.
 */
export async function checkRedis(url: string): Promise<DoctorCheck[]> {
  const shown = redactUrl(url);
  let redis: RedisConnection;
  try {
    redis = await connectRedis(url, { timeoutMs: 3_000 });
  } catch (err) {
    return [{ name: 'redis', ok: false, detail: (err as Error).message, fix: 'start redis-server, or point --redis / REDIS_URL at a reachable Redis' }];
  }
  try {
    const [server, persistence, memory] = await Promise.all([redis.info('server'), redis.info('persistence'), redis.info('memory')]);
    const version = infoField(server, 'redis_version');
    const aof = infoField(persistence, 'aof_enabled') === '1';
    const checks: DoctorCheck[] = [];
    checks.push(
      version === undefined || versionAtLeast(version, MIN_REDIS_VERSION)
        ? { name: 'redis', ok: true, detail: `reachable at ${shown}, Redis ${version ?? '(version not reported)'}${aof ? ', AOF on' : ', AOF off (events since the last snapshot are lost if Redis dies; turn on appendonly)'}` }
        : { name: 'redis', ok: false, detail: `Redis ${version} at ${shown} is older than ${MIN_REDIS_VERSION.join('.')}, the oldest BullMQ supports`, fix: 'upgrade Redis to 6.2 or newer (Debian 12 ships 7.0: apt-get install redis-server)' },
    );
    checks.push(await evictionCheck(redis, memory));
    return checks;
  } catch (err) {
    return [{ name: 'redis', ok: false, detail: `reachable at ${shown}, but INFO failed: ${(err as Error).message}`, fix: 'give this Redis user the INFO command (ACL +info)' }];
  } finally {
    redis.disconnect();
  }
}

async function evictionCheck(redis: RedisConnection, memoryInfo: string): Promise<DoctorCheck> {
  let policy: string | undefined;
  try {
    const reply = (await redis.call('CONFIG', 'GET', 'maxmemory-policy')) as string[];
    policy = reply[1];
  } catch {
    // Managed Redis often forbids CONFIG; INFO memory carries the same setting.
  }
  policy ??= infoField(memoryInfo, 'maxmemory_policy');
  if (policy === 'noeviction') return { name: 'redis', ok: true, detail: 'maxmemory-policy noeviction' };
  if (policy === undefined) {
    return { name: 'redis', ok: true, warning: true, detail: 'maxmemory-policy unknown (CONFIG GET refused and INFO memory does not show it): it must be noeviction, or Redis may drop queued jobs and locks when memory is full' };
  }
  return {
    name: 'redis',
    ok: false,
    detail: `maxmemory-policy is ${policy}: when memory is full Redis evicts keys, and with them queued events, jobs and locks (BullMQ needs noeviction)`,
    fix: 'redis-cli CONFIG SET maxmemory-policy noeviction, and in redis.conf: maxmemory-policy noeviction (managed Redis: the provider\'s parameter group)',
  };
}

/** The value of `name` in an INFO reply (`name:value` lines), if present. */
function infoField(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:(.*?)\\r?$`, 'm').exec(info)?.[1];
}

/** Whether a dotted version (`7.0.15`) is at least `min`; an unparsable version is not. */
export function versionAtLeast(version: string, min: readonly number[]): boolean {
  const parts = version.split('.').map((p) => Number.parseInt(p, 10));
  if (parts.some(Number.isNaN)) return false;
  for (let i = 0; i < min.length; i++) {
    const p = parts[i] ?? 0;
    if (p !== min[i]) return p > min[i]!;
  }
  return true;
}
