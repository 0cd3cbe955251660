import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../../src/client/api-error.js';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { envelopeSchema, operationInstanceUrls, operationSchema, operationSecrets } from '../../src/client/envelope.js';

// Bodies as LXD 5.0.2 sent them (captured with curl on the test bed).
const lxdAsync = {
  type: 'async',
  status: 'Operation created',
  status_code: 100,
  operation: '/1.0/operations/4bcc3464-9d63-4d0a-96c0-797c830a24c6',
  error_code: 0,
  error: '',
  metadata: {
    id: '4bcc3464-9d63-4d0a-96c0-797c830a24c6',
    class: 'task',
    description: 'Creating instance',
    created_at: '2026-11-22T08:26:04.073140285Z',
    updated_at: '2026-11-22T08:26:04.073140285Z',
    status: 'Running',
    status_code: 103,
    resources: { containers: ['/1.0/containers/rt-dup'], instances: ['/1.0/instances/rt-dup'] },
    metadata: null,
    may_cancel: false,
    err: '',
    location: 'none',
  },
};
const lxdError = { type: 'error', status: '', status_code: 0, operation: '', error_code: 404, error: 'not found', metadata: null };

describe('envelopes are validated, tolerating the fields the real daemon adds', () => {
  it('accepts LXD 5.0.2 async and error envelopes with their extra fields', () => {
    expect(envelopeSchema.parse(lxdAsync)).toMatchObject({ type: 'async', status_code: 100 });
    expect(envelopeSchema.parse(lxdError)).toMatchObject({ type: 'error', error_code: 404, error: 'not found' });
  });

  it('reads instance URLs under either resource key, once each', () => {
    expect(operationInstanceUrls(operationSchema.parse(lxdAsync.metadata))).toEqual(['/1.0/instances/rt-dup', '/1.0/containers/rt-dup']);
    const later = { ...lxdAsync.metadata, resources: { instances: ['/1.0/instances/a'] } };
    expect(operationInstanceUrls(operationSchema.parse(later))).toEqual(['/1.0/instances/a']);
  });

  it('gives the fds secrets of websocket operations only', () => {
    const ws = operationSchema.parse({ ...lxdAsync.metadata, class: 'websocket', metadata: { fds: { '0': 'aa', control: 'bb' } } });
    expect(operationSecrets(ws)).toEqual({ '0': 'aa', control: 'bb' });
    expect(operationSecrets(operationSchema.parse(lxdAsync.metadata))).toBeUndefined();
  });

  it('rejects reserved (600–999) and unknown status codes as invalid', () => {
    for (const code of [600, 777, 999, 114]) {
      const result = operationSchema.safeParse({ ...lxdAsync.metadata, status_code: code });
      expect(result.success).toBe(false);
      expect(result.error?.message).toMatch(/not in the status table/);
    }
    expect(envelopeSchema.safeParse({ type: 'sync', status: 'Success', status_code: 700, metadata: {} }).success).toBe(false);
    expect(operationSchema.safeParse({ ...lxdAsync.metadata, status_code: 113 }).success).toBe(true);
  });

  it('rejects an error envelope whose error_code is outside 400–599', () => {
    expect(envelopeSchema.safeParse({ ...lxdError, error_code: 0 }).success).toBe(false);
    expect(envelopeSchema.safeParse({ ...lxdError, error_code: 600 }).success).toBe(false);
  });
});

describe('a sync answer whose metadata does not fit the resource', () => {
  it('is reported as API_BAD_RESPONSE naming the request and the field, not as a bare validation error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reflex-meta-'));
    const socketPath = join(dir, 'unix.socket');
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          type: 'sync',
          status: 'Success',
          status_code: 200,
          operation: '',
          error_code: 0,
          error: '',
          metadata: { name: 'c1', status: 'Running', status_code: 'Running' },
        }),
      );
    });
    await new Promise<void>((r) => server.listen(socketPath, r));
    const client = new InstanceClient(parseTarget(`unix://${socketPath}`));
    try {
      const err = await client.getInstance('c1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ code: 'API_BAD_RESPONSE', retryable: false, method: 'GET', path: '/1.0/instances/c1' });
      expect((err as Error).message).toMatch(/GET \/1\.0\/instances\/c1: the answer's metadata\.status_code does not fit/);
    } finally {
      await client.close();
      await new Promise((r) => server.close(r));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a daemon answer nested too deep to walk', () => {
  it('is refused as API_BAD_RESPONSE before it is parsed, and the client keeps working', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reflex-deep-'));
    const socketPath = join(dir, 'unix.socket');
    const depth = 5_000;
    const instance = { name: 'c1', status: 'Running', status_code: 103, config: {}, devices: {}, expanded_config: {}, expanded_devices: {} };
    let deep = true;
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const metadata = deep
        ? `{"name":"c1","status":"Running","status_code":103,"extra":${'['.repeat(depth)}${']'.repeat(depth)}}`
        : JSON.stringify(instance);
      res.end(`{"type":"sync","status":"Success","status_code":200,"operation":"","error_code":0,"error":"","metadata":${metadata}}`);
    });
    await new Promise<void>((r) => server.listen(socketPath, r));
    const client = new InstanceClient(parseTarget(`unix://${socketPath}`));
    try {
      const err = await client.getInstance('c1').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'API_BAD_RESPONSE', retryable: false, method: 'GET', path: '/1.0/instances/c1' });
      expect((err as Error).message).toMatch(/nested deeper than 128 levels/);
      deep = false;
      expect((await client.getInstance('c1')).value).toMatchObject({ name: 'c1', status_code: 103 });
    } finally {
      await client.close();
      await new Promise((r) => server.close(r));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
