import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSim, type TestSim } from './sim-client.js';

/**
 * The resources key of instance operations per revision (seed §2.3): the earlier revision names
 * containers as "containers" (beside "instances"), the later one as "instances" only, except
 * for exec, where Incus too adds "containers".
 */
for (const revision of ['earlier', 'later'] as const) {
  describe(`operation resources in the ${revision} revision`, () => {
    let t: TestSim;
    beforeAll(async () => {
      t = await startTestSim({ revision, projects: ['p1'] });
      t.sim.controls.addInstance({ name: 'c1', status: 'Stopped' });
      t.sim.controls.addInstance({ name: 'c2', status: 'Running', project: 'p1' });
    });
    afterAll(async () => t.close());

    const expected = (name: string, project = ''): Record<string, string[]> =>
      revision === 'earlier'
        ? { containers: [`/1.0/containers/${name}${project}`], instances: [`/1.0/instances/${name}${project}`] }
        : { instances: [`/1.0/instances/${name}${project}`] };

    it("lists a state change of a container under the revision's key", async () => {
      const res = await t.api('PUT', '/1.0/instances/c1/state', { action: 'start' });
      expect(res.body.metadata.resources).toEqual(expected('c1'));
      expect((await t.waitOp(res)).resources).toEqual(expected('c1'));
    });

    it("lists create, snapshot and delete under the revision's key", async () => {
      const created = await t.api('POST', '/1.0/instances', { name: 'n1', source: { type: 'none' } });
      expect(created.body.metadata.resources).toEqual(expected('n1'));
      await t.waitOp(created);
      const snap = await t.api('POST', '/1.0/instances/n1/snapshots', { name: 's1' });
      expect(snap.body.metadata.resources).toEqual(expected('n1'));
      await t.waitOp(snap);
      const del = await t.api('DELETE', '/1.0/instances/n1');
      expect(del.body.metadata.resources).toEqual(expected('n1'));
      await t.waitOp(del);
    });

    it('keeps the project in the resource URLs of a non-default project', async () => {
      const res = await t.api('PUT', '/1.0/instances/c2/state?project=p1', { action: 'freeze' });
      expect(res.body.metadata.resources).toEqual(expected('c2', '?project=p1'));
      await t.waitOp(res);
      await t.waitOp(await t.api('PUT', '/1.0/instances/c2/state?project=p1', { action: 'unfreeze' }));
    });

    it('lists exec of a container under both keys in either revision', async () => {
      const res = await t.api('POST', '/1.0/instances/c2/exec?project=p1', { command: ['true'], 'wait-for-websocket': false });
      expect(res.body.metadata.resources).toEqual({ containers: ['/1.0/containers/c2?project=p1'], instances: ['/1.0/instances/c2?project=p1'] });
      await t.waitOp(res);
    });
  });
}
