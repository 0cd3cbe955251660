import { expect, it } from 'vitest';
import { ApiError } from '../../src/client/api-error.js';
import { launchPerTest, transportConformance } from './targets.js';

await transportConformance('every call has a timeout, honours an abort signal, and reports server errors by status', (target) => {
  const launch = launchPerTest(target);
  it('a call that outlives its timeout fails with TIMEOUT (retryable)', async () => {
    const t = target();
    const name = await launch({ ignoresStop: true });
    const op = await t.client.changeState(name, { action: 'stop', timeout: 3 });
    const started = Date.now();
    const err = await t.client.transport.request('GET', `/1.0/operations/${op.id}/wait?timeout=3`, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TIMEOUT', retryable: true });
    expect(Date.now() - started).toBeLessThan(2_000);
    await op.wait({ timeoutMs: 20_000 }).catch(() => undefined);
  });

  it('aborting a wait through its signal ends it at once with ABORTED', async () => {
    const t = target();
    const name = await launch({ ignoresStop: true });
    const op = await t.client.changeState(name, { action: 'stop', timeout: 3 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    const err = await op.wait({ signal: controller.signal }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ABORTED', retryable: false });
    expect(Date.now() - started).toBeLessThan(2_000);
    await op.wait({ timeoutMs: 20_000 }).catch(() => undefined);
  });

  it('a malformed filter is an error envelope: 500 on LXD 5.0.2, 400 on Incus 6.0 (the later revision)', async () => {
    const t = target();
    const err = await t.client.listInstances({ filter: 'name eq' }).catch((e: unknown) => e);
    if (t.revision === 'earlier') expect(err).toMatchObject({ code: 'API_SERVER_ERROR', status: 500, errorCode: 500 });
    else expect(err).toMatchObject({ code: 'API_ERROR', status: 400, errorCode: 400 });
    expect((err as Error).message).toMatch(/invalid filter/i);
  });

  it('an error answered with a plain-text body keeps its HTTP status (events without an upgrade)', async () => {
    const err = await target()
      .client.transport.request('GET', '/1.0/events')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBeGreaterThanOrEqual(400);
    expect((err as ApiError).code).not.toBe('API_BAD_RESPONSE');
  });

  it('creating an instance under a taken name fails, naming the conflict', async () => {
    const t = target();
    const name = await launch();
    // LXD 5.0.2 accepts the request (202) and fails the operation; a server may also answer 409.
    const err = await t.client
      .createInstance({ name, source: { type: 'image', alias: 'reflex-busybox' } })
      .then((op) => op.wait({ timeoutMs: 20_000 }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toMatch(/^(API_CONFLICT|OPERATION_FAILED)$/);
    // LXD: "… already exists"; Incus 6.0 fails the operation on the database's unique constraint.
    expect((err as Error).message).toMatch(/already exists|UNIQUE constraint failed/i);
  });

  it('progress listeners see the metadata updates of an operation waited on through events', async () => {
    const t = target();
    const client = t.client.withOperationEvents();
    const name = `rt-progress-${process.pid}`;
    try {
      const updates: unknown[] = [];
      const op = await client.createInstance({ name, source: { type: 'image', alias: 'reflex-busybox' } });
      const done = await op.wait({ timeoutMs: 60_000, onProgress: (m) => updates.push(m) });
      if (done.metadata) expect(updates).toContainEqual(done.metadata);
    } finally {
      await client.close();
      await t.remove(name);
    }
  });
});
