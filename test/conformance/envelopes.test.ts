import { expect, it } from 'vitest';
import { ApiError, isApiStatus, isNotFound } from '../../src/client/api-error.js';
import { operationInstanceUrls } from '../../src/client/envelope.js';
import { launchPerTest, transportConformance } from './targets.js';

await transportConformance('every answer is a sync, async or error envelope', (target) => {
  const launch = launchPerTest(target);
  it('GET / answers sync with the supported API versions', async () => {
    expect(await target().client.apiVersions()).toContain('/1.0');
  });

  it('GET /1.0 lists api_extensions and has() checks them', async () => {
    const info = await target().client.server();
    expect(info.api_extensions.length).toBeGreaterThan(0);
    expect(info.has(info.api_extensions[0]!)).toBe(true);
    expect(info.has('no_such_extension_ever')).toBe(false);
    expect(info.auth).toBe('trusted');
  });

  it('a state change answers 202 with a Location and the operation object in metadata', async () => {
    const t = target();
    const name = await launch();
    const res = await t.client.transport.request('PUT', `/1.0/instances/${name}/state`, { body: { action: 'freeze' } });
    expect(res.kind).toBe('async');
    if (res.kind !== 'async') return;
    expect(res.status).toBe(202);
    expect(res.envelope.status_code).toBe(100);
    const op = res.envelope.metadata;
    expect(res.location).toBe(`/1.0/operations/${op.id}`);
    expect(res.envelope.operation).toBe(`/1.0/operations/${op.id}`);
    expect(op.class).toBe('task');
    expect(operationInstanceUrls(op)).toContain(`/1.0/instances/${name}`);
    await (await t.client.getOperation(op.id)).wait({ timeoutMs: 10_000 }).catch((err: unknown) => {
      // Forgotten already (it finished more than ~5 s ago) is fine here.
      if (!(err instanceof ApiError && err.code === 'API_NOT_FOUND')) throw err;
    });
  });

  it('an unknown instance is a 404 error envelope', async () => {
    const err = await target()
      .client.getInstance('rt-does-not-exist')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(isNotFound(err)).toBe(true);
    expect(err).toMatchObject({ code: 'API_NOT_FOUND', status: 404, errorCode: 404, method: 'GET', path: '/1.0/instances/rt-does-not-exist' });
    expect((err as ApiError).retryable).toBe(false);
  });

  it('an unknown state action is a 400 error envelope', async () => {
    const t = target();
    const name = await launch();
    const err = await t.client.changeState(name, { action: 'bogus' as 'start' }).catch((e: unknown) => e);
    expect(isApiStatus(err, 400)).toBe(true);
    expect(err).toMatchObject({ code: 'API_ERROR', errorCode: 400 });
  });

  it('deleting a running instance is refused synchronously with 400', async () => {
    const t = target();
    const name = await launch();
    const err = await t.client.deleteInstance(name).catch((e: unknown) => e);
    expect(isApiStatus(err, 400)).toBe(true);
    expect((err as ApiError).message).toMatch(/running/i);
  });
});
