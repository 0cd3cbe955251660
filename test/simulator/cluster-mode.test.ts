import { afterEach, describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { resyncEvents } from '../../src/events/resync.js';
import { StateTracker } from '../../src/events/state-tracker.js';
import { keySpace } from '../../src/redis/key-space.js';
import { redisClient, uniquePrefix } from '../support/redis.js';
import { startTestSim, type TestSim } from './sim-client.js';
import { expectMoveOperations } from '../conformance/move-operations.js';

let t: TestSim | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const members = ['m1', 'm2', 'm3'];

/** Property types of Cluster and ClusterMember in the spec (../shared/spec/incus-rest-api.yaml). */
const specTypes: Record<string, Record<string, string>> = {
  Cluster: { enabled: 'boolean', member_config: 'array', server_name: 'string' },
  ClusterMember: {
    architecture: 'string',
    config: 'object',
    database: 'boolean',
    description: 'string',
    failure_domain: 'string',
    groups: 'array',
    message: 'string',
    roles: 'array',
    server_name: 'string',
    status: 'string',
    url: 'string',
  },
};

function typesOf(obj: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, Array.isArray(v) ? 'array' : typeof v]));
}

describe('simulator cluster mode', () => {
  it('answers the cluster endpoints with three Online members', async () => {
    t = await startTestSim({ cluster: { members } });
    expect((await t.api('GET', '/1.0/cluster')).body.metadata).toEqual({ server_name: 'm1', enabled: true, member_config: [] });
    expect((await t.api('GET', '/1.0/cluster/members')).body.metadata).toEqual([
      '/1.0/cluster/members/m1',
      '/1.0/cluster/members/m2',
      '/1.0/cluster/members/m3',
    ]);
    const full = (await t.api('GET', '/1.0/cluster/members?recursion=1')).body.metadata;
    expect(full.map((m: any) => [m.server_name, m.status, m.message])).toEqual([
      ['m1', 'Online', 'Fully operational'],
      ['m2', 'Online', 'Fully operational'],
      ['m3', 'Online', 'Fully operational'],
    ]);
    expect(full[1]).toMatchObject({ url: 'https://10.0.0.2:8443', database: true, architecture: 'x86_64' });
    for (const m of full) expect(typesOf(m)).toEqual(specTypes.ClusterMember);
    expect(typesOf((await t.api('GET', '/1.0/cluster')).body.metadata)).toEqual(specTypes.Cluster);
    expect((await t.api('GET', '/1.0/cluster/members/m9')).status).toBe(404);
    expect((await t.api('GET', '/1.0')).body.metadata.environment).toMatchObject({ server_clustered: true, server_name: 'm1' });
  });

  it('places instances on members in turn, or on ?target=, and shows it in location', async () => {
    t = await startTestSim({ cluster: { members }, instances: 4 });
    const listed = (await t.api('GET', '/1.0/instances?recursion=1')).body.metadata;
    expect(listed.map((i: any) => i.location)).toEqual(['m1', 'm2', 'm3', 'm1']);
    const created = await t.api('POST', '/1.0/instances?target=m3', { name: 'c1', source: { type: 'none' } });
    expect(created.body.metadata.location).toBe('m3');
    await t.waitOp(created);
    expect((await t.api('GET', '/1.0/instances/c1')).body.metadata.location).toBe('m3');
  });

  it('sends every lifecycle and operation event with the location of the instance member', async () => {
    t = await startTestSim({ cluster: { members } });
    t.sim.controls.addInstance({ name: 'c1', location: 'm2', status: 'Stopped' });
    const tap = await t.events();
    await t.waitOp(await t.api('PUT', '/1.0/instances/c1/state', { action: 'start' }));
    t.sim.controls.crash('c1');
    await tap.until((f) => f.metadata.action === 'instance-shutdown');
    const mine = tap.frames.filter((f) => f.type !== 'logging');
    expect(mine.map((f) => f.metadata.action ?? f.metadata.status)).toEqual([
      'Pending',
      'Running',
      'instance-started',
      'Success',
      'instance-shutdown',
    ]);
    expect(new Set(mine.map((f) => f.location))).toEqual(new Set(['m2']));
  });

  it('says Offline for a member taken down and Error for its instances, until it is up again', async () => {
    t = await startTestSim({ cluster: { members } });
    t.sim.controls.addInstance({ name: 'c1', location: 'm2' });
    t.sim.controls.addInstance({ name: 'c2', location: 'm3' });
    t.sim.controls.memberDown('m2');
    const down = await t.api('POST', '/sim/members/m3/down');
    expect(down.status).toBe(200);
    const full = (await t.api('GET', '/1.0/cluster/members?recursion=1')).body.metadata;
    expect(full.map((m: any) => m.status)).toEqual(['Online', 'Offline', 'Offline']);
    const listed = (await t.api('GET', '/1.0/instances?recursion=1')).body.metadata;
    expect(listed.map((i: any) => [i.name, i.status, i.status_code])).toEqual([
      ['c1', 'Error', 112],
      ['c2', 'Error', 112],
    ]);
    // As LXD 5.0.2 lists them (seen on the real two-member bed): stubs with null maps, which the client reads.
    const stubFields =
      'architecture config created_at description devices ephemeral last_used_at location name profiles project stateful status status_code type';
    expect(Object.keys(listed[0]).sort()).toEqual(stubFields.split(' '));
    expect(listed[0]).toMatchObject({ location: 'm2', config: null, devices: null, profiles: null, type: '' });
    const client = new InstanceClient(parseTarget(`unix://${t.sim.socketPath}`));
    try {
      const read = await client.listInstances();
      expect(read.map((i) => [i.name, i.status_code, i.config])).toEqual([
        ['c1', 112, {}],
        ['c2', 112, {}],
      ]);
    } finally {
      await client.close();
    }
    expect((await t.api('PUT', '/1.0/instances/c1/state', { action: 'stop', force: true })).status).toBe(500);
    expect(() => t!.sim.controls.crash('c1')).toThrow(/offline/);
    await t.api('POST', '/sim/members/m2/up');
    expect((await t.api('GET', '/1.0/cluster/members/m2')).body.metadata.status).toBe('Online');
    expect((await t.api('GET', '/1.0/instances/c1')).body.metadata).toMatchObject({ status: 'Running', location: 'm2' });
  });

  it('a resync while a member is down reports nothing of its instances (stubs), and the crash found once it is back', async () => {
    t = await startTestSim({ cluster: { members } });
    t.sim.controls.addInstance({ name: 'c1', location: 'm2' });
    t.sim.controls.addInstance({ name: 'c2', location: 'm1' });
    const redis = redisClient();
    const client = new InstanceClient(parseTarget(`unix://${t.sim.socketPath}`));
    try {
      const tracker = new StateTracker(redis, keySpace(uniquePrefix('stub-resync')));
      const target = 'unix://sim';
      const first = await resyncEvents(client, tracker, target);
      for (const e of first)
        if (e.kind === 'instance.status') await tracker.update({ target, project: e.project, instance: e.instance }, e.to, Date.now());
      t.sim.controls.memberDown('m2');
      expect(await resyncEvents(client, tracker, target), 'no change reported for the stub of c1').toEqual([]);
      t.sim.controls.memberUp('m2');
      t.sim.controls.crash('c1');
      const after = await resyncEvents(client, tracker, target);
      expect(after.map((e) => (e.kind === 'instance.status' ? [e.instance, e.from, e.to] : e.kind))).toEqual([['c1', 103, 102]]);
    } finally {
      await client.close();
      redis.disconnect();
    }
  });

  it('moves a stopped instance with POST ?target=: same name, new location; a copy created on the target, the instance deleted on its member, the copy renamed, as LXD 5.0.2 sends it', async () => {
    t = await startTestSim({ cluster: { members } });
    t.sim.controls.addInstance({ name: 'c1', location: 'm1', status: 'Stopped' });
    const tap = await t.events('?type=lifecycle');
    const opsTap = await t.events('?type=operation');
    const moved = await t.api('POST', '/1.0/instances/c1?target=m2', { name: 'c1', migration: true });
    expect(moved.status).toBe(202);
    expect((await t.waitOp(moved)).status).toBe('Success');
    expect((await t.api('GET', '/1.0/instances/c1')).body.metadata).toMatchObject({ name: 'c1', location: 'm2', status: 'Stopped' });
    await tap.until((f) => f.metadata.action === 'instance-renamed');
    const copy = `lxd-move-of-${(await t.api('GET', '/1.0/instances/c1')).body.metadata.config['volatile.uuid']}`;
    expect(
      tap.frames.map((f) => [f.metadata.action, f.location, f.metadata.source, f.metadata.context ?? null, f.metadata.requestor ?? null]),
    ).toEqual([
      ['instance-created', 'm2', `/1.0/instances/${copy}`, { 'storage-pool': 'default', type: 'container' }, null],
      ['instance-deleted', 'm1', '/1.0/instances/c1', null, null],
      ['instance-renamed', 'm2', '/1.0/instances/c1', { old_name: copy }, null],
    ]);
    // The operations LXD 5.0.2 runs for the move, as on the real cluster (test/lxd/lxd-cluster.test.ts).
    await opsTap.until((f) => f.metadata.id === moved.body.metadata.id && f.metadata.status === 'Success');
    expectMoveOperations(opsTap.frames, { name: 'c1', copy, from: 'm1', to: 'm2' });
    const running = await t.api('POST', '/1.0/instances/c1?target=m3', { name: 'c1', migration: true });
    expect(running.status).toBe(202);
    await t.waitOp(running);
    await t.waitOp(await t.api('PUT', '/1.0/instances/c1/state', { action: 'start' }));
    expect((await t.api('POST', '/1.0/instances/c1?target=m1', { name: 'c1', migration: true })).status).toBe(400);
    expect((await t.api('POST', '/1.0/instances/c1?target=m9', { name: 'c1', migration: true })).status).toBe(404);
  });

  it('moves a running instance with the control: shut down on the old member, started on the new one', async () => {
    t = await startTestSim({ cluster: { members } });
    t.sim.controls.addInstance({ name: 'c1', location: 'm1' });
    const tap = await t.events('?type=lifecycle');
    const res = await t.api('POST', '/sim/instances/c1/move', { target: 'm3' });
    expect(res.status).toBe(200);
    await tap.until((f) => f.metadata.action === 'instance-started');
    expect(tap.frames.map((f) => [f.metadata.action, f.location])).toEqual([
      ['instance-shutdown', 'm1'],
      ['instance-created', 'm3'],
      ['instance-deleted', 'm1'],
      ['instance-renamed', 'm3'],
      ['instance-started', 'm3'],
    ]);
    expect(tap.frames[0].metadata.requestor).toBeDefined();
    expect(t.sim.controls.locationOf('c1')).toBe('m3');
    expect(t.sim.controls.statusCode('c1')).toBe(103);
  });

  it('evacuates a member to the others and restores it, through the API', async () => {
    t = await startTestSim({ cluster: { members } });
    t.sim.controls.addInstance({ name: 'c1', location: 'm1' });
    t.sim.controls.addInstance({ name: 'c2', location: 'm1', status: 'Stopped' });
    const tap = await t.events('?type=lifecycle');
    const evac = await t.api('POST', '/1.0/cluster/members/m1/state', { action: 'evacuate' });
    expect(evac.status).toBe(202);
    await t.waitOp(evac);
    expect((await t.api('GET', '/1.0/cluster/members/m1')).body.metadata).toMatchObject({
      status: 'Evacuated',
      message: 'Unavailable due to maintenance',
    });
    const away = (await t.api('GET', '/1.0/instances?recursion=1')).body.metadata;
    expect(away.map((i: any) => i.location)).not.toContain('m1');
    expect(away.map((i: any) => i.config['volatile.evacuate.origin'])).toEqual(['m1', 'm1']);
    await t.waitOp(await t.api('POST', '/1.0/cluster/members/m1/state', { action: 'restore' }));
    const home = (await t.api('GET', '/1.0/instances?recursion=1')).body.metadata;
    expect(home.map((i: any) => [i.name, i.location, i.status])).toEqual([
      ['c1', 'm1', 'Running'],
      ['c2', 'm1', 'Stopped'],
    ]);
    expect((await t.api('GET', '/1.0/cluster/members/m1')).body.metadata.status).toBe('Online');
    // As LXD 5.0.2 sends them: the evacuation's stop names no requestor (like a crash: Reflex reads
    // the member's status to tell them apart) and its start names the cluster; the restore's stop
    // names the cluster and its start nobody.
    const c1 = tap.frames.filter((f) => /\/c1$/.test(f.metadata.source) && /shutdown|started/.test(f.metadata.action));
    expect(c1.map((f) => [f.metadata.action, f.location, f.metadata.requestor?.protocol ?? null])).toEqual([
      ['instance-shutdown', 'm1', null],
      ['instance-started', 'm2', 'cluster'],
      ['instance-shutdown', 'm2', 'cluster'],
      ['instance-started', 'm1', null],
    ]);
  });

  it('keeps a standalone server unclustered: location "none" and 500 on the member list', async () => {
    t = await startTestSim();
    t.sim.controls.addInstance({ name: 'c1' });
    const tap = await t.events('?type=lifecycle');
    t.sim.controls.crash('c1');
    expect((await tap.until((f) => f.metadata.action === 'instance-shutdown')).location).toBe('none');
    expect((await t.api('GET', '/1.0/instances/c1')).body.metadata.location).toBe('none');
    expect((await t.api('GET', '/1.0/cluster/members')).status).toBe(500);
    expect(() => t!.sim.controls.memberDown('m1')).toThrow(/not in cluster mode/);
  });
});
