import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ReflexError } from '../errors/reflex-error.js';
import { redactText, redactUrl } from '../log/redaction.js';

/**
 * Opens a Redis connection for BullMQ and Reflex's own keys, failing fast with a clear message
 * when Redis cannot be reached at start-up (later outages are retried for ever, as BullMQ expects).
 * Later connection errors go to `logger` (warn when the connection is lost, debug while it stays
 * down, info when it is back), or one line on stderr per distinct error without one (CLI commands).
 */
export async function connectRedis(url: string, opts: { timeoutMs?: number; logger?: Logger } = {}): Promise<Redis> {
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const probe = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null });
  let lastError: Error | undefined;
  probe.on('error', (err: Error) => {
    lastError = err;
  });
  try {
    await probe.connect();
    await probe.ping();
  } catch (err) {
    const safeUrl = redactUrl(url);
    const why = redactText((lastError ?? (err as Error)).message);
    throw new ReflexError('REDIS_UNAVAILABLE', `cannot reach Redis at ${safeUrl} (${why}); start one (apt-get install redis-server) or set REDIS_URL / --redis`, { cause: err });
  } finally {
    probe.disconnect();
  }
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  // Outages after start-up are retried by ioredis and BullMQ; say so once, not as "unhandled".
  const { logger } = opts;
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
