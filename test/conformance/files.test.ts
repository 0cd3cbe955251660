import { request } from 'undici';
import { expect, it } from 'vitest';
import type { InstanceClient } from '../../src/client/client.js';
import { type ConformanceTarget, launchPerTest, printing, transportConformance } from './targets.js';

/** A raw files-API call through the target client's own connection (the files API is not an envelope API). */
async function files(
  client: InstanceClient,
  method: 'GET' | 'POST' | 'DELETE',
  instance: string,
  path: string | undefined,
  opts: { body?: Buffer | string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
  const query = path === undefined ? '' : `?path=${encodeURIComponent(path)}`;
  const res = await request(`${client.transport.activeOrigin}/1.0/instances/${instance}/files${query}`, {
    method,
    headers: { ...(opts.body !== undefined ? { 'content-type': 'application/octet-stream' } : {}), ...opts.headers },
    body: opts.body,
    dispatcher: client.transport['agent'],
  });
  const headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]));
  return { status: res.statusCode, headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

/** The entry headers of the files API: `X-LXD-*` on LXD, `X-Incus-*` on Incus. */
function entryHeaders(t: ConformanceTarget, res: { headers: Record<string, string> }): Record<string, string | undefined> {
  const prefix = t.revision === 'later' ? 'x-incus' : 'x-lxd';
  return {
    type: res.headers[`${prefix}-type`],
    mode: res.headers[`${prefix}-mode`],
    uid: res.headers[`${prefix}-uid`],
    gid: res.headers[`${prefix}-gid`],
  };
}

const envelope = (res: { body: Buffer }): { error_code: number; error: string; metadata: unknown } => JSON.parse(res.body.toString('utf8'));

await transportConformance('files: push, pull, list and delete through /1.0/instances/NAME/files (issue #28)', (target) => {
  const launch = launchPerTest(target);
  it('a pushed file comes back through exec cat and a pull, byte for byte, with its mode and owner', async () => {
    const t = target();
    const name = await launch();
    const bytes = Buffer.from('pushed bytes\nsecond line, café\n', 'utf8');
    const push = await files(t.client, 'POST', name, '/root/pushed.txt', {
      body: bytes,
      headers: { 'X-LXD-uid': '1000', 'X-LXD-gid': '1001', 'X-LXD-mode': '0640' },
    });
    expect(push.status).toBe(200);
    const cat = await printing(t, async () => (await t.client.exec(name, { command: ['cat', '/root/pushed.txt'] })).wait({ timeoutMs: 20_000 }));
    expect({ stdout: cat.stdout, exitCode: cat.exitCode }).toEqual({ stdout: bytes.toString('utf8'), exitCode: 0 });
    const pull = await files(t.client, 'GET', name, '/root/pushed.txt');
    expect(pull.status).toBe(200);
    expect(pull.body.equals(bytes)).toBe(true);
    expect(pull.headers['content-type']).toBe('application/octet-stream');
    expect(entryHeaders(t, pull)).toEqual({ type: 'file', mode: '0640', uid: '1000', gid: '1001' });
  });

  it('a directory lists its names; the root lists the image layout', async () => {
    const t = target();
    const name = await launch();
    await files(t.client, 'POST', name, '/tmp/rt-a', { body: 'a' });
    const tmp = await files(t.client, 'GET', name, '/tmp');
    expect(tmp.status).toBe(200);
    expect(envelope(tmp).metadata).toEqual(['rt-a']);
    // Permission bits only: /tmp is 1777 in the image.
    expect(entryHeaders(t, tmp)).toEqual({ type: 'directory', mode: '0777', uid: '0', gid: '0' });
    const root = await files(t.client, 'GET', name, '/');
    expect((envelope(root).metadata as string[]).sort()).toEqual([
      'bin',
      'dev',
      'etc',
      'linuxrc',
      'proc',
      'root',
      'run',
      'sbin',
      'sys',
      'tmp',
      'usr',
      'var',
    ]);
  });

  it("a pushed directory takes the daemon's default mode (LXD 0750, Incus 0755) and a file made by exec shows its chmod", async () => {
    const t = target();
    const name = await launch();
    expect((await files(t.client, 'POST', name, '/tmp/rt-dir', { headers: { 'X-LXD-type': 'directory' } })).status).toBe(200);
    expect(entryHeaders(t, await files(t.client, 'GET', name, '/tmp/rt-dir'))).toEqual({
      type: 'directory',
      mode: t.revision === 'later' ? '0755' : '0750',
      uid: '0',
      gid: '0',
    });
    await (
      await t.client.exec(name, { command: ['sh', '-c', 'echo new > /tmp/rt-by-shell; chmod 600 /tmp/rt-by-shell'] })
    ).wait({ timeoutMs: 20_000 });
    const pull = await files(t.client, 'GET', name, '/tmp/rt-by-shell');
    expect(pull.body.toString('utf8')).toBe('new\n');
    expect(entryHeaders(t, pull)).toEqual({ type: 'file', mode: '0600', uid: '0', gid: '0' });
  });

  it('delete removes a file (then 404 "Not Found"); a missing path, a missing parent and a relative path are 404; no path is 400', async () => {
    const t = target();
    const name = await launch();
    await files(t.client, 'POST', name, '/tmp/rt-gone', { body: 'x' });
    expect((await files(t.client, 'DELETE', name, '/tmp/rt-gone')).status).toBe(200);
    for (const res of [
      await files(t.client, 'GET', name, '/tmp/rt-gone'),
      await files(t.client, 'DELETE', name, '/tmp/rt-gone'),
      await files(t.client, 'POST', name, '/rt-no-such-dir/f', { body: 'x' }),
      await files(t.client, 'GET', name, 'relative'),
    ]) {
      expect(res.status).toBe(404);
      expect(envelope(res)).toMatchObject({ error_code: 404, error: 'Not Found' });
    }
    const noPath = await files(t.client, 'GET', name, undefined);
    expect(noPath.status).toBe(400);
    expect(envelope(noPath)).toMatchObject({ error_code: 400, error: 'Missing path argument' });
    const cat = await (await t.client.exec(name, { command: ['cat', '/tmp/rt-gone'] })).wait({ timeoutMs: 20_000 });
    expect(cat.exitCode).toBe(1);
  });

  it('a stopped instance keeps its files, and they can be pulled while it is stopped', async () => {
    const t = target();
    const name = await launch();
    await files(t.client, 'POST', name, '/root/rt-kept', { body: 'kept\n' });
    await (await t.client.changeState(name, { action: 'stop', force: true })).wait({ timeoutMs: 30_000 });
    const pull = await files(t.client, 'GET', name, '/root/rt-kept');
    expect(pull.status).toBe(200);
    expect(pull.body.toString('utf8')).toBe('kept\n');
    await (await t.client.changeState(name, { action: 'start' })).wait({ timeoutMs: 30_000 });
    const cat = await printing(t, async () => (await t.client.exec(name, { command: ['cat', '/root/rt-kept'] })).wait({ timeoutMs: 20_000 }));
    expect(cat.stdout).toBe('kept\n');
  });

  it('a restore rolls the files back to the snapshot, and a copy from the snapshot has them as they were', async () => {
    const t = target();
    const name = await t.launch();
    const copy = `${name}-c`;
    try {
      await files(t.client, 'POST', name, '/root/rt-state', { body: 'old\n' });
      await (await t.client.createSnapshot(name, { name: 'rt-before' })).wait({ timeoutMs: 30_000 });
      await files(t.client, 'POST', name, '/root/rt-state', { body: 'new\n' });
      await files(t.client, 'POST', name, '/root/rt-added', { body: 'added\n' });
      await (await t.client.restoreSnapshot(name, 'rt-before')).wait({ timeoutMs: 60_000 });
      const cat = await printing(t, async () => (await t.client.exec(name, { command: ['cat', '/root/rt-state'] })).wait({ timeoutMs: 20_000 }));
      expect({ stdout: cat.stdout, exitCode: cat.exitCode }).toEqual({ stdout: 'old\n', exitCode: 0 });
      expect((await files(t.client, 'GET', name, '/root/rt-added')).status).toBe(404);

      await files(t.client, 'POST', name, '/root/rt-state', { body: 'after restore\n' });
      // As `lxc copy` does: LXD 5.0.2 gives a copy made without profiles none (and then no root disk).
      const created = await t.client.transport.request('POST', '/1.0/instances', {
        body: { name: copy, profiles: ['default'], source: { type: 'copy', source: `${name}/rt-before` } },
      });
      const opId = String(created.envelope.operation).split('/').pop()!;
      await t.client.transport.request('GET', `/1.0/operations/${opId}/wait?timeout=60`);
      expect((await files(t.client, 'GET', copy, '/root/rt-state')).body.toString('utf8')).toBe('old\n');
      expect((await files(t.client, 'GET', name, '/root/rt-state')).body.toString('utf8')).toBe('after restore\n');
    } finally {
      await t.remove(copy);
      await t.remove(name);
    }
  });

  it('a pushed symlink belongs to root and pulls as its resolved target; pushing one over an entry is refused', async () => {
    const t = target();
    const name = await launch();
    const link = (path: string, to: string) =>
      files(t.client, 'POST', name, path, { body: to, headers: { 'X-LXD-type': 'symlink', 'X-LXD-uid': '1000', 'X-LXD-gid': '1000' } });
    expect((await link('/tmp/rt-abs', '/etc/passwd')).status).toBe(200);
    expect((await link('/tmp/rt-rel', 'rel/x')).status).toBe(200);
    const abs = await files(t.client, 'GET', name, '/tmp/rt-abs');
    expect({ body: abs.body.toString('utf8'), ...entryHeaders(t, abs) }).toEqual({
      body: '/etc/passwd',
      type: 'symlink',
      mode: '0777',
      uid: '0',
      gid: '0',
    });
    expect((await files(t.client, 'GET', name, '/tmp/rt-rel')).body.toString('utf8')).toBe('/tmp/rel/x');
    const again = await link('/tmp/rt-abs', '/etc/group');
    expect({ status: again.status, error: envelope(again).error }).toEqual({
      status: 500,
      error: 'sftp: "symlink /etc/group /tmp/rt-abs: file exists" (SSH_FX_FAILURE)',
    });
  });

  it('ls -l shows the owner and group of each entry, named from the guest’s /etc/passwd and /etc/group, else as numbers', async () => {
    const t = target();
    const name = await launch();
    await files(t.client, 'POST', name, '/tmp/rt-ls', { headers: { 'X-LXD-type': 'directory', 'X-LXD-mode': '0755' } });
    await files(t.client, 'POST', name, '/tmp/rt-ls/owned', { body: 'abc', headers: { 'X-LXD-uid': '1000', 'X-LXD-gid': '1001' } });
    await files(t.client, 'POST', name, '/tmp/rt-ls/rooted', { body: 'abcd' });
    const columns = "awk '$1 ~ /^-/ {print $1, $3, $4, $5, $NF}'";
    const listed = await (
      await t.client.exec(name, { command: ['sh', '-c', `ls -l /tmp/rt-ls | ${columns}; ls -l /tmp/rt-ls/owned | ${columns}`] })
    ).wait({
      timeoutMs: 20_000,
    });
    expect({ stdout: listed.stdout, exitCode: listed.exitCode }).toEqual({
      stdout: '-rw-r--r-- 1000 1001 3 owned\n-rw-r--r-- root root 4 rooted\n-rw-r--r-- 1000 1001 3 /tmp/rt-ls/owned\n',
      exitCode: 0,
    });
  });
});
