import { expect, it } from 'vitest';
import { isPreconditionFailed } from '../../src/client/api-error.js';
import { conformance, type ConformanceTarget, launchPerTest } from './targets.js';

await conformance('updates are protected by ETags and PATCH unsets empty keys', (target) => {
  const launch = launchPerTest(target);

  it('a read returns the value with its ETag, and the ETag changes on stop', async () => {
    const t = target();
    const name = await launch();
    const before = await t.client.getInstance(name);
    expect(before.value.name).toBe(name);
    expect(before.etag).toMatch(/^"?[0-9a-f]{64}"?$/);
    await (await t.client.changeState(name, { action: 'stop', force: true })).wait({ timeoutMs: 20_000 });
    const after = await t.client.getInstance(name);
    expect(after.etag).not.toBe(before.etag);
  });

  it('a PUT with a stale ETag is a typed 412 conflict', async () => {
    const t = target();
    const name = await launch();
    const stale = await t.client.getInstance(name);
    await t.client.patchInstance(name, { config: { 'user.rt-touch': '1' } });
    const err = await t.client.putInstance(name, stale.value, stale.etag).catch((e: unknown) => e);
    expect(isPreconditionFailed(err)).toBe(true);
    expect(err).toMatchObject({ code: 'API_PRECONDITION_FAILED', status: 412, retryable: true });
  });

  it('update() re-reads and retries after a conflict, and succeeds', async () => {
    const t = target();
    const name = await launch();
    const attempts: number[] = [];
    const result = await t.client.update(name, async (current, attempt) => {
      attempts.push(attempt);
      // Someone else changes the instance between our read and our PUT, once.
      if (attempt === 1) await t.client.patchInstance(name, { config: { 'user.rt-other': 'x' } });
      current.config['user.rt-mine'] = 'y';
    });
    expect(attempts).toEqual([1, 2]);
    expect(result.config['user.rt-mine']).toBe('y');
    const { value } = await t.client.getInstance(name);
    expect(value.config).toMatchObject({ 'user.rt-mine': 'y', 'user.rt-other': 'x' });
  });

  it('update() carries back volatile.* keys the caller dropped', async () => {
    const t = target();
    const name = await launch();
    const before = await t.client.getInstance(name);
    const volatile = Object.keys(before.value.config).filter((k) => k.startsWith('volatile.'));
    expect(volatile.length).toBeGreaterThan(0);
    await t.client.update(name, (current) => {
      for (const k of volatile) delete current.config[k];
      current.config['user.rt-after'] = '1';
    });
    const { value } = await t.client.getInstance(name);
    expect(value.config['user.rt-after']).toBe('1');
  });

  it('PATCH sets a key, and an empty value unsets it', async () => {
    const t = target();
    const name = await launch();
    await t.client.patchInstance(name, { config: { 'user.rt-patch': 'hello world' } });
    expect((await t.client.getInstance(name)).value.config['user.rt-patch']).toBe('hello world');
    await t.client.patchInstance(name, { config: { 'user.rt-patch': '' } });
    expect((await t.client.getInstance(name)).value.config).not.toHaveProperty('user.rt-patch');
  });

  it('PATCH with a stale ETag is refused with 412 too', async () => {
    const t = target();
    const name = await launch();
    const stale = await t.client.getInstance(name);
    await t.client.patchInstance(name, { config: { 'user.rt-a': '1' } });
    await expect(t.client.patchInstance(name, { config: { 'user.rt-b': '1' } }, stale.etag)).rejects.toMatchObject({ status: 412 });
  });
});
