import { Cluster, Redis } from 'ioredis';
import { redactText, redactUrl } from '../log/redaction.js';
import { clusterReady, connectRedis, type RedisConnection } from '../redis/connect.js';
import type { DoctorCheck } from './doctor-check.js';
import { judgeCluster, judgeSentinel, parseClusterInfo, parseClusterNodes, parseSentinelMaster } from './redis-topology.js';

/** The oldest Redis BullMQ supports (it relies on commands and Lua behaviour of 6.2). */
const MIN_REDIS_VERSION = [6, 2, 0] as const;

/**
 * Reachability, kind (single Redis, Sentinel, Redis Cluster), version (≥ 6.2), eviction policy
 * (`noeviction`) and persistence (AOF off warns) of the Redis at `url`; on a Cluster every master is checked, with
 * Sentinel the master it names. BullMQ keeps jobs and locks in Redis: a policy that evicts keys
 * loses them silently under memory pressure, so any policy but `noeviction` fails the check.
 */
export async function checkRedis(url: string): Promise<DoctorCheck[]> {
  const shown = redactUrl(url);
  let redis: RedisConnection;
  try {
    redis = await connectRedis(url, { timeoutMs: 3_000 });
  } catch (err) {
    return [
      { name: 'redis', ok: false, detail: (err as Error).message, fix: 'start redis-server, or point --redis / REDIS_URL at a reachable Redis' },
    ];
  }
  try {
    if (redis instanceof Cluster) return await clusterChecks(redis, shown);
    const checks: DoctorCheck[] = [];
    if (redis.options.sentinels?.length) checks.push(...(await sentinelChecks(redis)));
    checks.push(...(await nodeChecks(redis, `reachable at ${shown}`)));
    return checks;
  } finally {
    redis.disconnect();
  }
}

async function clusterChecks(cluster: Cluster, shown: string): Promise<DoctorCheck[]> {
  let info: string;
  let nodes: string;
  let masters: Redis[];
  try {
    await clusterReady(cluster);
    masters = cluster.nodes('master');
    [info, nodes] = (await Promise.all([masters[0]!.call('CLUSTER', 'INFO'), masters[0]!.call('CLUSTER', 'NODES')])) as [string, string];
  } catch (err) {
    return [
      {
        name: 'redis',
        ok: false,
        detail: `reachable at ${shown}, but CLUSTER INFO failed: ${(err as Error).message}`,
        fix: 'give this Redis user the CLUSTER command (ACL +cluster)',
      },
    ];
  }
  const checks = judgeCluster(parseClusterInfo(info), parseClusterNodes(nodes));
  for (const node of masters) {
    const where = `master ${node.options.host}:${node.options.port}`;
    checks.push(...(await nodeChecks(node, where, `${where}: `)));
  }
  return checks;
}

async function sentinelChecks(redis: Redis): Promise<DoctorCheck[]> {
  const o = redis.options;
  const name = o.name ?? '';
  let lastError: unknown;
  for (const s of o.sentinels ?? []) {
    const sentinel = new Redis({
      host: s.host,
      port: s.port,
      username: o.sentinelUsername,
      password: o.sentinelPassword,
      tls: o.sentinelTLS,
      lazyConnect: true,
      connectTimeout: 3_000,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    sentinel.on('error', () => {}); // the reason is reported through the failed call below
    try {
      await sentinel.connect();
      return judgeSentinel(name, parseSentinelMaster((await sentinel.call('SENTINEL', 'MASTER', name)) as string[]));
    } catch (err) {
      lastError = err;
    } finally {
      sentinel.disconnect();
    }
  }
  return [
    {
      name: 'redis',
      ok: false,
      detail: `Redis Sentinel: no sentinel answered SENTINEL MASTER ${name} (${redactText(String((lastError as Error | undefined)?.message ?? lastError))})`,
      fix: "check the sentinels' addresses and sentinelPassword in the URL, and that the sentinel user may run SENTINEL",
    },
  ];
}

/** Version, persistence and eviction policy of one Redis server (`where` and `label` name it in the details). */
async function nodeChecks(redis: Redis, where: string, label = ''): Promise<DoctorCheck[]> {
  try {
    const [server, persistence, memory] = await Promise.all([redis.info('server'), redis.info('persistence'), redis.info('memory')]);
    const version = infoField(server, 'redis_version');
    const aof = infoField(persistence, 'aof_enabled') === '1';
    const checks: DoctorCheck[] = [];
    checks.push(
      version === undefined || versionAtLeast(version, MIN_REDIS_VERSION)
        ? { name: 'redis', ok: true, detail: `${where}, Redis ${version ?? '(version not reported)'}, AOF ${aof ? 'on' : 'off'}` }
        : {
            name: 'redis',
            ok: false,
            detail: `Redis ${version} (${where}) is older than ${MIN_REDIS_VERSION.join('.')}, the oldest BullMQ supports`,
            fix: 'upgrade Redis to 6.2 or newer (Debian 12 ships 7.0: apt-get install redis-server)',
          },
    );
    checks.push(await evictionCheck(redis, memory, label));
    // Without AOF, queued events, delayed restarts and locks written since the last RDB snapshot
    // are lost when Redis dies: Reflex works, but a crash can go unhealed after a Redis restart.
    if (!aof)
      checks.push({
        name: 'redis',
        ok: true,
        warning: true,
        detail: `${label}AOF off: events, jobs and locks written since the last snapshot are lost if Redis dies`,
        fix: 'redis-cli CONFIG SET appendonly yes, and in redis.conf: appendonly yes',
      });
    return checks;
  } catch (err) {
    return [
      {
        name: 'redis',
        ok: false,
        detail: `${where}, but INFO failed: ${(err as Error).message}`,
        fix: 'give this Redis user the INFO command (ACL +info)',
      },
    ];
  }
}

async function evictionCheck(redis: Redis, memoryInfo: string, label: string): Promise<DoctorCheck> {
  let policy: string | undefined;
  try {
    const reply = (await redis.call('CONFIG', 'GET', 'maxmemory-policy')) as string[];
    policy = reply[1];
  } catch {
    // Managed Redis often forbids CONFIG; INFO memory carries the same setting.
  }
  policy ??= infoField(memoryInfo, 'maxmemory_policy');
  if (policy === 'noeviction') return { name: 'redis', ok: true, detail: `${label}maxmemory-policy noeviction` };
  if (policy === undefined) {
    return {
      name: 'redis',
      ok: true,
      warning: true,
      detail: `${label}maxmemory-policy unknown (CONFIG GET refused and INFO memory does not show it): it must be noeviction, or Redis may drop queued jobs and locks when memory is full`,
    };
  }
  return {
    name: 'redis',
    ok: false,
    detail: `${label}maxmemory-policy is ${policy}: when memory is full Redis evicts keys, and with them queued events, jobs and locks (BullMQ needs noeviction)`,
    fix: "redis-cli CONFIG SET maxmemory-policy noeviction, and in redis.conf: maxmemory-policy noeviction (managed Redis: the provider's parameter group)",
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
