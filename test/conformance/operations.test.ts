import { expect, it } from 'vitest';
import { ApiError } from '../../src/client/api-error.js';
import WebSocket from 'ws';
import { InstanceClient, OperationFeed } from '../../src/client/client.js';
import { operationSecrets } from '../../src/client/envelope.js';
import { waitOperationObject } from '../../src/client/operations.js';
import { StatusCode } from '../../src/client/status-code.js';
import { type ConformanceTarget, launchPerTest, transportConformance } from './targets.js';
import { until } from '../support/wait.js';

await transportConformance('background operations can be waited for, cancelled and lost', (target) => {
  const launch = launchPerTest(target);

  it('wait resolves with Success (200) when the operation succeeds', async () => {
    const t = target();
    const name = await launch();
    const op = await t.client.changeState(name, { action: 'stop', force: true });
    const done = await op.wait({ timeoutMs: 20_000 });
    expect(done.status_code).toBe(StatusCode.Success);
    expect((await t.client.getInstanceState(name)).status_code).toBe(StatusCode.Stopped);
  });

  it('wait rejects with the server err when the operation fails (a start of a running instance)', async () => {
    const t = target();
    const name = await launch();
    const op = await t.client.changeState(name, { action: 'start' });
    const err = await op.wait({ timeoutMs: 20_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'OPERATION_FAILED', errorCode: StatusCode.Failure });
    expect((err as ApiError).message).toMatch(/already running/i);
  });

  it('a long-poll that times out answers the operation still running, and wait gives up with OPERATION_TIMEOUT', async () => {
    const t = target();
    const name = await launch({ ignoresStop: true });
    const op = await t.client.changeState(name, { action: 'stop', timeout: 4 });
    const polled = await waitOperationObject(t.client.transport, op.id, 1);
    expect(polled?.status_code).toBe(StatusCode.Running);
    const err = await op.wait({ timeoutMs: 1_000, pollSeconds: 1 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'OPERATION_TIMEOUT', retryable: true });
    // The same handle keeps waiting afterwards and sees the late failure.
    const late = await op.wait({ timeoutMs: 20_000 }).catch((e: unknown) => e);
    expect(late).toMatchObject({ code: 'OPERATION_FAILED' });
    expect((late as Error).message).toMatch(/shutting down/i);
  });

  it('cancelling a non-cancellable operation is refused: by the handle without a request, by the server with 400', async () => {
    const t = target();
    const name = await launch({ ignoresStop: true });
    const op = await t.client.changeState(name, { action: 'stop', timeout: 3 });
    expect(op.value.may_cancel).toBe(false);
    await expect(op.cancel()).rejects.toMatchObject({ code: 'OPERATION_NOT_CANCELLABLE', status: undefined });
    const err = await t.client.cancelOperation(op.id).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'OPERATION_NOT_CANCELLABLE', status: 400 });
    await op.wait({ timeoutMs: 20_000 }).catch(() => undefined);
  });

  it('cancelling or getting an unknown operation is a 404', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    await expect(target().client.cancelOperation(id)).rejects.toMatchObject({ code: 'API_NOT_FOUND', status: 404 });
    await expect(target().client.getOperation(id)).rejects.toMatchObject({ code: 'API_NOT_FOUND', status: 404 });
  });

  it('a wait that finds the operation forgotten (404) after seeing it reports OPERATION_VANISHED', async () => {
    const t = target();
    const name = await launch();
    const op = await t.client.changeState(name, { action: 'freeze' });
    // The daemon forgets a finished operation a few seconds after it ends (LXD: 5 s).
    await until(
      'the finished operation forgotten',
      () =>
        t.client.getOperation(op.id).then(
          () => false,
          (e: unknown) => e instanceof ApiError && e.status === 404,
        ),
      20_000,
      200,
    );
    const err = await op.wait({ timeoutMs: 10_000 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'OPERATION_VANISHED', status: 404 });
    expect((err as Error).message).toContain(op.id);
  }, 30_000);

  it('with operation events, wait follows the event stream subscribed before the request', async () => {
    const t = target();
    const name = await launch();
    const client = t.client.withOperationEvents();
    try {
      const progress: unknown[] = [];
      const op = await client.changeState(name, { action: 'stop', force: true });
      expect(op.eventDriven).toBe(true);
      const done = await op.wait({ timeoutMs: 20_000, pollSeconds: 60, onProgress: (m) => progress.push(m) });
      expect(done.status_code).toBe(StatusCode.Success);
      // Events carry the same operation object.
      expect(done.id).toBe(op.id);
      const failing = await client.changeState(name, { action: 'stop', force: true });
      await expect(failing.wait({ timeoutMs: 20_000, pollSeconds: 60 })).rejects.toMatchObject({ code: 'OPERATION_FAILED' });
    } finally {
      await client.close().catch(() => undefined);
    }
  });

  it('operation events can come from a subscriber the caller already runs', async () => {
    const t = target();
    const name = await launch();
    const feed = new OperationFeed();
    const { url, options } = t.client.eventsEndpoint(['operation', 'lifecycle']);
    const ws = new WebSocket(url, options);
    ws.on('message', (data) => feed.ingest(String(data)));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    feed.setConnected(true);
    const client = new InstanceClient(t.client.transport, { operationEvents: feed });
    try {
      const op = await client.changeState(name, { action: 'stop', force: true });
      expect(op.eventDriven).toBe(true);
      await expect(op.wait({ timeoutMs: 20_000, pollSeconds: 60 })).resolves.toMatchObject({ status_code: StatusCode.Success });
      feed.setConnected(false);
      const polled = await client.changeState(name, { action: 'start' });
      expect(polled.eventDriven).toBe(false);
      await polled.wait({ timeoutMs: 20_000 });
    } finally {
      ws.terminate();
      await client.close();
    }
  });

  it('the operations collection lists a running operation', async () => {
    const t = target();
    const name = await launch({ ignoresStop: true });
    const op = await t.client.changeState(name, { action: 'stop', timeout: 2 });
    const ops = await t.client.listOperations();
    expect(ops.map((o) => o.id)).toContain(op.id);
    await op.wait({ timeoutMs: 20_000 }).catch(() => undefined);
  });

  it('an exec that waits for its WebSockets is a websocket-class operation with fds secrets', async () => {
    const t = target();
    const name = await launch();
    const res = await t.client.transport.request('POST', `/1.0/instances/${name}/exec`, {
      body: { command: ['/bin/true'], 'wait-for-websocket': true, interactive: false },
    });
    expect(res.kind).toBe('async');
    if (res.kind !== 'async') return;
    const op = res.envelope.metadata;
    expect(op.class).toBe('websocket');
    const fds = operationSecrets(op);
    expect(Object.keys(fds ?? {})).toEqual(expect.arrayContaining(['0', 'control']));
    for (const secret of Object.values(fds ?? {})) expect(secret).toMatch(/^[0-9a-f]{16,}$/);
  });

  it('a trust token is a token-class operation that can be cancelled (revoked)', async () => {
    const t = target();
    const res = await t.client.transport.request('POST', '/1.0/certificates', {
      body: { name: `rt-token-${process.pid}`, type: 'client', token: true },
    });
    expect(res.kind).toBe('async');
    if (res.kind !== 'async') return;
    const op = await t.client.getOperation(res.envelope.metadata.id);
    expect(op.value.class).toBe('token');
    expect(op.value.may_cancel).toBe(true);
    await op.cancel();
    await expect(op.wait({ timeoutMs: 5_000 })).rejects.toMatchObject({ code: expect.stringMatching(/OPERATION_CANCELLED|OPERATION_VANISHED/) });
  });
});
