import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { unpackTar } from 'modern-tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageTarball } from './image-tarball.js';
import { startTestSim, type ApiAnswer, type BytesAnswer, type TestSim } from './sim-client.js';

/**
 * A published image is a tarball of the instance's files, as the daemon packs one: its export,
 * uploaded again with no Content-Type (as pylxd's `client.images.create(data)` sends it), is the
 * same image, and an instance made from it has the files (issue #41 item 3; the lxc and incus
 * differentials hold this to LXD 5.0.2 and Incus 6.0.4 with curl).
 */
describe('a published image exported and uploaded again', () => {
  let t: TestSim;
  beforeAll(async () => {
    t = await startTestSim();
  });
  afterAll(() => t.close());

  const call = (method: string, path: string, body?: Buffer, headers: Record<string, string> = {}) => t.bytes(method, path, body, headers);
  const answer = (res: BytesAnswer): ApiAnswer => ({
    status: res.status,
    headers: res.headers as ApiAnswer['headers'],
    body: JSON.parse(res.bytes.toString('utf8')),
  });

  it('is the same image, and an instance made from it starts with the published files', async () => {
    t.sim.controls.addInstance({ name: 'src', status: 'Stopped' });
    const put = await call('POST', '/1.0/instances/src/files?path=/root/kept', Buffer.from('kept\n'), {
      'content-type': 'application/octet-stream',
      'x-lxd-uid': '33',
      'x-lxd-gid': '34',
      'x-lxd-mode': '0640',
    });
    expect(put.status).toBe(200);
    const published = await t.waitOp(await t.api('POST', '/1.0/images', { source: { type: 'instance', name: 'src' } }));
    expect(published.status).toBe('Success');
    const fingerprint = String(published.metadata.fingerprint);

    const exported = await call('GET', `/1.0/images/${fingerprint}/export`);
    expect(createHash('sha256').update(exported.bytes).digest('hex')).toBe(fingerprint);
    const entries = await unpackTar(gunzipSync(exported.bytes));
    expect(entries[0]!.header.name).toBe('metadata.yaml');
    expect(Buffer.from(entries[0]!.data!).toString('utf8')).toMatch(/^architecture: "x86_64"\ncreation_date: \d+\nproperties:\n/);
    expect(entries.find((e) => e.header.name === 'rootfs/root/kept')?.header).toMatchObject({ uid: 33, gid: 34, mode: 0o640, size: 5 });
    expect(entries.some((e) => e.header.name === 'rootfs/sbin/testinit')).toBe(true);

    expect((await t.waitOp(await t.api('DELETE', `/1.0/images/${fingerprint}`))).status).toBe('Success');
    const sent = await call('POST', '/1.0/images', exported.bytes);
    expect(sent.status).toBe(202);
    const uploaded = await t.waitOp(answer(sent));
    expect(uploaded).toMatchObject({ status: 'Success', resources: null, metadata: { fingerprint, size: String(exported.bytes.length) } });
    expect((await t.api('GET', `/1.0/images/${fingerprint}`)).body.metadata.properties).toMatchObject({ os: 'busybox' });

    const made = await t.waitOp(await t.api('POST', '/1.0/instances', { name: 'made', source: { type: 'image', fingerprint } }));
    expect(made.status).toBe('Success');
    const pulled = await call('GET', '/1.0/instances/made/files?path=/root/kept');
    expect(pulled.bytes.toString('utf8')).toBe('kept\n');
    expect(pulled.headers).toMatchObject({ 'x-lxd-uid': '33', 'x-lxd-gid': '34', 'x-lxd-mode': '0640' });
  });

  it('takes the rootfs of an image made elsewhere as the layout of its os: its programs are not the simulator’s', async () => {
    const tarball = imageTarball({ 'metadata.yaml': 'architecture: x86_64\nproperties:\n  os: busybox\n', 'rootfs/root/elsewhere': 'x\n' });
    const uploaded = await t.waitOp(answer(await call('POST', '/1.0/images', tarball)));
    expect(uploaded.status).toBe('Success');
    const made = await t.waitOp(
      await t.api('POST', '/1.0/instances', { name: 'foreign', source: { type: 'image', fingerprint: uploaded.metadata.fingerprint } }),
    );
    expect(made.status).toBe('Success');
    expect((await call('GET', '/1.0/instances/foreign/files?path=/root/elsewhere')).status).toBe(404);
    expect((await call('GET', '/1.0/instances/foreign/files?path=/sbin/testinit')).status).toBe(200);
  });
});
