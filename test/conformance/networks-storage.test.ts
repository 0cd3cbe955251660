import { expect, it } from 'vitest';
import { ApiError } from '../../src/client/api-error.js';
import { conformance, type ConformanceTarget } from './targets.js';

/**
 * The refusals of the network and storage endpoints, in each daemon's words and statuses. Each case
 * creates what it needs under a test-unique name on the target and deletes it in a finally. The
 * networks are macvlan (parent: the host's eth0): the test beds cannot make a bridge (no dnsmasq
 * on the host: "Failed to check dnsmasq version"), and a macvlan network is a record until an
 * instance uses it, so nothing changes on the host. The name checks are asked of a bridge: a macvlan
 * without a parent is refused on its config first.
 */

type Answer = { status: number | undefined; error: string };

async function answer(t: ConformanceTarget, method: string, path: string, body?: unknown): Promise<Answer> {
  try {
    const res = await t.client.transport.request(method, path, { body });
    return { status: res.status, error: '' };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { status: err.status, error: err.serverError ?? err.message };
  }
}

const unique = (prefix: string): string => `${prefix}${process.pid % 10000}${Math.floor(Math.random() * 1000)}`;

await conformance('network and storage refusals in the daemon’s words (issue #28)', (target) => {
  it('networks: a taken name, a bad name, an unknown type, in use (delete, rename), missing', async () => {
    const t = target();
    const later = t.revision === 'later';
    const net = unique('rtn');
    const profile = `rt-netuse-${process.pid}`;
    const make = { name: net, type: 'macvlan', config: { parent: 'eth0' } };
    try {
      expect(await answer(t, 'POST', '/1.0/networks', make)).toEqual({ status: 201, error: '' });
      expect(await answer(t, 'POST', '/1.0/networks', make)).toEqual(
        later ? { status: 409, error: `Network "${net}" already exists` } : { status: 400, error: 'The network already exists' },
      );
      expect(await answer(t, 'POST', '/1.0/networks', { name: 'rt-this-name-is-too-long', type: 'bridge' })).toEqual({
        status: 400,
        error: 'Network interface is too long (maximum 15 characters)',
      });
      expect(await answer(t, 'POST', '/1.0/networks', { name: 'rt/x', type: 'bridge' })).toEqual({
        status: 400,
        error: 'Network interface contains invalid characters',
      });
      expect(await answer(t, 'POST', '/1.0/networks', { name: unique('rtz'), type: 'bogus' })).toEqual({ status: 400, error: 'Unknown driver' });
      expect(await answer(t, 'POST', '/1.0/networks', { name: '', type: 'bridge' })).toEqual({ status: 400, error: 'No name provided' });
      expect(
        await answer(t, 'POST', '/1.0/profiles', { name: profile, devices: { eth0: { type: 'nic', network: net, name: 'eth0' } } }),
      ).toMatchObject({ status: 201 });
      expect(await answer(t, 'DELETE', `/1.0/networks/${net}`)).toEqual({ status: 400, error: 'The network is currently in use' });
      expect(await answer(t, 'POST', `/1.0/networks/${net}`, { name: `${net}r` })).toEqual({ status: 400, error: 'Network is currently in use' });
      expect(await answer(t, 'GET', '/1.0/networks/rt-missing')).toEqual({ status: 404, error: 'Network not found' });
      expect(await answer(t, 'DELETE', '/1.0/networks/rt-missing')).toEqual({ status: 404, error: 'Failed loading network: Network not found' });
    } finally {
      await answer(t, 'DELETE', `/1.0/profiles/${profile}`);
      await answer(t, 'DELETE', `/1.0/networks/${net}`);
    }
    expect(await answer(t, 'GET', `/1.0/networks/${net}`)).toEqual({ status: 404, error: 'Network not found' });
  });

  it('storage: a taken pool name, an unknown driver, slashes, a missing pool or volume, in use (pool, volume)', async () => {
    const t = target();
    const pool = unique('rtp');
    const profile = `rt-pooluse-${process.pid}`;
    try {
      expect(await answer(t, 'POST', '/1.0/storage-pools', { name: pool, driver: 'dir' })).toEqual({ status: 201, error: '' });
      expect(await answer(t, 'POST', '/1.0/storage-pools', { name: pool, driver: 'dir' })).toEqual({
        status: 409,
        error: 'The storage pool already exists: The record already exists',
      });
      expect(await answer(t, 'POST', '/1.0/storage-pools', { name: unique('rtq'), driver: 'bogus' })).toEqual({
        status: 500,
        error: 'Unknown driver',
      });
      expect(await answer(t, 'POST', '/1.0/storage-pools', { name: 'rt/x', driver: 'dir' })).toEqual({
        status: 400,
        error: 'Storage pool names may not contain slashes',
      });
      expect(await answer(t, 'GET', '/1.0/storage-pools/rt-missing')).toEqual({ status: 404, error: 'Storage pool not found' });
      const volumes = `/1.0/storage-pools/${pool}/volumes`;
      expect(await answer(t, 'POST', `${volumes}/custom`, { name: 'v1' })).toEqual({ status: 200, error: '' });
      expect(await answer(t, 'POST', `${volumes}/custom`, { name: 'v1' })).toEqual({ status: 409, error: 'Volume by that name already exists' });
      expect(await answer(t, 'POST', `${volumes}/custom`, { name: 'a/b' })).toEqual({
        status: 400,
        error: 'Storage volume names may not contain slashes',
      });
      expect(await answer(t, 'POST', `${volumes}/bogus`, { name: 'v2' })).toEqual({
        status: 400,
        error: 'Currently not allowed to create storage volumes of type "bogus"',
      });
      expect(await answer(t, 'GET', `${volumes}/custom/rt-missing`)).toEqual({ status: 404, error: 'Storage pool volume not found' });
      expect(await answer(t, 'DELETE', `${volumes}/custom/rt-missing`)).toEqual({ status: 404, error: 'Storage pool volume not found' });
      expect(
        await answer(t, 'POST', '/1.0/profiles', { name: profile, devices: { d: { type: 'disk', pool, source: 'v1', path: '/mnt' } } }),
      ).toMatchObject({ status: 201 });
      expect(await answer(t, 'DELETE', `${volumes}/custom/v1`)).toEqual({ status: 400, error: 'The storage volume is still in use' });
      await answer(t, 'DELETE', `/1.0/profiles/${profile}`);
      // A pool with a custom volume in it is in use too.
      expect(await answer(t, 'DELETE', `/1.0/storage-pools/${pool}`)).toEqual({ status: 400, error: 'The storage pool is currently in use' });
    } finally {
      await answer(t, 'DELETE', `/1.0/profiles/${profile}`);
      await answer(t, 'DELETE', `/1.0/storage-pools/${pool}/volumes/custom/v1`);
      await answer(t, 'DELETE', `/1.0/storage-pools/${pool}`);
    }
    expect(await answer(t, 'GET', `/1.0/storage-pools/${pool}`)).toEqual({ status: 404, error: 'Storage pool not found' });
  });
});
