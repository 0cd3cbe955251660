import { Cluster, Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { ReflexError } from '../../src/errors/reflex-error.js';
import { redactText, redactUrl } from '../../src/log/redaction.js';
import { connectRedis, redisFromUrl, type RedisConnection } from '../../src/redis/connect.js';

const opened: RedisConnection[] = [];
function build(url: string): RedisConnection {
  const c = redisFromUrl(url, { lazyConnect: true });
  opened.push(c);
  return c;
}
afterEach(() => {
  for (const c of opened.splice(0)) c.disconnect();
});

function invalid(url: string): ReflexError {
  try {
    build(url);
  } catch (err) {
    expect(err).toBeInstanceOf(ReflexError);
    return err as ReflexError;
  }
  throw new Error(`${url} was accepted`);
}

describe('Redis URL forms', () => {
  it('reads redis:// and rediss:// as a single Redis whose commands wait for the connection', () => {
    const c = build('redis://:secret@127.0.0.1:6390/2');
    expect(c).toBeInstanceOf(Redis);
    const o = (c as Redis).options;
    expect([o.host, o.port, o.db, o.password, o.maxRetriesPerRequest, o.sentinels ?? null]).toEqual(['127.0.0.1', 6390, 2, 'secret', null, null]);
  });

  it('reads redis-cluster:// as a Cluster of every listed node, with the credentials on each node', () => {
    const c = build('redis-cluster://ops:p%40ss@10.0.0.1:7000,10.0.0.2,[::1]:7002');
    expect(c).toBeInstanceOf(Cluster);
    const cluster = c as Cluster;
    expect((cluster as unknown as { startupNodes: unknown }).startupNodes).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: '10.0.0.2', port: 6379 },
      { host: '::1', port: 7002 },
    ]);
    expect(cluster.options.redisOptions).toMatchObject({ username: 'ops', password: 'p@ss', maxRetriesPerRequest: null });
    expect(cluster.options.redisOptions?.tls).toBeUndefined();
    expect((build('rediss-cluster://h:7000') as Cluster).options.redisOptions?.tls).toEqual({});
  });

  it("reads redis-sentinel:// as the named master behind the listed sentinels, with db and the sentinels' own password", () => {
    const c = build('redis-sentinel://:data-pw@s1:26380,s2/mymaster?db=3&sentinelPassword=sent-pw');
    expect(c).toBeInstanceOf(Redis);
    const o = (c as Redis).options;
    expect(o.sentinels).toEqual([
      { host: 's1', port: 26380 },
      { host: 's2', port: 26379 },
    ]);
    expect([o.name, o.password, o.sentinelPassword, o.db, o.maxRetriesPerRequest, o.enableTLSForSentinelMode ?? false]).toEqual([
      'mymaster',
      'data-pw',
      'sent-pw',
      3,
      null,
      false,
    ]);
    const tls = (build('rediss-sentinel://s1/m') as Redis).options;
    expect([tls.tls, tls.sentinelTLS, tls.enableTLSForSentinelMode]).toEqual([{}, {}, true]);
  });

  it('refuses a malformed URL as CONFIG_INVALID naming what is wrong, never showing the password', () => {
    const cases: [string, RegExp][] = [
      ['redis-sentinel://:hunter2@s1:26379', /master name is missing/],
      ['redis-sentinel://:hunter2@s1/m?db=x', /db "x" is not a number/],
      ['redis-sentinel://:hunter2@s1/m?timeout=3', /unknown parameter "timeout"/],
      ['redis-cluster://:hunter2@h:99999', /port 99999 is out of range/],
      ['redis-cluster://:hunter2@h:7000/1', /no path/],
      ['redis-cluster://:hunter2@', /no host:port/],
      ['memcached://:hunter2@h', /unknown scheme memcached:/],
      ['localhost:6379', /no scheme/],
    ];
    for (const [url, why] of cases) {
      const err = invalid(url);
      expect(err.code, url).toBe('CONFIG_INVALID');
      expect(err.message, url).toMatch(why);
      expect(err.message, url).not.toContain('hunter2');
    }
  });

  it('hides the passwords of cluster and sentinel URLs wherever they are printed', () => {
    expect(redactUrl('redis-cluster://ops:s3cr@t@h1:7000,h2:7001')).toBe('redis-cluster://[redacted]@h1:7000,h2:7001');
    expect(redactUrl('rediss-sentinel://:pw@s1,s2/mymaster?db=1&sentinelPassword=sp')).toBe(
      'rediss-sentinel://[redacted]@s1,s2/mymaster?db=1&sentinelPassword=[redacted]',
    );
    expect(redactText('cannot reach redis-sentinel://:pw@s1/m (refused)')).toBe('cannot reach redis-sentinel://[redacted]@s1/m (refused)');
  });

  it('fails fast with REDIS_UNAVAILABLE when no sentinel or cluster node answers', async () => {
    for (const url of ['redis-sentinel://:pw@127.0.0.1:1/mymaster', 'redis-cluster://:pw@127.0.0.1:1']) {
      const started = Date.now();
      const err = await connectRedis(url, { timeoutMs: 500 }).then(
        (c) => (c.disconnect(), undefined),
        (e: unknown) => e as ReflexError,
      );
      expect(err?.code, url).toBe('REDIS_UNAVAILABLE');
      expect(err?.message).not.toContain(':pw@');
      expect(Date.now() - started).toBeLessThan(3_000);
    }
  });
});
