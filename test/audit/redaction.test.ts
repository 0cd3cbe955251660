import { afterAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { redact } from '../../src/audit/redact.js';
import { isSensitiveName, redactText, REDACTED } from '../../src/log/redaction.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { keySpace } from '../../src/redis/key-space.js';

const redis = redisClient();
afterAll(() => redis.disconnect());

describe('redaction of audit records', () => {
  it('replaces whatever fields named like secrets hold, at any depth and in any case', () => {
    const out = redact({
      password: 'hunter2',
      config: { 'user.ssh-key': 'ssh-ed25519 AAAA', API_TOKEN: 'abc', Authorization: 'Bearer x', nested: [{ clientSecret: { a: 1 } }] },
      headers: { Cookie: 'sid=1', 'set-cookie': 'sid=2' },
      sshKey: 'k',
      credentials: ['a'],
    });
    expect(out).toEqual({
      password: REDACTED,
      config: { 'user.ssh-key': REDACTED, API_TOKEN: REDACTED, Authorization: REDACTED, nested: [{ clientSecret: REDACTED }] },
      headers: { Cookie: REDACTED, 'set-cookie': REDACTED },
      sshKey: REDACTED,
      credentials: REDACTED,
    });
  });

  it('leaves fields that only look alike', () => {
    for (const name of ['keySpace', 'keyId', 'monkey', 'authType', 'jobId', 'operationId', 'correlationId', 'summary', 'passed', 'author'])
      expect(isSensitiveName(name), name).toBe(false);
  });

  it('cuts credentials out of strings and keeps the rest readable', () => {
    expect(redactText('GET https://admin:s3cret@lxd.example:8443/1.0 failed')).toBe('GET https://[redacted]@lxd.example:8443/1.0 failed');
    expect(redactText('sent Authorization: Bearer abcdefghijklmnop.qrs')).toBe(`sent Authorization: Bearer ${REDACTED}`);
    expect(redactText('token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl here')).toBe(`token ${REDACTED} here`);
    expect(redactText('/1.0/events?type=lifecycle&secret=abc123&project=x')).toBe('/1.0/events?type=lifecycle&secret=[redacted]&project=x');
    expect(redactText('login with password=hunter2 now')).toBe('login with password=[redacted] now');
    expect(redactText('-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----')).toBe(REDACTED);
    expect(redactText('instance web1 stopped (exit 137)')).toBe('instance web1 stopped (exit 137)');
  });

  it('copies to plain JSON data without cycles', () => {
    const err = Object.assign(new Error('boom https://u:p@h/'), { code: 'NETWORK' });
    const loop: Record<string, unknown> = { a: 1 };
    loop.self = loop;
    expect(redact({ err, when: new Date(0), big: 10n, fn: () => 1, loop })).toEqual({
      err: { name: 'Error', message: 'boom https://[redacted]@h/', code: 'NETWORK' },
      when: '1970-01-01T00:00:00.000Z',
      big: '10',
      loop: { a: 1, self: '[circular]' },
    });
  });

  it('stores records redacted, and the chain still verifies', async () => {
    const log = new AuditLog(redis, keySpace(uniquePrefix('audit')).audit);
    await log.append({
      type: 'call',
      correlationId: 'c',
      summary: 'POST https://me:pw@host/1.0/instances',
      token: 'abc',
      headers: { authorization: 'Basic dXNlcjpwYXNz' },
    });
    const [r] = await log.read();
    expect(r).toMatchObject({ summary: 'POST https://[redacted]@host/1.0/instances', token: REDACTED, headers: { authorization: REDACTED } });
    expect(JSON.stringify(r)).not.toMatch(/pw@|abc|dXNlcjpwYXNz/);
    expect(await log.verify()).toMatchObject({ ok: true, records: 1 });
  });

  it('refuses records carrying the fields the log adds itself', async () => {
    const log = new AuditLog(redis, keySpace(uniquePrefix('audit')).audit);
    await expect(log.append({ type: 'event', correlationId: 'c', summary: 's', ...({ hash: 'x' } as object) })).rejects.toThrow(/reserved/);
  });
});
