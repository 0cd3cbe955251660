import { request } from 'undici';
import { expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { conformance, launchPerTest, type ConformanceTarget } from './targets.js';

/** One request through the target client's own connection, its status, content type and body as text. */
async function call(t: ConformanceTarget, method: string, path: string, body?: unknown): Promise<{ status: number; type: string; text: string }> {
  const res = await request(`${t.client.transport.activeOrigin}${path}`, {
    method: method as 'GET',
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher: t.client.transport['agent'],
  });
  return { status: res.statusCode, type: String(res.headers['content-type'] ?? ''), text: await res.body.text() };
}

const envelope = (res: { text: string }): { error_code: number; error: string; metadata: unknown } => JSON.parse(res.text);

/**
 * Shapes and words the daemons answer, held to the simulator (issue #41 item 7): the full form's
 * `snapshots` and `backups`, missing images and snapshots, the default profile's refusals, the
 * console log. Each expectation is the real daemon's answer (LXD 5.0.2 for `earlier`, Incus 6.0.4
 * for `later`).
 */
await conformance('shapes and wording of the full form, missing images and snapshots, the default profile and the console log', (target) => {
  const launch = launchPerTest(target);

  it('the full form of an instance without snapshots has snapshots and backups null, not []', async () => {
    const t = target();
    const name = await launch();
    for (const path of [`/1.0/instances/${name}?recursion=2`, `/1.0/instances/${name}?recursion=1`]) {
      const full = envelope(await call(t, 'GET', path)).metadata as Record<string, unknown>;
      expect(full).toMatchObject({ snapshots: null, backups: null });
    }
    const listed = envelope(await call(t, 'GET', '/1.0/instances?recursion=2')).metadata as Record<string, unknown>[];
    expect(listed.find((i) => i.name === name)).toMatchObject({ snapshots: null, backups: null });
  });

  it('a missing image: Incus names it on a GET and its export, both daemons say "Image not found" on a delete', async () => {
    const t = target();
    const named = t.revision === 'later' ? 'Image "rt-nosuch" not found' : 'Image not found';
    for (const path of ['/1.0/images/rt-nosuch', '/1.0/images/rt-nosuch/export']) {
      const res = await call(t, 'GET', path);
      expect(res.status).toBe(404);
      expect(envelope(res)).toMatchObject({ error_code: 404, error: named });
    }
    expect(envelope(await call(t, 'DELETE', '/1.0/images/rt-nosuch'))).toMatchObject({ error_code: 404, error: 'Image not found' });
  });

  it('a missing snapshot names the snapshot on a GET too; a missing instance is named with its snapshot on Incus', async () => {
    const t = target();
    const name = await launch();
    const what = t.revision === 'later' ? 'Instance_snapshot' : 'InstanceSnapshot';
    for (const method of ['GET', 'DELETE']) {
      const res = await call(t, method, `/1.0/instances/${name}/snapshots/nosuch`);
      expect(res.status).toBe(404);
      expect(envelope(res).error).toBe(`Failed to fetch snapshot "nosuch" of instance "${name}" in project "default": ${what} not found`);
    }
    const gone = await call(t, 'GET', '/1.0/instances/rt-nosuch/snapshots/nosuch');
    expect(envelope(gone)).toMatchObject({
      error_code: 404,
      error: t.revision === 'later' ? 'Failed to fetch instance "rt-nosuch/nosuch" in project "default": Instance not found' : 'Instance not found',
    });
  });

  it('the default profile cannot be deleted or renamed (403), whether in use or not', async () => {
    const t = target();
    const name = await launch();
    expect(envelope(await call(t, 'GET', `/1.0/instances/${name}`)).metadata).toMatchObject({ profiles: ['default'] });
    expect(envelope(await call(t, 'DELETE', '/1.0/profiles/default'))).toMatchObject({
      error_code: 403,
      error: 'The "default" profile cannot be deleted',
    });
    expect(envelope(await call(t, 'POST', '/1.0/profiles/default', { name: 'rt-renamed' }))).toMatchObject({
      error_code: 403,
      error: 'The "default" profile cannot be renamed',
    });
  });

  it('the console log of a busybox guest: LXD 5.0.2 cannot read it while the instance runs, both answer its empty file once stopped; DELETE clears it', async () => {
    const t = target();
    const name = await launch();
    const running = await call(t, 'GET', `/1.0/instances/${name}/console`);
    if (t.revision === 'earlier')
      expect({ ...envelope(running), http: running.status }).toMatchObject({ http: 500, error: 'open : no such file or directory' });
    else expect(running).toEqual({ status: 200, type: 'application/json', text: '' });
    await (await t.client.changeState(name, { action: 'stop', force: true })).wait({ timeoutMs: 30_000 });
    const stopped = await call(t, 'GET', `/1.0/instances/${name}/console`);
    expect(stopped).toEqual({ status: 200, type: 'application/octet-stream', text: '' });
    expect(envelope(await call(t, 'DELETE', `/1.0/instances/${name}/console`))).toMatchObject({ metadata: {} });
    const missing = await call(t, 'GET', '/1.0/instances/rt-nosuch/console');
    expect(missing.status).toBe(404);
  });

  it("what a command writes to /dev/console is the console log: a read takes what liblxc's ring holds while the instance runs, the stop keeps what was left unread, DELETE empties both", async () => {
    const t = target();
    const name = await launch();
    const real = !t.name.startsWith('sim');
    const log = () => call(t, 'GET', `/1.0/instances/${name}/console`);
    const console = async (script: string) => {
      const res = await (await t.client.exec(name, { command: ['sh', '-c', script] })).wait({ timeoutMs: 20_000 });
      expect(res.exitCode).toBe(0);
    };
    // On the daemons the pty hands a command's bytes to liblxc's ring after the command has ended
    // (the kernel's flush work, then the monitor's loop; a CI run read the ring empty right after
    // the exec): reads are taken until they have given `upTo`'s text, and what they gave is returned.
    const taken = async (upTo: string): Promise<string> => {
      let text = '';
      await until(`the console log to give ${JSON.stringify(upTo)}`, async () => {
        const res = await log();
        if (res.type === 'application/octet-stream') text += res.text;
        return text.endsWith(upTo) || text.length > upTo.length + 64;
      });
      return text;
    };
    const empty = t.revision === 'earlier' ? { status: 500, type: 'application/json' } : { status: 200, type: 'application/json', text: '' };
    // The pty's output processing turns each newline into \r\n.
    await console("echo hello > /dev/console; printf 'a\\nb' > /dev/console");
    expect(await taken('hello\r\na\r\nb')).toBe('hello\r\na\r\nb');
    expect(await log()).toMatchObject(empty);
    // DELETE empties the ring. On a daemon the bytes of `cleared` may reach the ring only after the
    // DELETE (nothing the API answers tells they are there without taking them), and a read then
    // takes them before `read`; the simulator's ring has them at once, so only there is it exact.
    await console('echo cleared > /dev/pts/0');
    expect(envelope(await call(t, 'DELETE', `/1.0/instances/${name}/console`))).toMatchObject({ metadata: {} });
    await console('echo read > /dev/console');
    expect(await taken('read\r\n')).toBeOneOf(real ? ['read\r\n', 'cleared\r\nread\r\n'] : ['read\r\n']);
    expect(await log()).toMatchObject(empty);
    // The stop keeps what the ring held unread (on a daemon, if the pty handed it over before the
    // monitor's loop ended: the same wait as above, nothing to tell it without a read).
    await console('echo left > /dev/console');
    await (await t.client.changeState(name, { action: 'stop', force: true })).wait({ timeoutMs: 30_000 });
    const kept = (await log()).text;
    expect(kept).toBeOneOf(real ? ['left\r\n', ''] : ['left\r\n']);
    expect(await log()).toEqual({ status: 200, type: 'application/octet-stream', text: kept });
    expect(envelope(await call(t, 'DELETE', `/1.0/instances/${name}/console`))).toMatchObject({ metadata: {} });
    expect(await log()).toEqual({ status: 200, type: 'application/octet-stream', text: '' });
    // A new run starts with an empty ring.
    await (await t.client.changeState(name, { action: 'start' })).wait({ timeoutMs: 30_000 });
    expect(await log()).toMatchObject(empty);
  });
});
