import { Redis } from 'ioredis';
import { ReflexError } from '../errors/reflex-error.js';

/**
 * Opens a Redis connection for BullMQ and Reflex's own keys, failing fast with a clear message
 * when Redis cannot be reached at start-up (later outages are retried for ever, as BullMQ expects).
 */
export async function connectRedis(url: string, opts: { timeoutMs?: number } = {}): Promise<Redis> {
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
    const safeUrl = url.replace(/\/\/[^@/]*@/, '//***@');
    const why = (lastError ?? (err as Error)).message;
    throw new ReflexError('REDIS_UNAVAILABLE', `cannot reach Redis at ${safeUrl} (${why}); start one (apt-get install redis-server) or set REDIS_URL / --redis`, { cause: err });
  } finally {
    probe.disconnect();
  }
  const redis = new Redis(url, { maxRetriesPerRequest: null });
  // Outages after start-up are retried by ioredis and BullMQ; say so once per error, not as "unhandled".
  let last = '';
  redis.on('error', (err: Error) => {
    if (err.message !== last) process.stderr.write(`reflex: Redis error (retrying): ${err.message}\n`);
    last = err.message;
  });
  redis.on('ready', () => (last = ''));
  return redis;
}
