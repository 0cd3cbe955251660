import { afterAll, expect, it, vi } from 'vitest';
import { connectRedis, duplicateConnection } from '../../src/redis/connect.js';
import { ownRedis, type OwnRedis } from '../support/own-redis.js';
import { until } from '../support/wait.js';

let redis: OwnRedis | undefined;
afterAll(async () => {
  await redis?.stop().catch(() => undefined);
  redis?.remove();
});

it('an outage is told once by the connection a worker opened, never as "[ioredis] Unhandled error event" from the connections duplicated from it', async () => {
  redis = await ownRedis();
  const lines: string[] = [];
  const logger = {
    warn: (_: unknown, msg: string) => lines.push(`warn ${msg}`),
    debug: () => undefined,
    info: (msg: string) => lines.push(`info ${msg}`),
  };
  const primary = await connectRedis(redis.url, { logger: logger as never });
  // As a reload channel's subscriber or an audit follow holds one: no queue of BullMQ around it.
  const copy = duplicateConnection(primary);
  await copy.ping();
  const printed = vi.spyOn(console, 'error');
  try {
    // Its reconnections are counted, not its errors: an error listener of the test's own would hide what is looked for.
    let reconnects = 0;
    copy.on('reconnecting', () => reconnects++);
    await redis.stop();
    // Both connections retry on their own timers: under load the duplicate may fail twice before
    // the primary's first failed try is in. Wait for both, then ask that the outage was told once.
    await until('the duplicate failed to reconnect twice, and the primary told the outage', () => reconnects >= 3 && lines.length > 0, 10_000);
    expect(printed.mock.calls.filter((args) => String(args[0]).includes('Unhandled error event'))).toEqual([]);
    expect(lines).toEqual(['warn Redis connection lost; retrying']);
    await redis.start();
    await until('the primary back', () => lines.includes('info Redis connection back'), 10_000);
    expect(await copy.ping()).toBe('PONG');
  } finally {
    printed.mockRestore();
    copy.disconnect();
    primary.disconnect();
  }
});
