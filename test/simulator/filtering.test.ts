import { afterEach, describe, expect, it } from 'vitest';
import { startTestSim, type TestSim } from './sim-client.js';

let t: TestSim;
afterEach(async () => t.close());
const q = (f: string) => encodeURIComponent(f);

describe('server-side filtering', () => {
  it('filters instances like LXD 5.0.2', async () => {
    t = await startTestSim({ instances: 20 });
    t.sim.controls.addInstance({ name: 'web-one', status: 'Stopped', config: { 'user.tier': 'front end' } });
    const names = async (f: string) => (await t.api('GET', `/1.0/instances?filter=${q(f)}`)).body.metadata;
    expect(await names('status eq stopped')).toEqual(['/1.0/instances/web-one']);
    expect(await names('name eq inst-0001.*')).toHaveLength(10);
    expect(await names('config.user.reflex.autorestart eq true')).toEqual(['/1.0/instances/inst-00010', '/1.0/instances/inst-00020']);
    expect(await names('config.user.tier eq "front end"')).toEqual(['/1.0/instances/web-one']);
    expect(await names('status gt 0')).toEqual([]);
    expect(await names('ephemeral eq false')).toEqual([]);
    const bad = await t.api('GET', `/1.0/instances?filter=${q('name eq "web-one"')}`);
    expect(bad.status).toBe(500);
    expect(bad.body.error).toMatch(/^Invalid filter: unterminated quote/);
  });

  it('filters images by Properties and UpdateSource', async () => {
    t = await startTestSim();
    const res = await t.api('GET', `/1.0/images?recursion=1&filter=${q('Properties.os eq Debian and not UpdateSource.Protocol eq lxd')}`);
    expect(res.body.metadata.map((i: any) => i.properties.os)).toEqual(['Debian']);
  });

  it('filters storage volumes only on the later revision', async () => {
    t = await startTestSim({ instances: 3, revision: 'later' });
    const later = await t.api('GET', `/1.0/storage-pools/default/volumes?filter=${q('type eq custom')}`);
    expect(later.body.metadata).toEqual(['/1.0/storage-pools/default/volumes/custom/data']);
    await t.close();
    t = await startTestSim({ instances: 3, revision: 'earlier' });
    const earlier = await t.api('GET', `/1.0/storage-pools/default/volumes?filter=${q('type eq custom')}`);
    expect(earlier.body.metadata).toHaveLength(4);
  });
});
