import type { ClusterOptions, RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { ReflexError } from '../errors/reflex-error.js';
import { redactText, redactUrl } from '../log/redaction.js';
import { Cluster, Redis } from './ioredis-package.js';

/** A connection to a single Redis, a Sentinel-managed master (both `Redis`) or a Redis Cluster. */
export type RedisConnection = Redis | Cluster;

/** Options of {@link redisFromUrl}. */
export interface RedisFromUrlOptions {
  /** Connect on the first command or `connect()` instead of at once. Default false. */
  lazyConnect?: boolean;
  /** Timeout of each connection attempt, in ms. Default ioredis' (10 s). */
  connectTimeoutMs?: number;
  /**
   * Give up at the first failure (no reconnection, no retried command): for probes. Default false:
   * outages are retried for ever and commands wait for the connection (BullMQ needs that).
   */
  failFast?: boolean;
}

type Address = { host: string; port: number };

/** What a Redis URL names, before any connection is made. */
type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: Address[]; username?: string; password?: string; tls: boolean }
  | {
      kind: 'sentinel';
      sentinels: Address[];
      masterName: string;
      username?: string;
      password?: string;
      sentinelPassword?: string;
      db: number;
      tls: boolean;
    };

/**
 * Builds a Redis connection from a URL, without probing it. The forms:
 * - `redis://[user:pass@]host:port[/db]`, `rediss://…` (TLS): a single Redis;
 * - `redis-cluster://[user:pass@]host:port[,host:port…]`, `rediss-cluster://…` (TLS): a Redis
 *   Cluster, from any of its nodes (the rest are discovered);
 * - `redis-sentinel://[user:pass@]host:port[,host:port…]/MASTER_NAME[?db=N&sentinelPassword=…]`,
 *   `rediss-sentinel://…` (TLS to the sentinels and the data nodes): the master Sentinel names,
 *   followed across failovers. The password is the data nodes'; `sentinelPassword` the sentinels'
 *   when they have their own.
 * Ports default to 6379 (26379 for sentinels). A malformed URL is CONFIG_INVALID.
 */
export function redisFromUrl(url: string, options: RedisFromUrlOptions = {}): RedisConnection {
  const target = parseRedisUrl(url);
  const lazyConnect = options.lazyConnect ?? false;
  const connectTimeout = options.connectTimeoutMs;
  const maxRetriesPerRequest = options.failFast ? 0 : null;
  const retry = options.failFast ? { retryStrategy: () => null } : {};
  const timeout = connectTimeout === undefined ? {} : { connectTimeout };
  if (target.kind === 'single') return new Redis(target.url, { lazyConnect, maxRetriesPerRequest, ...timeout, ...retry });
  if (target.kind === 'cluster') {
    const clusterOptions: ClusterOptions = {
      lazyConnect,
      redisOptions: { username: target.username, password: target.password, maxRetriesPerRequest, ...timeout, ...(target.tls ? { tls: {} } : {}) },
      // A master's failover takes its replica a few seconds (cluster-node-timeout, then the
      // election): commands wait it out (16 redirections 500 ms apart, ~8 s) instead of failing
      // after ioredis' default ~1.6 s and logging "Too many Cluster redirections".
      ...(options.failFast
        ? { clusterRetryStrategy: () => null, maxRedirections: 0 }
        : { retryDelayOnFailover: 500, retryDelayOnClusterDown: 500, retryDelayOnTryAgain: 500 }),
    };
    return new Cluster(target.nodes, clusterOptions);
  }
  const sentinelOptions: RedisOptions = {
    sentinels: target.sentinels,
    name: target.masterName,
    username: target.username,
    password: target.password,
    sentinelPassword: target.sentinelPassword,
    db: target.db,
    lazyConnect,
    maxRetriesPerRequest,
    ...timeout,
    ...retry,
    ...(options.failFast ? { sentinelRetryStrategy: () => null } : {}),
    ...(target.tls ? { tls: {}, enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
  };
  return new Redis(sentinelOptions);
}

const schemes: Record<string, { kind: 'cluster' | 'sentinel'; tls: boolean }> = {
  'redis-cluster:': { kind: 'cluster', tls: false },
  'rediss-cluster:': { kind: 'cluster', tls: true },
  'redis-sentinel:': { kind: 'sentinel', tls: false },
  'rediss-sentinel:': { kind: 'sentinel', tls: true },
};

function invalid(url: string, what: string): ReflexError {
  return new ReflexError(
    'CONFIG_INVALID',
    `Redis URL ${redactUrl(url)}: ${what}; expected redis://host:port, redis-cluster://host:port[,host:port…] or redis-sentinel://host:port[,host:port…]/MASTER_NAME (rediss… for TLS)`,
  );
}

function decode(url: string, part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw invalid(url, 'bad percent-encoding in the user or password');
  }
}

function parseAddress(url: string, text: string, defaultPort: number): Address {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d+))?$/.exec(text);
  if (!m) throw invalid(url, `"${text}" is not host or host:port`);
  const port = m[2] === undefined ? defaultPort : Number(m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw invalid(url, `port ${m[2]} is out of range`);
  const host = m[1]!.startsWith('[') ? m[1]!.slice(1, -1) : m[1]!;
  return { host, port };
}

function parseRedisUrl(url: string): RedisTarget {
  const scheme = /^([a-z][a-z0-9+.-]*:)\/\//i.exec(url);
  if (!scheme) throw invalid(url, 'no scheme');
  const protocol = scheme[1]!.toLowerCase();
  if (protocol === 'redis:' || protocol === 'rediss:') return { kind: 'single', url };
  const form = schemes[protocol];
  if (!form) throw invalid(url, `unknown scheme ${protocol}//`);
  let rest = url.slice(scheme[0].length);
  // The userinfo ends at the last '@', as redactUrl reads it, so a password may hold any character.
  const at = rest.lastIndexOf('@');
  let username: string | undefined;
  let password: string | undefined;
  if (at >= 0) {
    const userinfo = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = userinfo.indexOf(':');
    const user = decode(url, colon < 0 ? userinfo : userinfo.slice(0, colon));
    username = user === '' ? undefined : user;
    password = colon < 0 ? undefined : decode(url, userinfo.slice(colon + 1));
  }
  const queryAt = rest.indexOf('?');
  const query = new URLSearchParams(queryAt < 0 ? '' : rest.slice(queryAt + 1));
  if (queryAt >= 0) rest = rest.slice(0, queryAt);
  const slash = rest.indexOf('/');
  const hostList = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? '' : rest.slice(slash + 1);
  if (hostList === '') throw invalid(url, 'no host:port');
  const defaultPort = form.kind === 'sentinel' ? 26379 : 6379;
  const addresses = hostList.split(',').map((h) => parseAddress(url, h.trim(), defaultPort));
  if (form.kind === 'cluster') {
    if (path !== '') throw invalid(url, 'a cluster URL has no path (a cluster has no databases but 0)');
    for (const name of query.keys()) throw invalid(url, `unknown parameter "${name}"`);
    return { kind: 'cluster', nodes: addresses, username, password, tls: form.tls };
  }
  const masterName = decode(url, path.replace(/\/$/, ''));
  if (masterName === '' || masterName.includes('/')) throw invalid(url, 'the master name is missing (…/MASTER_NAME)');
  let db = 0;
  let sentinelPassword: string | undefined;
  for (const [name, value] of query) {
    if (name === 'db') {
      db = Number(value);
      if (!/^\d+$/.test(value)) throw invalid(url, `db "${value}" is not a number`);
    } else if (name === 'sentinelPassword') sentinelPassword = value;
    else throw invalid(url, `unknown parameter "${name}"`);
  }
  return { kind: 'sentinel', sentinels: addresses, masterName, username, password, sentinelPassword, db, tls: form.tls };
}

/** Which kind of deployment a Redis URL names: `single`, `cluster` or `sentinel` (CONFIG_INVALID when malformed). */
export function redisKind(url: string): RedisTarget['kind'] {
  return parseRedisUrl(url).kind;
}

/**
 * Opens a Redis connection (any form {@link redisFromUrl} reads) for BullMQ and Reflex's own keys,
 * failing fast with a clear message when Redis cannot be reached at start-up (later outages are
 * retried for ever, as BullMQ expects). Later connection errors go to `logger` (warn when the
 * connection is lost, debug while it stays down, info when it is back), or one line on stderr per
 * distinct error without one (CLI commands).
 */
export async function connectRedis(url: string, opts: { timeoutMs?: number; logger?: Logger; waitMs?: number } = {}): Promise<RedisConnection> {
  const timeoutMs = opts.timeoutMs ?? 5_000;
  // A service started while Redis restarts (a host's boot, a replacement replica) waits for it.
  const deadline = Date.now() + (opts.waitMs ?? 0);
  for (let told = false; ; told = true) {
    try {
      await probeRedis(url, timeoutMs);
      break;
    } catch (err) {
      if (Date.now() + WAIT_STEP_MS > deadline) throw err;
      if (!told) opts.logger?.warn({ err }, `Redis is not reachable yet; waiting for it (up to ${Math.round((opts.waitMs ?? 0) / 1000)} s)`);
      await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    }
  }
  return openRedis(url, opts.logger);
}

/** Pause between start-up attempts while waiting for Redis. */
const WAIT_STEP_MS = 500;

/** One start-up attempt to reach Redis: connect and PING within the timeout, or REDIS_UNAVAILABLE. */
async function probeRedis(url: string, timeoutMs: number): Promise<void> {
  const probe = redisFromUrl(url, { lazyConnect: true, connectTimeoutMs: timeoutMs, failFast: true });
  let lastError: Error | undefined;
  probe.on('error', (err: Error) => {
    lastError = err;
  });
  probe.on('node error', (err: Error) => {
    lastError = err;
  });
  try {
    // A cluster or sentinel probe tries several nodes in turn: bound the whole, not only each attempt.
    await withDeadline(
      probe.connect().then(() => probe.ping()),
      timeoutMs * 2,
    );
  } catch (err) {
    const safeUrl = redactUrl(url);
    const why = redactText((lastError ?? (err as Error)).message);
    throw new ReflexError(
      'REDIS_UNAVAILABLE',
      `cannot reach Redis at ${safeUrl} (${why}); start one (apt-get install redis-server) or set REDIS_URL / --redis`,
      { cause: err },
    );
  } finally {
    probe.disconnect();
  }
}

/** The connection a process keeps: outages after start-up are retried for ever, and logged. */
function openRedis(url: string, logger: Logger | undefined): RedisConnection {
  const redis = redisFromUrl(url);
  // Outages after start-up are retried by ioredis and BullMQ; say so once, not as "unhandled".
  let last = '';
  let down = false;
  redis.on('error', (err: Error) => {
    if (logger) {
      if (!down) logger.warn({ err }, 'Redis connection lost; retrying');
      else if (err.message !== last) logger.debug({ err }, 'Redis still unreachable; retrying');
    } else if (err.message !== last) {
      process.stderr.write(`reflex: Redis error (retrying): ${redactText(err.message)}\n`);
    }
    down = true;
    last = err.message;
  });
  redis.on('ready', () => {
    if (down) logger?.info('Redis connection back');
    down = false;
    last = '';
  });
  return redis;
}

/**
 * `work`, or an error when it has not settled within `ms`. Commands queue while Redis is
 * unreachable rather than fail, so a caller that must answer (a probe, /readyz, an inbound hook's
 * 503) bounds the wait with this; the work itself is not cancelled.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from Redis within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits until a Cluster client knows the cluster's slots and masters (at once for a single Redis):
 * `nodes()` lists only the nodes it has learnt, so walking the masters must wait for this.
 */
export async function clusterReady(redis: RedisConnection): Promise<void> {
  if (redis instanceof Cluster && redis.status !== 'ready') await redis.ping();
}

/**
 * A new connection to the same Redis, Sentinel master or Cluster, with the same options but
 * commands that wait for the connection instead of failing (`maxRetriesPerRequest: null`, which
 * BullMQ's workers require): for queues, workers and blocking commands, which need their own.
 */
export function duplicateConnection(redis: RedisConnection): RedisConnection {
  const copy =
    redis instanceof Cluster
      ? redis.duplicate(undefined, { redisOptions: { ...redis.options.redisOptions, maxRetriesPerRequest: null } })
      : redis.duplicate({ maxRetriesPerRequest: null });
  // An outage reaches every connection at once; the one it was duplicated from says so (see
  // connectRedis: a warning, then debug lines, then "back"), and /readyz and reflex_ready show it.
  // Without a listener, ioredis would print each retry's error on stderr as "[ioredis] Unhandled
  // error event", outside the log (a reload channel's subscriber, an audit follow during an outage).
  copy.on('error', () => undefined);
  return copy;
}
