import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSim, type TestSim } from './sim-client.js';

describe('config and device validation (LXD 5.0.2 key table, earlier revision)', () => {
  let t: TestSim;
  beforeAll(async () => {
    t = await startTestSim();
    t.sim.controls.addInstance({ name: 'c1', status: 'Stopped' });
  });
  afterAll(async () => t.close());

  it("fails a PUT with an unknown key in its operation, after the 202, with the daemon's text", async () => {
    const current = (await t.api('GET', '/1.0/instances/c1')).body.metadata;
    const res = await t.api('PUT', '/1.0/instances/c1', { ...current, config: { ...current.config, 'bogus.key': '1' } });
    expect(res.status).toBe(202);
    expect(await t.waitOp(res)).toMatchObject({ status_code: 400, err: 'Invalid config: Unknown configuration key: bogus.key' });
  });

  it('refuses bad values of typed keys and accepts good ones', async () => {
    const patch = (config: Record<string, string>) => t.api('PATCH', '/1.0/instances/c1', { config });
    expect((await patch({ 'limits.memory': 'notanumber' })).body.error).toBe('Invalid config: Invalid value: notanumber');
    expect((await patch({ 'security.privileged': 'maybe' })).body.error).toBe('Invalid config: Invalid value for a boolean "maybe"');
    expect((await patch({ 'volatile.uuid': 'x' })).body.error).toBe('Invalid config: Invalid UUID');
    expect((await patch({ 'limits.processes': '1.5' })).body.error).toBe('Invalid config: Invalid value for an integer "1.5"');
    expect(
      (await patch({ 'limits.memory': '64MiB', 'security.privileged': 'true', 'user.anything': 'x', 'linux.sysctl.net.ipv4.ip_forward': '1' }))
        .status,
    ).toBe(200);
  });

  it('refuses a device of an unknown type', async () => {
    const res = await t.api('PATCH', '/1.0/instances/c1', { devices: { d1: { type: 'bogustype' } } });
    expect(res.status).toBe(500);
    expect(res.body.error).toBe('Invalid devices: Device validation failed for "d1": Failed loading device "d1": Unsupported device type');
  });
});

describe('config validation in the later revision', () => {
  it("checks Incus's key table: security.devlxd is unknown there, security.guestapi a boolean", async () => {
    const t = await startTestSim({ revision: 'later' });
    try {
      t.sim.controls.addInstance({ name: 'c1', status: 'Stopped' });
      const patch = (config: Record<string, string>) => t.api('PATCH', '/1.0/instances/c1', { config });
      expect((await patch({ 'security.devlxd': 'true' })).body).toMatchObject({
        error_code: 500,
        error: 'Invalid config: Unknown configuration key: security.devlxd',
      });
      expect((await patch({ 'security.guestapi': 'maybe' })).body.error).toBe('Invalid config: Invalid value for a boolean "maybe"');
      expect((await patch({ 'security.guestapi': 'true', 'limits.memory': '64MiB' })).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it("accepts keys outside LXD 5.0.2's table, such as Incus's boot.autorestart", async () => {
    const t = await startTestSim({ revision: 'later' });
    try {
      t.sim.controls.addInstance({ name: 'c1', status: 'Stopped' });
      expect((await t.api('PATCH', '/1.0/instances/c1', { config: { 'boot.autorestart': 'true' } })).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
