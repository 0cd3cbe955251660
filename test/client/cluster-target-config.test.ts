import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveRemote } from '../../src/client/remote.js';
import { parseConfig } from '../../src/config/config.js';
import { targetsOf } from '../../src/config/config-target.js';

const base = { redisUrl: 'redis://127.0.0.1:6379', rulesDir: 'rules' };
const three = ['https://10.0.0.1:8443', 'https://10.0.0.2:8443', 'https://10.0.0.3:8443'];

describe('a target that names a cluster by several addresses', () => {
  it('a targets entry lists them under addresses; the first is its identity', () => {
    const [t] = targetsOf(parseConfig({ ...base, targets: [{ name: 'prod', addresses: three }] }));
    expect(t).toMatchObject({ name: 'prod', id: three[0], target: { kind: 'https', origin: three[0], url: three[0], addresses: three } });
  });

  it('--target takes them comma-separated, with the TLS settings shared; one address is a target as before', () => {
    const [t] = targetsOf(parseConfig({ ...base, target: three.join(','), serverFingerprint: 'ab'.repeat(32) }));
    expect(t).toMatchObject({ id: three[0], target: { addresses: three, serverFingerprint: 'ab'.repeat(32) } });
    const [one] = targetsOf(parseConfig({ ...base, target: three[0] }));
    expect(one!.target).toEqual({
      kind: 'https',
      origin: three[0],
      url: three[0],
      cert: undefined,
      key: undefined,
      serverCert: undefined,
      serverFingerprint: undefined,
    });
  });

  it('refuses addresses together with target, and two entries sharing an address (the same cluster)', () => {
    expect(() => parseConfig({ ...base, targets: [{ name: 'prod', addresses: three, target: three[0] }] })).toThrow(
      /give one of target, addresses or remote/,
    );
    expect(() => parseConfig({ ...base, targets: [{ name: 'prod', addresses: ['unix:///run/lxd.sock'] }] })).toThrow(/https/);
    const twice = parseConfig({
      ...base,
      targets: [
        { name: 'a', addresses: three },
        { name: 'b', target: three[2] },
      ],
    });
    expect(() => targetsOf(twice)).toThrow(
      expect.objectContaining({
        code: 'CONFIG_INVALID',
        message: expect.stringMatching(/targets\.1.*the same server as targets\.0 \(https:\/\/10\.0\.0\.1:8443\)/),
      }),
    );
  });

  it('an lxc remote whose addr lists several members gives them all, in order', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rt-cluster-remote-'));
    writeFileSync(join(dir, 'config.yml'), `remotes:\n  cl: {addr: "${three.join(',')}", protocol: lxd, auth_type: tls, public: false}\n`);
    const env = { HOME: dir, LXD_CONF: dir, INCUS_CONF: join(dir, 'none'), LXD_GLOBAL_CONF: join(dir, 'none'), INCUS_GLOBAL_CONF: join(dir, 'none') };
    expect(resolveRemote('cl', env)).toMatchObject({ kind: 'https', origin: three[0], url: three[0], addresses: three });
  });
});
