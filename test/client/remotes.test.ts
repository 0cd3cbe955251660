import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listRemotes, resolveRemote } from '../../src/client/remote.js';

function confDir(yaml: string, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'rt-lxdconf-'));
  writeFileSync(join(dir, 'config.yml'), yaml);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const yaml = `default-remote: prod
remotes:
  images: {addr: "https://images.linuxcontainers.org", protocol: simplestreams, public: true}
  local: {addr: "unix://", public: false}
  sock: {addr: "unix:///run/custom/unix.socket", public: false, project: web}
  prod: {addr: "https://10.0.0.5:8443", protocol: lxd, auth_type: tls, project: web, public: false}
  sso: {addr: "https://10.0.0.6:8443", protocol: lxd, auth_type: candid, public: false}
  unpinned: {addr: "https://10.0.0.7:8443", protocol: lxd, auth_type: tls, public: false}
`;

describe('remotes are read from the lxc and incus client configuration', () => {
  const dir = confDir(yaml, { 'client.crt': 'CERT', 'client.key': 'KEY', 'servercerts/prod.crt': 'SERVER' });
  const env = { HOME: dir, LXD_CONF: dir, INCUS_CONF: join(dir, 'none'), LXD_GLOBAL_CONF: join(dir, 'none'), INCUS_GLOBAL_CONF: join(dir, 'none') };

  it('an HTTPS remote uses client.crt/client.key, pins servercerts/<name>.crt and keeps its project', () => {
    expect(resolveRemote('prod', env)).toEqual({
      kind: 'https',
      origin: 'https://10.0.0.5:8443',
      url: 'https://10.0.0.5:8443',
      cert: 'CERT',
      key: 'KEY',
      serverCert: 'SERVER',
      project: 'web',
    });
  });

  it('without a name, the default remote is used', () => {
    expect(resolveRemote(undefined, env)).toMatchObject({ origin: 'https://10.0.0.5:8443' });
  });

  it('a unix remote gives its socket path', () => {
    expect(resolveRemote('sock', env)).toEqual({
      kind: 'unix',
      socketPath: '/run/custom/unix.socket',
      url: 'unix:///run/custom/unix.socket',
      project: 'web',
    });
    expect(resolveRemote('local', { ...env, LXD_SOCKET: '/tmp/x.socket' })).toMatchObject({ kind: 'unix', socketPath: '/tmp/x.socket' });
  });

  it('an image server is refused as not an instance API', () => {
    expect(() => resolveRemote('images', env)).toThrow(
      expect.objectContaining({ code: 'REMOTE_UNSUPPORTED', message: expect.stringMatching(/image server/) }),
    );
  });

  it('an unsupported auth type is refused with how to fix it', () => {
    expect(() => resolveRemote('sso', env)).toThrow(
      expect.objectContaining({ code: 'REMOTE_UNSUPPORTED', message: expect.stringMatching(/auth_type candid.*--auth-type=tls/) }),
    );
  });

  it('a remote without servercerts/<name>.crt is left to the system CAs, as lxc does', () => {
    const t = resolveRemote('unpinned', env);
    expect(t).toMatchObject({ kind: 'https', origin: 'https://10.0.0.7:8443', cert: 'CERT' });
    expect(t).toHaveProperty('serverCert', undefined);
  });

  it('listing remotes skips image servers and unsupported auth types', () => {
    expect(listRemotes(env)).toEqual(['local', 'prod', 'sock', 'unpinned']);
  });

  it('an unknown remote names the known ones', () => {
    expect(() => resolveRemote('nope', env)).toThrow(
      expect.objectContaining({ code: 'REMOTE_UNKNOWN', message: expect.stringMatching(/known: images, local, prod/) }),
    );
  });

  it('an incus configuration is read when lxc has no such remote', () => {
    const incus = confDir('remotes:\n  edge: {addr: "unix:///var/lib/incus/unix.socket"}\n');
    expect(resolveRemote('edge', { ...env, INCUS_CONF: incus })).toMatchObject({ kind: 'unix', socketPath: '/var/lib/incus/unix.socket' });
  });
});
