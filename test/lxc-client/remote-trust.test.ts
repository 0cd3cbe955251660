import { afterEach, beforeEach, expect, it } from 'vitest';
import { generate } from 'selfsigned';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LxcCli } from '../support/lxc-cli.js';
import { describeLxcClient, startSimRemote, type SimRemote } from './sim-remote.js';

let t: SimRemote;
afterEach(async () => t?.close());

describeLxcClient('lxc remote add against reflex sim (earlier revision)', () => {
  beforeEach(async () => {
    t = await startSimRemote({ trustPassword: 's3cret' });
  });

  it('adds the simulator as a remote with the trust password, and then lists it', async () => {
    const add = await t.lxc.run(['remote', 'add', 'sim', t.sim.httpsUrl!, '--password', 's3cret', '--accept-certificate']);
    expect(add.stderr).not.toMatch(/Error/);
    expect(add.code).toBe(0);
    const list = await t.lxc.run(['list', 'sim:', '--format', 'csv']);
    expect(list).toMatchObject({ code: 0, stdout: '' });
    expect(await t.lxc.ok(['project', 'list', 'sim:', '--format', 'csv'])).toContain('default (current),YES,YES,YES,YES,Default LXD project');
  });

  it('refuses a wrong trust password, as the daemon does (403 not authorized)', async () => {
    const add = await t.lxc.run(['remote', 'add', 'sim', t.sim.httpsUrl!, '--password', 'wrong', '--accept-certificate']);
    expect(add.code).toBe(1);
    expect(add.stderr).toContain('not authorized');
  });

  it('adds the simulator as a remote with a trust token, which is single-use', async () => {
    const token = t.sim.controls.issueToken('ci');
    const add = await t.lxc.run(['remote', 'add', 'sim', token]);
    expect(add.stderr).not.toMatch(/Error/);
    expect(add.code).toBe(0);
    expect((await t.lxc.run(['list', 'sim:'])).code).toBe(0);
    const other = new LxcCli();
    try {
      const again = await other.run(['remote', 'add', 'sim', token]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('Failed to create certificate: not authorized');
    } finally {
      other.close();
    }
  });

  it('trusts a client certificate given up front, with no password or token', async () => {
    await t.close();
    const pair = await generate([{ name: 'commonName', value: 'pinned' }], { keySize: 2048 } as Parameters<typeof generate>[1]);
    t = await startSimRemote({ trustedCertificates: [pair.cert] });
    writeFileSync(join(t.lxc.confDir, 'client.crt'), pair.cert);
    writeFileSync(join(t.lxc.confDir, 'client.key'), pair.private);
    const add = await t.lxc.run(['remote', 'add', 'sim', t.sim.httpsUrl!, '--accept-certificate']);
    expect(add.code).toBe(0);
    expect(await t.lxc.ok(['query', 'sim:/1.0'])).toContain('"auth": "trusted"');
  });

  it('lists instances with one request (container_full: recursion=2), as lxc does against LXD 5.0.2', async () => {
    t.sim.controls.addInstance({ name: 'c1' });
    t.sim.controls.addInstance({ name: 'c2', status: 'Stopped' });
    await t.lxc.ok(['remote', 'add', 'sim', t.sim.httpsUrl!, '--password', 's3cret', '--accept-certificate']);
    t.clearRequests();
    const out = await t.lxc.ok(['list', 'sim:', '--format', 'csv']);
    expect(out).toBe('c1,RUNNING,127.1.0.1 (eth0),,CONTAINER,0\nc2,STOPPED,,,CONTAINER,0\n');
    expect(t.requests().filter((r) => r.includes('/1.0/instances'))).toEqual(['GET /1.0/instances?filter=&recursion=2']);
  });
});

describeLxcClient('lxc remote add against reflex sim (later revision)', () => {
  beforeEach(async () => {
    t = await startSimRemote({ revision: 'later', trustPassword: 's3cret' });
  });

  it('accepts a trust token but no trust password (Incus dropped trust passwords)', async () => {
    const byPassword = await t.lxc.run(['remote', 'add', 'sim', t.sim.httpsUrl!, '--password', 's3cret', '--accept-certificate']);
    expect(byPassword.code).toBe(1);
    const add = await t.lxc.run(['remote', 'add', 'sim2', t.sim.controls.issueToken('ci')]);
    expect(add.code).toBe(0);
    expect((await t.lxc.run(['list', 'sim2:'])).code).toBe(0);
  });
});
