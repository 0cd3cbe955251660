import { afterAll, describe, expect, it } from 'vitest';
import { scanKeys } from '../../src/redis/scan-keys.js';
import { redisClient, redisUrl } from '../support/redis.js';
import { runReflex } from '../support/reflex-process.js';

/**
 * The demo on someone's Redis (REDIS_URL or --redis) leaves it as it found it: every key it wrote
 * under its prefix (`demo-…:` and the hash-tagged `{demo-…:…}`) is gone when it exits.
 */
const redis = redisClient();
afterAll(() => redis.disconnect());

describe('the demo on an external Redis', () => {
  it('removes every key it wrote under its prefix when it exits', async () => {
    const res = await runReflex(['demo', '--duration', '6s', '--redis', redisUrl()]);
    expect(res.code, res.stderr).toBe(0);
    const prefix = /prefix (demo-[0-9a-f]{8})\)/.exec(res.stdout)?.[1];
    expect(prefix, res.stdout.slice(-500)).toBeDefined();
    // It did write there: its trail is in the summary.
    expect(Number(/\((\d+) audit records/.exec(res.stdout)?.[1])).toBeGreaterThan(0);
    const left: string[] = [];
    for await (const key of scanKeys(redis, `*${prefix}*`)) left.push(key);
    expect(left).toEqual([]);
  }, 60_000);
});
