import { generate } from 'selfsigned';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenString } from '../../src/simulator/handlers/certificates.js';
import { certificateFingerprint } from '../../src/simulator/trust-store.js';
import { openTap, startTestSim, type TestSim } from './sim-client.js';

let t: TestSim;
let client: { cert: string; key: string };
let other: { cert: string; key: string };

async function pair(cn: string) {
  const p = await generate([{ name: 'commonName', value: cn }], { keySize: 2048 } as any);
  return { cert: p.cert, key: p.private };
}

beforeAll(async () => {
  t = await startTestSim({ listen: [`unix:/tmp/reflex-sim-https-${process.pid}.sock`, 'https://127.0.0.1:0'] });
  t.sim.controls.addInstance({ name: 'c1' });
  [client, other] = await Promise.all([pair('client'), pair('other')]);
});
afterAll(async () => t.close());

async function https(who: { cert: string; key: string } | undefined, method: string, path: string, body?: unknown) {
  const agent = new Agent({ connect: { ca: t.sim.serverCertificate, ...(who ?? {}), servername: 'localhost' } });
  try {
    const res = await request(`${t.sim.httpsUrl}${path}`, {
      method: method as 'GET',
      dispatcher: agent,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as any };
  } finally {
    await agent.close();
  }
}

describe('HTTPS and the trust store', () => {
  it('lets unknown clients see only GET /1.0 (auth untrusted) and refuses the rest with 403', async () => {
    expect((await https(other, 'GET', '/1.0')).body.metadata).toMatchObject({ auth: 'untrusted' });
    expect((await https(undefined, 'GET', '/1.0')).body.metadata.auth).toBe('untrusted');
    expect((await https(other, 'GET', '/1.0/instances')).status).toBe(403);
  });

  it('admits a trusted certificate and reports its fingerprint as requestor', async () => {
    const fp = t.sim.controls.trust(client.cert);
    expect(fp).toBe(certificateFingerprint(client.cert));
    expect((await https(client, 'GET', '/1.0')).body.metadata.auth).toBe('trusted');
    const tap = await openTap(`wss://127.0.0.1:${new URL(t.sim.httpsUrl!).port}/1.0/events?type=lifecycle`, {
      ...client,
      ca: t.sim.serverCertificate,
      servername: 'localhost',
    } as object);
    const res = await https(client, 'PUT', '/1.0/instances/c1/state', { action: 'freeze' });
    expect(res.status).toBe(202);
    const ev = await tap.until((f) => f.metadata.action === 'instance-paused');
    expect(ev.metadata.requestor).toMatchObject({ username: fp, protocol: 'tls' });
    expect(ev.metadata.requestor.address).toMatch(/^127\.0\.0\.1:\d+$/);
    tap.close();
  });

  it('issues trust tokens as operations of class token and honours them once', async () => {
    const res = await t.api('POST', '/1.0/certificates', { name: 'newcomer', type: 'client', token: true });
    expect(res.status).toBe(202);
    const op = res.body.metadata;
    expect(op).toMatchObject({ class: 'token', may_cancel: true, status_code: 103 });
    expect(op.metadata.fingerprint).toBe(certificateFingerprint(t.sim.serverCertificate!));
    const token = tokenString(op.metadata, 'newcomer');
    // Waited on from before the token is used: the ended operation is kept only a moment (300 ms here).
    const ended = t.api('GET', `${res.body.operation}/wait?timeout=30`);
    expect((await https(other, 'POST', '/1.0/certificates', { password: token })).status).toBe(200);
    expect((await https(other, 'GET', '/1.0/instances')).status).toBe(200);
    expect((await ended).body.metadata.status_code).toBe(200);
    const third = await pair('third');
    expect((await https(third, 'POST', '/1.0/certificates', { password: token })).status).toBe(403);
  });

  it('revokes a token by cancelling its operation', async () => {
    const res = await t.api('POST', '/1.0/certificates', { name: 'late', type: 'client', token: true });
    expect((await t.api('DELETE', res.body.operation)).status).toBe(200);
    expect((await t.api('GET', res.body.operation)).body.metadata.status_code).toBe(401);
    const late = await pair('late');
    expect((await https(late, 'POST', '/1.0/certificates', { password: res.body.metadata.metadata.secret })).status).toBe(403);
  });
});
