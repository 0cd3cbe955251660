import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../src/simulator/simulator.js';
import { fastTimings } from './sim-client.js';

let sim: RunningSimulator | undefined;
let agent: Agent | undefined;

afterEach(async () => {
  await agent?.close();
  await sim?.stop();
  sim = undefined;
  agent = undefined;
});

async function start(revision: 'earlier' | 'later' = 'earlier'): Promise<RunningSimulator> {
  sim = await startSimulator({ revision, timings: fastTimings });
  agent = new Agent({ connect: { socketPath: sim.socketPath! } });
  return sim;
}

async function call(method: string, path: string, opts: { body?: string; headers?: Record<string, string>; json?: unknown } = {}) {
  const res = await request(`http://sim${path}`, {
    method: method as 'GET',
    dispatcher: agent!,
    headers: opts.headers,
    body: opts.json !== undefined ? JSON.stringify(opts.json) : opts.body,
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

const file = (name: string, path: string): string => `/1.0/instances/${name}/files?path=${encodeURIComponent(path)}`;

async function waitOp(answer: { text: string }): Promise<unknown> {
  const op = JSON.parse(answer.text) as { operation: string };
  return JSON.parse((await call('GET', `${op.operation}/wait?timeout=10`)).text);
}

describe('the files of a simulated instance', () => {
  it('a rename keeps the files; a delete drops them, so a new instance of the same name starts from its image', async () => {
    const s = await start();
    s.controls.addInstance({ name: 'c1', status: 'Stopped' });
    expect((await call('POST', file('c1', '/root/notes'), { body: 'kept\n' })).status).toBe(200);
    await waitOp(await call('POST', '/1.0/instances/c1', { json: { name: 'c2' } }));
    expect((await call('GET', file('c2', '/root/notes'))).text).toBe('kept\n');
    await waitOp(await call('DELETE', '/1.0/instances/c2'));
    s.controls.addInstance({ name: 'c2', status: 'Stopped' });
    expect((await call('GET', file('c2', '/root/notes'))).status).toBe(404);
  });

  it('X-LXD-write: append appends; an existing file keeps its mode and owner unless told', async () => {
    const s = await start();
    s.controls.addInstance({ name: 'c1', status: 'Running' });
    await call('POST', file('c1', '/tmp/log'), { body: 'one\n', headers: { 'X-LXD-mode': '0600', 'X-LXD-uid': '33' } });
    await call('POST', file('c1', '/tmp/log'), { body: 'two\n', headers: { 'X-LXD-write': 'append' } });
    const pull = await call('GET', file('c1', '/tmp/log'));
    expect(pull.text).toBe('one\ntwo\n');
    expect(pull.headers).toMatchObject({ 'x-lxd-mode': '0600', 'x-lxd-uid': '33', 'x-lxd-type': 'file' });
  });

  it('the later revision answers with X-Incus-* headers and reads X-Incus-* as well as X-LXD-* on a push', async () => {
    const s = await start('later');
    s.controls.addInstance({ name: 'c1', status: 'Running' });
    await call('POST', file('c1', '/tmp/a'), { body: 'a', headers: { 'X-Incus-uid': '7', 'X-Incus-mode': '0600' } });
    const pull = await call('GET', file('c1', '/tmp/a'));
    expect(pull.headers).toMatchObject({ 'x-incus-uid': '7', 'x-incus-mode': '0600', 'x-incus-type': 'file' });
    expect(pull.headers['x-lxd-uid']).toBeUndefined();
  });

  it('a symlink pulls as its target; a debian instance has /etc/os-release, a busybox one has not', async () => {
    const s = await start();
    s.controls.addInstance({ name: 'bb', status: 'Running' });
    s.controls.addInstance({ name: 'deb', status: 'Running', config: { 'image.os': 'Debian' } });
    const link = await call('GET', file('bb', '/linuxrc'));
    expect(link).toMatchObject({ status: 200, text: '/bin/busybox' });
    expect(link.headers['x-lxd-type']).toBe('symlink');
    expect((await call('GET', file('bb', '/etc/os-release'))).status).toBe(404);
    expect((await call('GET', file('deb', '/etc/os-release'))).text).toContain('ID=debian');
  });

  it('a path without its leading slash is taken from / (what lxc 5.0.2 sends for file pull, pull -r, delete and edit)', async () => {
    const s = await start();
    s.controls.addInstance({ name: 'c1', status: 'Running' });
    expect((await call('POST', file('c1', 'tmp/d/../rel'), { body: 'r\n' })).status).toBe(200);
    expect((await call('GET', file('c1', 'tmp/rel'))).text).toBe('r\n');
    expect(JSON.parse((await call('GET', file('c1', 'tmp'))).text).metadata).toContain('rel');
    expect((await call('DELETE', file('c1', 'tmp/rel'))).status).toBe(200);
    expect((await call('GET', file('c1', '/tmp/rel'))).status).toBe(404);
    expect((await call('GET', file('c1', 'relative'))).status).toBe(404);
  });

  it.each(['earlier', 'later'] as const)(
    "%s: deleting a directory that is not empty, or /, is refused in the sftp server's words (500)",
    async (revision) => {
      const s = await start(revision);
      s.controls.addInstance({ name: 'c1', status: 'Running' });
      await call('POST', file('c1', '/tmp/d'), { headers: { 'X-LXD-type': 'directory' } });
      await call('POST', file('c1', '/tmp/d/a'), { body: 'a' });
      for (const [path, error] of [
        ['tmp/d', 'sftp: "remove /tmp/d: directory not empty" (SSH_FX_FAILURE)'],
        ['/', 'sftp: "remove /: device or resource busy" (SSH_FX_FAILURE)'],
      ]) {
        const res = await call('DELETE', file('c1', path!));
        expect(res.status).toBe(500);
        expect(JSON.parse(res.text)).toMatchObject({ error_code: 500, error });
      }
    },
  );

  it('an unknown instance is 404 "Instance not found"', async () => {
    await start();
    const res = await call('GET', file('nope', '/etc/passwd'));
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toMatchObject({ error: 'Instance not found' });
  });
});
