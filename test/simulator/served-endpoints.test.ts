import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageTarball } from './image-tarball.js';
import { startTestSim, type TestSim } from './sim-client.js';

/**
 * What /1.0 advertises (`api_extensions` such as `network`, `storage`, `image_*`) is served: a
 * client that checks the extension and goes ahead must find the endpoint, not a 404.
 */
describe('images, networks and storage served as the daemon serves them', () => {
  let t: TestSim;
  beforeAll(async () => {
    t = await startTestSim();
  });
  afterAll(() => t.close());

  const upload = async (body: Buffer, headers: Record<string, string>) => {
    const res = await t.bytes('POST', '/1.0/images', body, headers);
    return { status: res.status, headers: res.headers, body: JSON.parse(res.bytes.toString('utf8')) as any };
  };

  it('uploads a unified image: the operation names its SHA-256 fingerprint, the properties come from metadata.yaml and the headers, and the export returns the bytes', async () => {
    const tarball = imageTarball({
      'metadata.yaml': 'architecture: x86_64\ncreation_date: 1700000000\nproperties:\n  os: meta\n  release: r1\n',
      'rootfs/.keep': '',
    });
    const res = await upload(tarball, {
      'content-type': 'application/octet-stream',
      'x-lxd-filename': 'mine.tar.gz',
      'x-lxd-properties': 'os=busybox&description=uploaded',
    });
    expect(res.status).toBe(202);
    expect(res.body.metadata.description).toBe('Downloading image');
    const op = await t.waitOp(res);
    const fingerprint = createHash('sha256').update(tarball).digest('hex');
    expect(op).toMatchObject({ status: 'Success', metadata: { fingerprint, size: String(tarball.length) } });
    const image = (await t.api('GET', `/1.0/images/${fingerprint}`)).body.metadata;
    expect(image).toMatchObject({
      fingerprint,
      filename: 'mine.tar.gz',
      properties: { os: 'busybox', description: 'uploaded', release: 'r1' },
      architecture: 'x86_64',
      created_at: '2023-11-14T22:13:20+00:00',
      size: tarball.length,
    });
    const exported = await t.bytes('GET', `/1.0/images/${fingerprint}/export`);
    expect(exported.status).toBe(200);
    expect(exported.headers['content-disposition']).toBe(`inline;filename=${fingerprint}.tar.gz`);
    expect(exported.bytes).toEqual(tarball);
  });

  it('uploads a split image as multipart (metadata, rootfs), fingerprinted over both parts', async () => {
    const metadata = imageTarball({ 'metadata.yaml': 'architecture: x86_64\n' });
    const rootfs = Buffer.from('squashfs rootfs');
    const boundary = 'xyzBOUNDARY';
    const part = (name: string, data: Buffer) =>
      Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${name}"\r\n\r\n`),
        data,
        Buffer.from('\r\n'),
      ]);
    const body = Buffer.concat([part('metadata', metadata), part('rootfs', rootfs), Buffer.from(`--${boundary}--\r\n`)]);
    const op = await t.waitOp(await upload(body, { 'content-type': `multipart/form-data; boundary=${boundary}` }));
    expect(op.metadata.fingerprint).toBe(createHash('sha256').update(metadata).update(rootfs).digest('hex'));
  });

  it('takes a body that is no JSON as an upload whatever its Content-Type (pylxd sends none), as LXD 5.0.2 does', async () => {
    const tarball = imageTarball({ 'metadata.yaml': 'architecture: x86_64\nproperties:\n  os: plain\n' }, { gzip: false });
    const res = await upload(tarball, {});
    expect(res.status).toBe(202);
    const op = await t.waitOp(res);
    expect(op).toMatchObject({ status: 'Success', metadata: { fingerprint: createHash('sha256').update(tarball).digest('hex') } });
    expect((await t.api('GET', `/1.0/images/${op.metadata.fingerprint}`)).body.metadata.properties).toEqual({ os: 'plain' });
  });

  it('fails an upload in its operation as LXD 5.0.2 words it: bytes of no known compression, a tarball without metadata.yaml', async () => {
    const refused = async (body: Buffer) => t.waitOp(await upload(body, {}));
    expect(await refused(Buffer.from('not an image'))).toMatchObject({ status_code: 400, err: 'Unsupported compression' });
    expect(await refused(imageTarball({ 'rootfs/x': 'x' }))).toMatchObject({ status_code: 400, err: 'Metadata tarball is missing metadata.yaml' });
  });

  it('refuses JSON whose source type is unknown (500 "Invalid images JSON"), and non-JSON sent as application/json (400)', async () => {
    const json = await upload(Buffer.from('{"source":{"type":"bogus"}}'), {});
    expect(json).toMatchObject({ status: 500, body: { error_code: 500, error: 'Invalid images JSON' } });
    expect((await upload(Buffer.from('not json'), { 'content-type': 'application/json' })).status).toBe(400);
  });

  it('publishes a stopped instance with an alias, refuses a running one in the operation, and deletes the image with its alias', async () => {
    t.sim.controls.addInstance({ name: 'pub', status: 'Stopped' });
    t.sim.controls.addInstance({ name: 'up', status: 'Running' });
    const refused = await t.waitOp(await t.api('POST', '/1.0/images', { source: { type: 'instance', name: 'up' } }));
    expect(refused).toMatchObject({ status_code: 400, err: 'Cannot export a running instance as an image' });
    const op = await t.waitOp(await t.api('POST', '/1.0/images', { source: { type: 'instance', name: 'pub' }, aliases: [{ name: 'published' }] }));
    expect(op.status).toBe('Success');
    const alias = (await t.api('GET', '/1.0/images/aliases/published')).body.metadata;
    expect(alias.target).toBe(op.metadata.fingerprint);
    expect((await t.api('GET', `/1.0/images/${op.metadata.fingerprint}`)).body.metadata.properties).toMatchObject({ os: 'busybox' });
    const launched = await t.waitOp(await t.api('POST', '/1.0/instances', { name: 'from-pub', source: { type: 'image', alias: 'published' } }));
    expect(launched.status).toBe('Success');
    expect((await t.waitOp(await t.api('DELETE', `/1.0/images/${op.metadata.fingerprint}`))).status).toBe('Success');
    expect((await t.api('GET', '/1.0/images/aliases/published')).status).toBe(404);
    expect((await t.api('GET', `/1.0/images/${op.metadata.fingerprint}`)).status).toBe(404);
  });

  it('creates a bridge, attaches it through a profile, refuses its deletion while in use, then deletes it', async () => {
    const created = await t.api('POST', '/1.0/networks', { name: 'br1', config: { 'ipv4.address': '10.9.9.1/24' } });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe('/1.0/networks/br1');
    // LXD 5.0.2 refuses a taken name with 400, Incus with 409 (test/conformance/networks-storage.test.ts).
    expect((await t.api('POST', '/1.0/networks', { name: 'br1' })).body).toMatchObject({ error_code: 400, error: 'The network already exists' });
    expect((await t.api('GET', '/1.0/networks')).body.metadata).toContain('/1.0/networks/br1');
    expect((await t.api('GET', '/1.0/networks/br1')).body.metadata).toMatchObject({
      managed: true,
      type: 'bridge',
      config: { 'ipv4.address': '10.9.9.1/24', 'ipv4.nat': 'true' },
    });
    await t.api('POST', '/1.0/profiles', { name: 'onbr1', devices: { eth1: { type: 'nic', network: 'br1', name: 'eth1' } } });
    expect((await t.api('GET', '/1.0/networks/br1')).body.metadata.used_by).toEqual(['/1.0/profiles/onbr1']);
    expect((await t.api('DELETE', '/1.0/networks/br1')).body).toMatchObject({ error_code: 400, error: 'The network is currently in use' });
    await t.api('DELETE', '/1.0/profiles/onbr1');
    expect((await t.api('PATCH', '/1.0/networks/br1', { config: { 'ipv4.nat': 'false' } })).status).toBe(200);
    expect((await t.api('GET', '/1.0/networks/br1')).body.metadata.config['ipv4.nat']).toBe('false');
    expect((await t.api('DELETE', '/1.0/networks/br1')).status).toBe(200);
    expect((await t.api('GET', '/1.0/networks/br1')).status).toBe(404);
  });

  it('creates a pool and a custom volume, attaches the volume to an instance, and deletes both once unused', async () => {
    expect((await t.api('POST', '/1.0/storage-pools', { name: 'p2', driver: 'dir' })).status).toBe(201);
    expect((await t.api('GET', '/1.0/storage-pools/p2')).body.metadata).toMatchObject({
      driver: 'dir',
      config: { source: '/var/lib/lxd/storage-pools/p2' },
    });
    expect((await t.api('POST', '/1.0/storage-pools/p2/volumes/custom', { name: 'v1', config: { size: '1GiB' } })).status).toBe(200);
    expect((await t.api('POST', '/1.0/storage-pools/p2/volumes/custom', { name: 'v1' })).status).toBe(409);
    expect((await t.api('GET', '/1.0/storage-pools/p2/volumes/custom')).body.metadata).toEqual(['/1.0/storage-pools/p2/volumes/custom/v1']);
    t.sim.controls.addInstance({ name: 'vol-user', status: 'Stopped' });
    expect(
      (await t.api('PATCH', '/1.0/instances/vol-user', { devices: { v1: { type: 'disk', pool: 'p2', source: 'v1', path: '/data' } } })).status,
    ).toBe(200);
    expect((await t.api('GET', '/1.0/storage-pools/p2/volumes/custom/v1')).body.metadata.used_by).toEqual(['/1.0/instances/vol-user']);
    expect((await t.api('DELETE', '/1.0/storage-pools/p2/volumes/custom/v1')).status).toBe(400);
    expect((await t.api('DELETE', '/1.0/storage-pools/p2')).body.error).toBe('The storage pool is currently in use');
    await t.api('PATCH', '/1.0/instances/vol-user', { devices: { v1: { type: 'none' } } });
    const instance = (await t.api('GET', '/1.0/instances/vol-user')).body.metadata;
    await t.waitOp(await t.api('PUT', '/1.0/instances/vol-user', { ...instance, devices: {} }));
    expect((await t.api('DELETE', '/1.0/storage-pools/p2/volumes/custom/v1')).status).toBe(200);
    expect((await t.api('DELETE', '/1.0/storage-pools/p2')).status).toBe(200);
    expect((await t.api('GET', '/1.0/storage-pools/p2')).status).toBe(404);
  });
});
