import { afterEach, expect, it } from 'vitest';
import { isApiStatus } from '../../src/client/api-error.js';
import { conformance, type ConformanceTarget } from './targets.js';
import { until } from '../support/wait.js';

/**
 * What an instance's identity is (issue 25: Reflex acts on the instance that had the incident,
 * never on a name): `volatile.uuid` is kept by a rename and new on every create and copy, so a
 * name re-created gets a fresh one; `created_at` is kept by a rename. The simulator is held to it.
 */
await conformance('volatile.uuid is the instance: kept by a rename, new on create and copy', (target) => {
  const made: string[] = [];
  afterEach(async () => {
    for (const name of made.splice(0)) await target().remove(name);
  });

  const read = async (t: ConformanceTarget, name: string) => (await t.client.getInstance(name)).value;
  /** Waits until the instance is found (404 until then); another answer is named when the wait times out. */
  async function appears(t: ConformanceTarget, name: string): Promise<void> {
    await until(
      `${name} to be found`,
      () =>
        t.client.getInstance(name).then(
          () => true,
          (err: unknown) => {
            if (isApiStatus(err, 404)) return false;
            throw err;
          },
        ),
      20_000,
      50,
    );
  }

  it('a rename keeps volatile.uuid and created_at; a copy, and a new instance under the old name, get new uuids', async () => {
    const t = target();
    const name = await t.launch();
    made.push(name, `${name}-r`);
    const before = await read(t, name);
    const uuid = before.config['volatile.uuid'];
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    await (await t.client.changeState(name, { action: 'stop', force: true })).wait({ timeoutMs: 20_000 });

    await t.client.transport.request('POST', `/1.0/instances/${name}`, { body: { name: `${name}-r` } });
    await appears(t, `${name}-r`);
    // As `lxc copy` does: the copy gets the source's profiles (its root disk), not none.
    const renamed = await read(t, `${name}-r`);
    expect(renamed.config['volatile.uuid'], 'a rename keeps the uuid').toBe(uuid);
    expect(renamed.created_at, 'a rename keeps created_at').toBe(before.created_at);

    await (
      await t.client.createInstance({ name, source: { type: 'copy', source: `${name}-r` }, profiles: renamed.profiles ?? ['default'] })
    ).wait({ timeoutMs: 60_000 });
    const copy = (await read(t, name)).config['volatile.uuid'];
    expect(copy, 'a copy under the old name is another instance').toMatch(/^[0-9a-f-]{36}$/);
    expect(copy).not.toBe(uuid);

    await (await t.client.deleteInstance(name)).wait({ timeoutMs: 20_000 });
    await (
      await t.client.createInstance({ name, source: { type: 'copy', source: `${name}-r` }, profiles: renamed.profiles ?? ['default'] })
    ).wait({ timeoutMs: 60_000 });
    const again = (await read(t, name)).config['volatile.uuid'];
    expect([uuid, copy], 'the name deleted and made again is another instance again').not.toContain(again);
  });
});
