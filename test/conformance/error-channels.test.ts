import { request } from 'undici';
import { expect, it } from 'vitest';
import { ApiError } from '../../src/client/api-error.js';
import { conformance, type ConformanceTarget, launchPerTest } from './targets.js';
import { until } from '../support/wait.js';

/**
 * Where each refusal comes (a sync error before the 202, or a failed operation after it) and in
 * which words, per revision: a client library raises a different exception for each channel
 * (pylxd: LXDAPIException from the request, or from the operation's wait), so the simulator must
 * choose as the daemon does. Also the later revision's shapes (Incus 6.0.4) where they differ.
 */

type Outcome = { channel: 'sync'; status: number | undefined; error: string } | { channel: 'operation'; status: string; error: string };

/** Sends a request and reports which channel answered and what it said. */
async function outcome(t: ConformanceTarget, method: string, path: string, body?: unknown): Promise<Outcome> {
  let res;
  try {
    res = await t.client.transport.request(method, path, { body });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { channel: 'sync', status: err.status, error: err.serverError ?? err.message };
  }
  if (res.kind !== 'async') return { channel: 'sync', status: res.status, error: '' };
  const id = String(res.envelope.operation).split('/').pop()!.split('?')[0]!;
  // Incus 6.0.4 answers the wait of a failed operation with an error envelope: read the operation after it.
  await t.client.transport.request('GET', `/1.0/operations/${id}/wait?timeout=60`).catch(() => undefined);
  const op = (await t.client.transport.request('GET', `/1.0/operations/${id}`)).envelope.metadata as { status: string; err: string };
  return { channel: 'operation', status: op.status, error: op.err };
}

/** The outcome of a request answered on the sync channel, before any operation. */
const refusedInSync = (status: number, error: string): Outcome => ({ channel: 'sync', status, error });

const image = { type: 'image', alias: 'reflex-busybox' };
let seq = 0;
const fresh = (): string => `rt-chan-${process.pid}-${++seq}`;

await conformance('each refusal on the daemon’s channel, in its words; the later revision’s shapes', (target) => {
  const launch = launchPerTest(target);
  it('create with invalid config or an unknown device type fails in the operation ("Failed creating instance record: …")', async () => {
    const t = target();
    const later = t.revision === 'later';
    const cases: [Record<string, unknown>, string][] = [
      [{ config: { 'limits.memory': 'notanumber' } }, 'Invalid value: notanumber'],
      [{ config: { 'bogus.key': '1' } }, 'Unknown configuration key: bogus.key'],
      [{ config: { 'security.privileged': 'maybe' } }, 'Invalid value for a boolean "maybe"'],
      [{ devices: { x: { type: 'bogus' } } }, later ? 'Invalid device type "bogus"' : 'Invalid device type bogus'],
    ];
    for (const [extra, text] of cases) {
      const name = fresh();
      try {
        expect(await outcome(t, 'POST', '/1.0/instances', { name, source: image, ...extra })).toEqual({
          channel: 'operation',
          status: 'Failure',
          error: `Failed creating instance record: ${text}`,
        });
      } finally {
        await t.remove(name);
      }
    }
  });

  it('create under a taken name fails in the operation with the database’s words; an invalid name is a sync 400', async () => {
    const t = target();
    const name = await launch();
    expect(await outcome(t, 'POST', '/1.0/instances', { name, source: image })).toEqual({
      channel: 'operation',
      status: 'Failure',
      error:
        t.revision === 'later'
          ? 'Failed creating instance record: Add instance info to the database: Failed to create "instances" entry: UNIQUE constraint failed: instances.project_id, instances.name'
          : 'Failed creating instance record: Add instance info to the database: This "instances" entry already exists',
    });
    expect(await outcome(t, 'POST', '/1.0/instances', { name: 'bad_name!', source: image })).toEqual(
      refusedInSync(400, 'Invalid instance name: Name can only contain alphanumeric and hyphen characters'),
    );
  });

  it('restoring a missing snapshot of a running instance fails in the operation; renaming it is refused in the operation', async () => {
    const t = target();
    const name = await launch();
    expect(await outcome(t, 'PUT', `/1.0/instances/${name}`, { restore: 'nosuch' })).toEqual({
      channel: 'operation',
      status: 'Failure',
      error: `Snapshot ${name}/nosuch does not exist`,
    });
    expect(await outcome(t, 'POST', `/1.0/instances/${name}`, { name: `${name}-r` })).toEqual({
      channel: 'operation',
      status: 'Failure',
      error: t.revision === 'later' ? 'Renaming of running instance not allowed' : 'Renaming of running container not allowed',
    });
    const missing = await outcome(t, 'GET', `/1.0/instances/${name}-gone`);
    expect(missing).toEqual({
      channel: 'sync',
      status: 404,
      error: t.revision === 'later' ? `Failed to fetch instance "${name}-gone" in project "default": Instance not found` : 'Instance not found',
    });
  });

  it('a duplicate profile is a 500 from the database; a new one is 201', async () => {
    const t = target();
    const name = fresh();
    try {
      expect(await outcome(t, 'POST', '/1.0/profiles', { name })).toEqual({ channel: 'sync', status: 201, error: '' });
      expect(await outcome(t, 'POST', '/1.0/profiles', { name })).toEqual(
        refusedInSync(500, `Error inserting "${name}" into database: The profile already exists`),
      );
    } finally {
      await t.client.transport.request('DELETE', `/1.0/profiles/${name}`).catch(() => undefined);
    }
  });

  it('"start": true on create starts the instance in the later revision only (instance_create_start)', async () => {
    const t = target();
    const name = fresh();
    try {
      expect(await outcome(t, 'POST', '/1.0/instances', { name, source: image, start: true })).toMatchObject({
        channel: 'operation',
        status: 'Success',
      });
      const state = (await t.client.transport.request('GET', `/1.0/instances/${name}/state`)).envelope.metadata as Record<string, unknown>;
      expect(state.status).toBe(t.revision === 'later' ? 'Running' : 'Stopped');
    } finally {
      await t.remove(name);
    }
  });

  it('a created instance is certainly there only once its operation ended (a GET right after the 202 may be 404)', async () => {
    const t = target();
    const name = fresh();
    try {
      const res = await t.client.transport.request('POST', '/1.0/instances', { body: { name, source: image } });
      const early = await t.client.transport.request('GET', `/1.0/instances/${name}`).then(
        () => 200,
        (err: ApiError) => err.status,
      );
      expect([200, 404]).toContain(early);
      if (res.kind === 'async') await t.client.transport.request('GET', `${String(res.envelope.operation)}/wait?timeout=60`);
      expect((await t.client.transport.request('GET', `/1.0/instances/${name}`)).status).toBe(200);
    } finally {
      await t.remove(name);
    }
  });

  it('the later revision’s shapes: /state started_at and os_info, volatile.uuid.generation, /1.0 auth_user_*, descriptions, Z timestamps', async () => {
    const t = target();
    const later = t.revision === 'later';
    const name = await launch();
    const state = (await t.client.transport.request('GET', `/1.0/instances/${name}/state`)).envelope.metadata as Record<string, unknown>;
    const inst = (await t.client.transport.request('GET', `/1.0/instances/${name}`)).envelope.metadata as {
      config: Record<string, string>;
      created_at: string;
    };
    const server = (await t.client.transport.request('GET', '/1.0')).envelope.metadata as Record<string, unknown>;
    const project = (await t.client.transport.request('GET', '/1.0/projects/default')).envelope.metadata as { description: string };
    const profile = (await t.client.transport.request('GET', '/1.0/profiles/default')).envelope.metadata as { description: string };
    if (later) {
      expect(state).toMatchObject({ os_info: null });
      expect(String(state.started_at)).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
      expect(inst.config['volatile.uuid.generation']).toBe(inst.config['volatile.uuid']);
      expect(['unix', 'tls']).toContain(server.auth_user_method);
      expect(typeof server.auth_user_name).toBe('string');
      expect(inst.created_at).toMatch(/Z$/);
      expect([project.description, profile.description]).toEqual(['Default Incus project', 'Default Incus profile']);
    } else {
      expect(state).not.toHaveProperty('started_at');
      expect(inst.config).not.toHaveProperty('volatile.uuid.generation');
      expect(server).not.toHaveProperty('auth_user_name');
      expect([project.description, profile.description]).toEqual(['Default LXD project', 'Default LXD profile']);
    }
  });

  it('invalid config on PATCH is a 500 with "Invalid config: …", as on both daemons', async () => {
    const t = target();
    const name = await launch();
    expect(await outcome(t, 'PATCH', `/1.0/instances/${name}`, { config: { 'security.privileged': 'maybe' } })).toEqual(
      refusedInSync(500, 'Invalid config: Invalid value for a boolean "maybe"'),
    );
  });

  it('during a crash’s stop hook a start and a stop are taken (202) and answered in their operation, never in sync', async () => {
    const t = target();
    const name = await launch();
    await t.crash(name);
    const status = async () =>
      ((await t.client.transport.request('GET', `/1.0/instances/${name}/state`)).envelope.metadata as { status_code: number }).status_code;
    // As an operator would: once it reads Stopped, before its shutdown is announced (about 0.6 s after the kill).
    await until('the crashed instance to read Stopped', async () => (await status()) === 102, 5_000, 10);
    const busy = 'Failed to create instance start operation: Instance is busy running a "stop" operation';
    const start = await outcome(t, 'PUT', `/1.0/instances/${name}/state`, { action: 'start' });
    // Incus 6.0.4 answers a start once /state reads Stopped with "already running" (measured); busy before that.
    // On the real daemon the hook may also have ended by the time the start runs (a loaded machine
    // reads Stopped late): the start then succeeds, still in its operation. The simulator's hook
    // outlasts the read, so it is held to the refusal.
    const hookEnded = !t.name.startsWith('sim-') && start.status === 'Success';
    if (hookEnded) expect(start).toEqual({ channel: 'operation', status: 'Success', error: '' });
    else if (t.revision === 'later' && start.error !== busy)
      expect(start).toEqual({ channel: 'operation', status: 'Failure', error: 'The instance is already running' });
    else expect(start).toEqual({ channel: 'operation', status: 'Failure', error: busy });
    if (hookEnded) return; // it runs again: a stop now is an ordinary one
    // LXD 5.0.2 fails the stop at once; Incus 6.0.4 lets it end with the hook, when the shutdown is announced.
    expect(await outcome(t, 'PUT', `/1.0/instances/${name}/state`, { action: 'stop', timeout: -1 })).toEqual(
      t.revision === 'later'
        ? { channel: 'operation', status: 'Success', error: '' }
        : { channel: 'operation', status: 'Failure', error: 'The instance is already stopped' },
    );
  });

  it('the wait of a failed operation: the operation object on LXD 5.0.2, its error as an error envelope under HTTP 200 on Incus 6.0.4', async () => {
    const t = target();
    const name = await launch();
    const res = await t.client.transport.request('PUT', `/1.0/instances/${name}/state`, { body: { action: 'start' } });
    const id = String(res.envelope.operation).split('/').pop()!;
    const answer = await request(`${t.client.transport.activeOrigin}/1.0/operations/${id}/wait?timeout=30`, {
      dispatcher: t.client.transport['agent'],
    });
    const body = (await answer.body.json()) as {
      type: string;
      error_code: number;
      error: string;
      metadata: { status?: string; err?: string } | null;
    };
    expect(answer.statusCode).toBe(200);
    if (t.revision === 'later')
      expect(body).toMatchObject({ type: 'error', error_code: 500, error: 'The instance is already running', metadata: null });
    else expect(body).toMatchObject({ type: 'sync', error_code: 0, metadata: { status: 'Failure', err: 'The instance is already running' } });
  });
});
