import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InstanceClient } from '../../src/client/client.js';
import { addressOf, runCheck } from '../../src/probes/probe-check.js';
import { defineProbe } from '../../src/probes/probe.js';
import { startTestSim, type TestSim } from './sim-client.js';

/** http and tcp checks reach the address directly: they need no client. */
const noClient = undefined as unknown as InstanceClient;

let t: TestSim;
beforeEach(async () => {
  t = await startTestSim();
  t.sim.controls.addInstance({ name: 'web1' });
  t.sim.controls.addInstance({ name: 'web2' });
});
afterEach(() => t.close());

const state = async (name: string) => (await t.api('GET', `/1.0/instances/${name}/state`)).body.metadata;
const address = async (name: string) => addressOf(await state(name));
// A generous timeout where the endpoint answers (a loaded machine is slow), a short one where it must not.
const http = (url = '/', timeoutMs = 20_000) => defineProbe({ name: 'web', kind: 'http', url, port: t.sim.guestPort, timeoutMs });
const tcp = () => defineProbe({ name: 'port', kind: 'tcp', port: t.sim.guestPort, timeoutMs: 20_000 });
const check = async (name: string, probe = http()) => runCheck(probe, noClient, name, await address(name));
const act = async (name: string, action: string, extra: Record<string, unknown> = {}) =>
  t.waitOp(await t.api('PUT', `/1.0/instances/${name}/state`, { action, ...extra }));

describe('the instance address', () => {
  it('a running instance shows a loopback address of its own on its first NIC, a link-local IPv6 address from its MAC, and lo as the busybox guest has it', async () => {
    const s = await state('web1');
    const eth0 = s.network.eth0;
    expect(eth0.addresses[0]).toEqual({ family: 'inet', address: expect.stringMatching(/^127\.\d+\.\d+\.\d+$/), netmask: '8', scope: 'global' });
    const [a, b, c, d, e, f] = eth0.hwaddr.split(':').map((x: string) => parseInt(x, 16));
    const eui = [((a ^ 2) << 8) | b, (c << 8) | 0xff, 0xfe00 | d, (e << 8) | f].map((g) => g.toString(16)).join(':');
    expect(eth0.addresses[1]).toEqual({ family: 'inet6', address: `fe80::${eui}`, netmask: '64', scope: 'link' });
    expect(s.network.lo).toMatchObject({ addresses: [], state: 'down', type: 'loopback' });
    expect(await address('web2')).not.toBe(await address('web1'));
    // The same in a recursion=2 listing.
    const full = (await t.api('GET', '/1.0/instances?recursion=2')).body.metadata;
    expect(addressOf(full.find((i: { name: string }) => i.name === 'web1').state)).toBe(eth0.addresses[0].address);
  });

  it('a guest with an init system has lo up with 127.0.0.1 and ::1; a stopped instance has no network', async () => {
    t.sim.controls.addInstance({ name: 'deb', config: { 'image.os': 'Debian' } });
    expect((await state('deb')).network.lo).toMatchObject({
      addresses: [
        { family: 'inet', address: '127.0.0.1', netmask: '8', scope: 'local' },
        { family: 'inet6', address: '::1', netmask: '128', scope: 'local' },
      ],
      state: 'up',
    });
    t.sim.controls.addInstance({ name: 'off', status: 'Stopped' });
    expect((await state('off')).network).toBeNull();
  });

  it('the address is the instance’s for its life: kept through a stop and a rename, not passed on to a new instance of the same name', async () => {
    const first = await address('web1');
    await act('web1', 'stop', { force: true });
    await t.waitOp(await t.api('POST', '/1.0/instances/web1', { name: 'web9' }));
    await act('web9', 'start');
    expect(await address('web9')).toBe(first);
    await act('web9', 'stop', { force: true });
    await t.waitOp(await t.api('DELETE', '/1.0/instances/web9'));
    t.sim.controls.addInstance({ name: 'web9' });
    expect(await address('web9')).not.toBe(first);
  });
});

describe('the instance’s http endpoint as a probe sees it', () => {
  it('an http check of a running instance succeeds: 200 "ok" on every path when nothing is scripted', async () => {
    expect(await check('web1', http('/healthz'))).toMatchObject({ outcome: 'success', output: expect.stringMatching(/: 200 ok$/) });
    expect(t.sim.controls.httpCalls('web1', { path: '/healthz' })).toBe(1);
    expect(t.sim.controls.httpCalls('web2')).toBe(0);
  });

  it('fails on a scripted 503, per instance and per call, the last outcome repeating', async () => {
    t.sim.controls.scriptHttp({ instance: 'web1', path: '/healthz', outcomes: [{ status: 503, body: 'down' }, { status: 200 }] });
    expect(await check('web1', http('/healthz'))).toMatchObject({ outcome: 'failure', output: expect.stringMatching(/: 503 down$/) });
    expect((await check('web1', http('/healthz'))).outcome).toBe('success');
    expect((await check('web1', http('/healthz'))).outcome).toBe('success');
    // Another path of the same instance, and another instance, answer as by default.
    expect(await check('web1', http('/other'))).toMatchObject({ outcome: 'success', output: expect.stringMatching(/200 ok$/) });
    expect((await check('web2', http('/healthz'))).outcome).toBe('success');
    expect(t.sim.controls.httpScripts()).toEqual([expect.objectContaining({ instance: 'web1', path: '/healthz', calls: { 'default/web1': 3 } })]);
  });

  it('an instance’s own script answers before one for every instance', async () => {
    t.sim.controls.scriptHttp({ outcomes: [{ status: 500 }] });
    t.sim.controls.scriptHttp({ instance: 'web2', outcomes: [{ status: 204 }] });
    expect((await check('web1')).output).toMatch(/: 500$/);
    expect((await check('web2')).output).toMatch(/: 204$/);
    t.sim.controls.clearHttpScripts();
    expect((await check('web1')).output).toMatch(/: 200 ok$/);
  });

  it('fails on a scripted hang past its timeout; a slow answer within it succeeds', async () => {
    t.sim.controls.scriptHttp({ instance: 'web1', outcomes: [{ hang: true }, { delayMs: 50, body: 'late' }] });
    expect(await check('web1', http('/', 300))).toMatchObject({ outcome: 'failure', output: expect.stringMatching(/no answer within 300 ms/) });
    expect(await check('web1')).toMatchObject({ outcome: 'success', output: expect.stringMatching(/200 late$/) });
  });

  it('fails on a scripted reset', async () => {
    t.sim.controls.scriptHttp({ instance: 'web1', outcomes: [{ reset: true }] });
    expect((await check('web1')).outcome).toBe('failure');
  });

  it('is refused when the instance is stopped, and answers again once it runs', async () => {
    const where = await address('web1');
    expect((await runCheck(http(), noClient, 'web1', where)).outcome).toBe('success');
    await act('web1', 'stop', { force: true });
    expect(await runCheck(http(), noClient, 'web1', where)).toMatchObject({ outcome: 'failure', output: expect.stringMatching(/ECONNREFUSED/) });
    expect(await runCheck(tcp(), noClient, 'web1', where)).toMatchObject({ outcome: 'failure', output: expect.stringMatching(/ECONNREFUSED/) });
    await act('web1', 'start');
    expect((await runCheck(http(), noClient, 'web1', where)).outcome).toBe('success');
  });

  it('a frozen instance accepts and does not answer until it thaws', async () => {
    const where = await address('web1');
    await act('web1', 'freeze');
    expect(await runCheck(http('/', 300), noClient, 'web1', where)).toMatchObject({ outcome: 'failure', output: expect.stringMatching(/no answer/) });
    const pending = runCheck(http(), noClient, 'web1', where);
    await act('web1', 'unfreeze');
    expect((await pending).outcome).toBe('success');
  });
});

describe('the instance’s port as a tcp probe sees it', () => {
  it('a tcp check connects to a running instance, and fails once a script closes the port', async () => {
    expect(await check('web1', tcp())).toMatchObject({ outcome: 'success', output: expect.stringMatching(/^connected to 127\./) });
    t.sim.controls.scriptHttp({ instance: 'web1', outcomes: [{ status: 200 }, { refuse: true }] });
    // The port stays open for the first request, then closes.
    expect((await check('web1')).outcome).toBe('success');
    expect(await check('web1', tcp())).toMatchObject({ outcome: 'failure', output: expect.stringMatching(/ECONNREFUSED/) });
    expect((await check('web1')).outcome).toBe('failure');
    expect((await check('web2', tcp())).outcome).toBe('success');
    t.sim.controls.clearHttpScripts();
    expect((await check('web1', tcp())).outcome).toBe('success');
  });
});

describe('a scripted command repairs the endpoint (httpAfter)', () => {
  it('after `systemctl restart nginx` ends, the instance’s endpoint answers as the command declared', async () => {
    t.sim.controls.scriptHttp({ outcomes: [{ status: 503 }] });
    t.sim.controls.scriptCommand({
      command: 'systemctl restart nginx',
      outcomes: [
        { exitCode: 1, httpAfter: { outcomes: [{ refuse: true }] } },
        { exitCode: 0, httpAfter: { outcomes: [{ status: 200, body: 'up' }] } },
      ],
    });
    const run = () => execIn('web1', ['systemctl', 'restart', 'nginx']);
    expect((await check('web1')).output).toMatch(/: 503$/);
    expect(await run()).toBe(1);
    expect((await check('web1', tcp())).outcome).toBe('failure');
    expect(await run()).toBe(0);
    expect(await check('web1')).toMatchObject({ outcome: 'success', output: expect.stringMatching(/200 up$/) });
    // Only where it ran.
    expect((await check('web2')).output).toMatch(/: 503$/);
  });
});

describe('the control API over HTTP', () => {
  it('scripts, lists, counts and forgets HTTP outcomes; gives an instance’s address and the guest ports', async () => {
    expect((await t.api('POST', '/sim/http', { instance: 'web1', path: '/h', outcomes: [{ status: 502 }] })).status).toBe(200);
    const where = (await t.api('GET', '/sim/instances/web1/address')).body.metadata.address;
    expect(where).toBe(await address('web1'));
    expect((await runCheck(http('/h'), noClient, 'web1', where)).output).toMatch(/: 502$/);
    expect((await t.api('GET', '/sim/instances/web1/http-calls?path=/h')).body.metadata).toBe(1);
    expect((await t.api('GET', '/sim/http')).body.metadata).toEqual([expect.objectContaining({ path: '/h', calls: { 'default/web1': 1 } })]);
    expect((await t.api('GET', '/sim/guest-network')).body.metadata).toEqual({ ports: [t.sim.guestPort], listen_errors: [] });
    await t.api('DELETE', '/sim/http');
    expect((await runCheck(http('/h'), noClient, 'web1', where)).outcome).toBe('success');
  });

  it('refuses scripts it cannot follow', async () => {
    const refused = async (b: unknown) => (await t.api('POST', '/sim/http', b)).body.error;
    expect(await refused({ outcomes: [] })).toBe('outcomes must list at least one outcome');
    expect(await refused({ outcomes: [{ status: 99 }] })).toBe('status must be an HTTP status (100-599)');
    expect(await refused({ outcomes: [{ refuse: true }, { status: 200 }] })).toMatch(/^refuse closes the port/);
    expect(await refused({ path: '/x', outcomes: [{ refuse: true }] })).toMatch(/^refuse closes the port/);
    expect(await refused({ path: 'x', outcomes: [{ status: 200 }] })).toBe('path must start with /');
  });
});

/** Runs a command in an instance through the daemon's exec API and returns its exit code. */
async function execIn(name: string, command: string[]): Promise<number> {
  const op = await t.waitOp(await t.api('POST', `/1.0/instances/${name}/exec`, { command, 'wait-for-websocket': false, interactive: false }));
  return op.metadata.return;
}
