import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstanceClient } from '../../src/client/client.js';
import { parseTarget } from '../../src/client/target.js';
import { startObservabilityBed, type ObservabilityBed } from '../metrics/observability-bed.js';
import { until } from '../support/wait.js';

/**
 * History follows the instance, not its name, in the console as in `reflex audit --instance`: an
 * incident of web-1 is listed under web-1-old after the operator renames it (the rename keeps its
 * volatile.uuid).
 */
describe("the console's incidents of an instance follow it across a rename", () => {
  const readToken = `rename-read-${Math.random().toString(36).slice(2)}`;
  let bed: ObservabilityBed;
  let client: InstanceClient;

  beforeAll(async () => {
    bed = await startObservabilityBed({ rulesDir: 'rules', instances: [{ name: 'web-1' }], config: { dashboardToken: readToken } });
    client = new InstanceClient(parseTarget(bed.reflex.target));
  });

  afterAll(async () => {
    await client?.close();
    await bed?.stop();
  });

  const incidents = async (instance: string) => {
    const res = await fetch(`${bed.url}/dashboard/console/incidents?instance=${instance}`, { headers: { authorization: `Bearer ${readToken}` } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { incidents: { instance: string; outcome?: { result: string } }[] }).incidents;
  };

  it("lists web-1's healed crash under its new name once the renamed instance has records of its own", async () => {
    bed.sim.controls.crash('web-1');
    await until('the crash healed and its incident ended', async () => (await incidents('web-1')).some((i) => i.outcome !== undefined), 20_000);
    await (await client.changeState('web-1', { action: 'stop', force: true })).wait();
    await client.transport.request('POST', '/1.0/instances/web-1', { body: { name: 'web-1-old' } });
    await until('the rename', async () => (await client.listInstances({ recursion: 0 })).some((n) => n.endsWith('/web-1-old')), 20_000);
    bed.sim.controls.addInstance({ name: 'web-1', status: 'Stopped' });
    // The operator starts it under its new name, where it crashes again and is healed.
    await (await client.changeState('web-1-old', { action: 'start' })).wait();
    bed.sim.controls.crash('web-1-old');
    // Its records before the rename name web-1 (its name then); they carry its uuid, which web-1-old keeps.
    await until(
      'both incidents under the new name',
      async () => (await incidents('web-1-old')).filter((i) => i.outcome !== undefined).length === 2,
      20_000,
    );
    expect((await incidents('web-1-old')).map((i) => i.instance)).toEqual(['web-1-old', 'web-1']);
  });
});
