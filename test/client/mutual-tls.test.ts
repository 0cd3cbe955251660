import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { InstanceClient } from '../../src/client/client.js';
import { resolveRemote } from '../../src/client/remote.js';
import type { Target } from '../../src/client/target.js';
import { certificateFingerprint } from '../../src/client/tls-pin.js';
import { ensureLxdHttps, lxdServerCertificate, makeIdentity, type TestIdentity } from '../conformance/lxd-https.js';
import { describeBed, lxdBed } from '../support/daemon-bed.js';

const run = promisify(execFile);

await describeBed(lxdBed, 'HTTPS with mutual TLS pins the server certificate and reports trust problems distinctly', () => {
  let origin = '';
  let serverCert = '';
  let trusted: TestIdentity;
  let untrusted: TestIdentity;
  const clients: InstanceClient[] = [];
  const client = (t: Omit<Extract<Target, { kind: 'https' }>, 'kind' | 'origin' | 'url'>) => {
    const c = new InstanceClient({ kind: 'https', origin, url: origin, ...t }, { timeoutMs: 10_000 });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    origin = await ensureLxdHttps();
    serverCert = await lxdServerCertificate();
    trusted = await makeIdentity('rt-trusted');
    untrusted = await makeIdentity('rt-untrusted');
    await lxdBed.cli(['config', 'trust', 'add', trusted.certFile]);
  });

  afterAll(async () => {
    for (const c of clients) await c.close();
    await lxdBed.cli(['config', 'trust', 'remove', trusted.fingerprint]).catch(() => undefined);
  });

  it('a trusted client with the right pin (certificate file) is served', async () => {
    const c = client({ cert: trusted.cert, key: trusted.key, serverCert });
    expect((await c.server()).auth).toBe('trusted');
    expect(Array.isArray(await c.listInstances({ recursion: 0 }))).toBe(true);
  });

  it('a pin given as a SHA-256 fingerprint with colons works too', async () => {
    const fp = certificateFingerprint(serverCert).toUpperCase().match(/../g)!.join(':');
    const c = client({ cert: trusted.cert, key: trusted.key, serverFingerprint: fp });
    expect((await c.server()).auth).toBe('trusted');
  });

  it('a wrong pin is refused before any request, naming the expected and the presented fingerprint', async () => {
    const wrong = 'ab'.repeat(32);
    const err = await client({ cert: trusted.cert, key: trusted.key, serverFingerprint: wrong })
      .server()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TLS_PIN_MISMATCH', retryable: false });
    expect((err as Error).message).toContain(`expected SHA-256 ${wrong}`);
    expect((err as Error).message).toContain(`presented ${certificateFingerprint(serverCert)}`);
  });

  it('a client without a certificate is told none is configured', async () => {
    const c = client({ serverCert });
    expect((await c.server()).auth).toBe('untrusted');
    const err = await c.listInstances().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TLS_CLIENT_CERT_MISSING', status: 403 });
  });

  it('a client with an untrusted certificate is told which certificate to trust', async () => {
    const err = await client({ cert: untrusted.cert, key: untrusted.key, serverCert })
      .listInstances()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'TLS_CLIENT_UNTRUSTED', status: 403 });
    expect((err as Error).message).toContain(untrusted.fingerprint);
  });

  it('the events WebSocket is pinned the same way', async () => {
    const good = client({ cert: trusted.cert, key: trusted.key, serverCert }).eventsEndpoint(['lifecycle']);
    const ws = new WebSocket(good.url, good.options);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.terminate();
    const bad = client({ cert: trusted.cert, key: trusted.key, serverFingerprint: 'cd'.repeat(32) }).eventsEndpoint(['lifecycle']);
    const ws2 = new WebSocket(bad.url, bad.options);
    const err = await new Promise((resolve) => ws2.once('error', resolve));
    expect(err).toMatchObject({ code: 'TLS_PIN_MISMATCH' });
  });

  it('--remote NAME works after `lxc remote add` of the HTTPS address, with no other setup', async () => {
    const conf = mkdtempSync(join(tmpdir(), 'rt-lxdconf-'));
    writeFileSync(join(conf, 'client.crt'), trusted.cert);
    writeFileSync(join(conf, 'client.key'), trusted.key, { mode: 0o600 });
    const env = { ...process.env, LXD_CONF: conf };
    await run('lxc', ['remote', 'add', 'rt-bed', origin, '--accept-certificate'], { env, timeout: 20_000 });
    const target = resolveRemote('rt-bed', {
      HOME: conf,
      LXD_CONF: conf,
      LXD_GLOBAL_CONF: join(conf, 'none'),
      INCUS_CONF: join(conf, 'none'),
      INCUS_GLOBAL_CONF: join(conf, 'none'),
    });
    expect(target).toMatchObject({ kind: 'https', origin });
    const c = new InstanceClient(target);
    clients.push(c);
    expect((await c.server()).auth).toBe('trusted');
    expect(Array.isArray(await c.listInstances())).toBe(true);
  });
});
