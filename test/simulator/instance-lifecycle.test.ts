import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { drained, startTestSim, type TestSim } from './sim-client.js';

const unix = { username: 'root', protocol: 'unix', address: '@' };
let t: TestSim;

beforeEach(async () => {
  t = await startTestSim({ seed: 1 });
  t.sim.controls.addInstance({ name: 'c1', status: 'Stopped' });
});
afterEach(async () => t.close());

async function act(name: string, action: string, extra: Record<string, unknown> = {}) {
  const res = await t.api('PUT', `/1.0/instances/${name}/state`, { action, ...extra });
  expect(res.status).toBe(202);
  return t.waitOp(res);
}

function opCodes(frames: any[], id: string): number[] {
  return frames.filter((f) => f.type === 'operation' && f.metadata.id === id).map((f) => f.metadata.status_code);
}

describe('envelopes', () => {
  it('answers GET / with the supported versions in a sync envelope', async () => {
    const res = await t.api('GET', '/');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ type: 'sync', status: 'Success', status_code: 200, operation: '', error_code: 0, error: '', metadata: ['/1.0'] });
  });

  it('reports a trusted local client and api_extensions on GET /1.0', async () => {
    const res = await t.api('GET', '/1.0');
    expect(res.body.metadata.auth).toBe('trusted');
    expect(res.body.metadata.api_extensions).toContain('instances');
  });

  it('answers an unknown instance with a 404 error envelope', async () => {
    const res = await t.api('GET', '/1.0/instances/nope');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ type: 'error', error: 'Instance not found', error_code: 404, metadata: null });
  });

  it('refuses an unknown state action synchronously with 400', async () => {
    const res = await t.api('PUT', '/1.0/instances/c1/state', { action: 'bogus' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("Unknown action: 'bogus'");
  });

  it('answers a state change with 202, a Location header and an operation object', async () => {
    const res = await t.api('PUT', '/1.0/instances/c1/state', { action: 'start' });
    expect(res.status).toBe(202);
    expect(res.headers.location).toBe(res.body.operation);
    expect(res.body).toMatchObject({ type: 'async', status_code: 100 });
    const op = res.body.metadata;
    expect(op).toMatchObject({
      class: 'task',
      description: 'Starting instance',
      may_cancel: false,
      err: '',
      resources: { instances: ['/1.0/instances/c1'] },
    });
    expect(op.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+[+-]\d\d:\d\d$/);
    await t.waitOp(res);
  });
});

describe('state machine and lifecycle events', () => {
  it('start emits instance-started with requestor and ends Running', async () => {
    const tap = await t.events();
    const op = await act('c1', 'start');
    expect(op.status_code).toBe(200);
    await tap.until((f) => f.metadata.action === 'instance-started');
    expect(tap.lifecycle().map((f) => [f.metadata.action, f.metadata.requestor])).toEqual([['instance-started', unix]]);
    expect(opCodes(tap.frames, op.id)).toEqual([105, 103, 200]);
    const state = await t.api('GET', '/1.0/instances/c1/state');
    expect(state.body.metadata).toMatchObject({ status: 'Running', status_code: 103 });
    expect(state.body.metadata.pid).toBeGreaterThan(0);
  });

  it('distinguishes forced stop (instance-stopped) from graceful stop (instance-shutdown), both with requestor', async () => {
    await act('c1', 'start');
    const tap = await t.events('?type=lifecycle');
    await act('c1', 'stop', { force: true });
    await act('c1', 'start');
    await act('c1', 'stop');
    await tap.until((f) => f.metadata.action === 'instance-shutdown');
    expect(tap.lifecycle().map((f) => f.metadata.action)).toEqual(['instance-stopped', 'instance-started', 'instance-shutdown']);
    expect(tap.lifecycle().every((f) => f.metadata.requestor?.protocol === 'unix')).toBe(true);
  });

  it('restart emits only instance-restarted', async () => {
    await act('c1', 'start');
    const tap = await t.events('?type=lifecycle');
    const op = await act('c1', 'restart');
    expect(op.status_code).toBe(200);
    await drained(t.sim, tap, 'c1');
    expect(tap.lifecycle().map((f) => f.metadata.action)).toEqual(['instance-restarted']);
  });

  it('freeze and unfreeze emit paused and resumed; start on a frozen instance resumes it', async () => {
    await act('c1', 'start');
    const tap = await t.events('?type=lifecycle');
    await act('c1', 'freeze');
    expect((await t.api('GET', '/1.0/instances/c1')).body.metadata.status_code).toBe(110);
    await act('c1', 'unfreeze');
    await act('c1', 'freeze');
    await act('c1', 'start');
    await tap.until(() => tap.lifecycle().length >= 4);
    expect(tap.lifecycle().map((f) => f.metadata.action)).toEqual(['instance-paused', 'instance-resumed', 'instance-paused', 'instance-resumed']);
  });

  it('stops a frozen instance gracefully by resuming it first (resumed, then shutdown), as LXD does', async () => {
    await act('c1', 'start');
    await act('c1', 'freeze');
    const tap = await t.events('?type=lifecycle');
    const op = await act('c1', 'stop');
    expect(op.status_code).toBe(200);
    await tap.until((f) => f.metadata.action === 'instance-shutdown');
    expect(tap.lifecycle().map((f) => f.metadata.action)).toEqual(['instance-resumed', 'instance-shutdown']);
    expect((await t.api('GET', '/1.0/instances/c1')).body.metadata.status_code).toBe(102);
  });

  it('answers a refused action with 202 and a Running operation; the refusal comes in the operation', async () => {
    const res = await t.api('PUT', '/1.0/instances/c1/state', { action: 'stop' });
    expect(res.status).toBe(202);
    expect(res.body.metadata).toMatchObject({ status_code: 103, err: '' });
    expect(await t.waitOp(res)).toMatchObject({ status_code: 400, err: 'The instance is already stopped' });
  });

  it('reports late refusals as failed operations, not HTTP errors', async () => {
    expect((await act('c1', 'stop')).err).toBe('The instance is already stopped');
    expect((await act('c1', 'freeze')).err).toBe("The container isn't running");
    await act('c1', 'start');
    const again = await act('c1', 'start');
    expect(again).toMatchObject({ status_code: 400, status: 'Failure', err: 'The instance is already running' });
    await act('c1', 'freeze');
    expect((await act('c1', 'freeze')).err).toBe('The container is already frozen');
    await act('c1', 'unfreeze');
    expect((await act('c1', 'unfreeze')).err).toBe('The container is already running');
  });

  it('refuses an action that neither joins nor waits while another holds the instance lock (freeze during a start)', async () => {
    const first = t.api('PUT', '/1.0/instances/c1/state', { action: 'start' });
    const second = await act('c1', 'freeze');
    expect(second.err).toBe('Failed to create instance freeze operation: Instance is busy running a "start" operation');
    await t.waitOp(await first);
  });
});

describe('instance resources', () => {
  it('lists URLs, objects and full objects by recursion level', async () => {
    const r0 = await t.api('GET', '/1.0/instances');
    expect(r0.body.metadata).toEqual(['/1.0/instances/c1']);
    const r1 = await t.api('GET', '/1.0/instances?recursion=1');
    expect(r1.body.metadata[0]).toMatchObject({
      name: 'c1',
      type: 'container',
      status: 'Stopped',
      status_code: 102,
      location: 'none',
      project: 'default',
    });
    expect(r1.body.metadata[0].state).toBeUndefined();
    const r2 = await t.api('GET', '/1.0/instances?recursion=2');
    expect(r2.body.metadata[0]).toMatchObject({ state: { status_code: 102, pid: 0 }, snapshots: null, backups: null });
  });

  it('changes the ETag on every start and stop, and rejects a stale If-Match with 412', async () => {
    const before = (await t.api('GET', '/1.0/instances/c1')).headers.etag as string;
    expect(before).toMatch(/^"[0-9a-f]{64}"$/);
    await act('c1', 'start');
    const after = await t.api('GET', '/1.0/instances/c1');
    expect(after.headers.etag).not.toBe(before);
    const stale = await t.api('PUT', '/1.0/instances/c1', after.body.metadata, { 'if-match': before });
    expect(stale.status).toBe(412);
    expect(stale.body.error).toMatch(/^ETag doesn't match: [0-9a-f]{64} vs [0-9a-f]{64}$/);
    const fresh = await t.api('PUT', '/1.0/instances/c1', after.body.metadata, { 'if-match': after.headers.etag as string });
    expect(fresh.status).toBe(202);
    expect((await t.waitOp(fresh)).status_code).toBe(200);
  });

  it('fails a PUT that drops the volatile idmap keys, in the operation', async () => {
    const cur = (await t.api('GET', '/1.0/instances/c1')).body.metadata;
    const config = Object.fromEntries(Object.entries(cur.config).filter(([k]) => !k.startsWith('volatile.')));
    const res = await t.api('PUT', '/1.0/instances/c1', { ...cur, config });
    expect(res.status).toBe(202);
    expect((await t.waitOp(res)).err).toBe("Volatile idmap keys can't be deleted by the user");
  });

  it('merges PATCH config and unsets keys set to the empty string', async () => {
    const tap = await t.events('?type=lifecycle');
    expect((await t.api('PATCH', '/1.0/instances/c1', { config: { 'user.a': '1', 'user.b': '2' } })).status).toBe(200);
    await t.api('PATCH', '/1.0/instances/c1', { config: { 'user.a': '' } });
    const cfg = (await t.api('GET', '/1.0/instances/c1')).body.metadata.config;
    expect(cfg['user.a']).toBeUndefined();
    expect(cfg['user.b']).toBe('2');
    await tap.until(() => tap.lifecycle().length >= 2);
    expect(tap.lifecycle().map((f) => [f.metadata.action, f.metadata.requestor])).toEqual([
      ['instance-updated', undefined],
      ['instance-updated', undefined],
    ]);
  });

  it('creates, renames and deletes instances with LXD events and resources', async () => {
    const tap = await t.events();
    const created = await t.api('POST', '/1.0/instances', { name: 'n1', source: { type: 'none' } });
    expect(created.body.metadata.resources).toEqual({ containers: ['/1.0/containers/n1'], instances: ['/1.0/instances/n1'] });
    await t.waitOp(created);
    expect(await t.waitOp(await t.api('POST', '/1.0/instances', { name: 'n1' }))).toMatchObject({
      status_code: 400,
      err: 'Failed creating instance record: Add instance info to the database: This "instances" entry already exists',
    });
    expect((await t.waitOp(await t.api('POST', '/1.0/instances/n1', { name: 'n2' }))).status_code).toBe(200);
    await act('n2', 'start');
    expect((await t.api('DELETE', '/1.0/instances/n2')).body).toMatchObject({ error_code: 400, error: 'Instance is running' });
    await act('n2', 'stop', { force: true });
    await t.waitOp(await t.api('DELETE', '/1.0/instances/n2'));
    await tap.until((f) => f.metadata.action === 'instance-deleted');
    expect(tap.lifecycle().map((f) => f.metadata.action)).toEqual([
      'instance-created',
      'instance-renamed',
      'instance-started',
      'instance-stopped',
      'instance-deleted',
    ]);
    expect(tap.lifecycle()[1].metadata).toMatchObject({ source: '/1.0/instances/n2', context: { old_name: 'n1' } });
  });

  it('serves /1.0/containers and /1.0/virtual-machines restricted to their type', async () => {
    t.sim.controls.addInstance({ name: 'vm1', type: 'virtual-machine' });
    expect((await t.api('GET', '/1.0/containers')).body.metadata).toEqual(['/1.0/containers/c1']);
    expect((await t.api('GET', '/1.0/virtual-machines')).body.metadata).toEqual(['/1.0/virtual-machines/vm1']);
    expect((await t.api('GET', '/1.0/containers/vm1')).status).toBe(404);
    expect((await t.api('GET', '/1.0/containers/c1')).body.metadata.name).toBe('c1');
  });
});
