import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRedis, versionAtLeast } from '../../src/doctor/redis-checks.js';
import { startPrivateRedis, type PrivateRedis } from '../../src/redis/private-redis.js';

/**
 * `reflex doctor` fails a Redis that BullMQ cannot rely on: older than 6.2, or with an eviction
 * policy other than noeviction (read with CONFIG GET, or from INFO memory where CONFIG is refused).
 * Each test sets the policy of a private redis-server of its own, as an operator would.
 */
let server: PrivateRedis;
let admin: Redis;

beforeAll(async () => {
  server = await startPrivateRedis();
  admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
  // A user like managed Redis gives: everything but CONFIG.
  await admin.call('ACL', 'SETUSER', 'app', 'on', '>app-password-1', '~*', '&*', '+@all', '-config');
});

afterAll(async () => {
  admin?.disconnect();
  await server?.stop();
});

const withUser = (url: string, user: string, password: string) => url.replace('redis://', `redis://${user}:${password}@`);

describe('reflex doctor checks Redis for BullMQ', () => {
  it('passes a Redis ≥ 6.2 with maxmemory-policy noeviction and AOF on, and names its version', async () => {
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'appendonly', 'yes');
    const checks = await checkRedis(server.url);
    expect(
      checks.every((c) => c.ok && !c.warning),
      JSON.stringify(checks),
    ).toBe(true);
    expect(checks[0]!.detail).toMatch(/^reachable at redis:\/\/127\.0\.0\.1:\d+, Redis \d+\.\d+\.\d+, AOF on$/);
    expect(checks[1]!.detail).toBe('maxmemory-policy noeviction');
    expect(checks).toHaveLength(2);
  });

  it('warns when AOF is off, saying what is lost and how to turn it on', async () => {
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'appendonly', 'no');
    const checks = await checkRedis(server.url);
    expect(
      checks.every((c) => c.ok),
      JSON.stringify(checks),
    ).toBe(true);
    expect(checks[0]!.detail).toMatch(/, AOF off$/);
    expect(checks.filter((c) => c.warning)).toEqual([
      expect.objectContaining({
        detail: expect.stringMatching(/^AOF off: .*lost if Redis dies/),
        fix: expect.stringMatching(/CONFIG SET appendonly yes.*redis\.conf/),
      }),
    ]);
  });

  it('fails allkeys-lru, saying what is lost and how to fix it', async () => {
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const checks = await checkRedis(server.url);
    const failed = checks.filter((c) => !c.ok);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.detail).toMatch(/^maxmemory-policy is allkeys-lru: .*evicts keys.*BullMQ needs noeviction/);
    expect(failed[0]!.fix).toMatch(/CONFIG SET maxmemory-policy noeviction.*redis\.conf/);
  });

  it('reads the policy from INFO memory when CONFIG is refused (managed Redis)', async () => {
    await admin.config('SET', 'maxmemory-policy', 'volatile-lru');
    const checks = await checkRedis(withUser(server.url, 'app', 'app-password-1'));
    expect(checks[0]!.detail).toMatch(/^reachable at redis:\/\/\S+@127\.0\.0\.1:\d+, Redis /);
    expect(checks[0]!.detail).not.toContain('app-password-1');
    expect(checks.filter((c) => !c.ok).map((c) => c.detail)).toEqual([expect.stringMatching(/^maxmemory-policy is volatile-lru:/)]);

    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    const after = await checkRedis(withUser(server.url, 'app', 'app-password-1'));
    expect(after.every((c) => c.ok)).toBe(true);
    expect(after[1]!.detail).toBe('maxmemory-policy noeviction');
  });

  it('fails an unreachable Redis with how to start one', async () => {
    const checks = await checkRedis('redis://127.0.0.1:1');
    expect(checks).toEqual([
      expect.objectContaining({ ok: false, detail: expect.stringMatching(/ECONNREFUSED/), fix: expect.stringMatching(/^start redis-server/) }),
    ]);
  });

  it('compares versions by number, so 6.10 is newer than 6.2 and 6.0.16 is too old', () => {
    const min = [6, 2, 0];
    expect(['6.2.0', '6.2.14', '6.10.1', '7.0.15', '10.0.0'].filter((v) => versionAtLeast(v, min))).toHaveLength(5);
    expect(['6.0.16', '5.0.14', '6.1.99', 'x.y'].filter((v) => versionAtLeast(v, min))).toEqual([]);
  });
});
