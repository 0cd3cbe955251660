import { afterAll, beforeAll, expect, it } from 'vitest';
import { nameFromUrl } from '../../src/client/instance.js';
import { and, eq, not, or } from '../../src/filter/builder.js';
import { conformance } from './targets.js';

await conformance('collections answer at recursion 0, 1 and 2 and honour filters', (target) => {
  let running = '';
  let stopped = '';
  beforeAll(async () => {
    const t = target();
    running = await t.launch();
    stopped = await t.launch();
    await (await t.client.changeState(stopped, { action: 'stop', force: true })).wait({ timeoutMs: 20_000 });
  }, 60_000);
  afterAll(async () => {
    await target().remove(running);
    await target().remove(stopped);
  });

  it('recursion 0 lists URLs', async () => {
    const urls = await target().client.listInstances({ recursion: 0 });
    expect(urls).toContain(`/1.0/instances/${running}`);
    expect(urls.map(nameFromUrl)).toContain(stopped);
  });

  it('recursion 1 lists objects without state', async () => {
    const list = await target().client.listInstances({ recursion: 1 });
    const mine = list.find((i) => i.name === running);
    expect(mine).toMatchObject({ name: running, status: 'Running', status_code: 103 });
    expect(mine).not.toHaveProperty('state');
  });

  it('recursion 2 lists objects with state and snapshots', async () => {
    const list = await target().client.listInstances({ recursion: 2 });
    const mine = list.find((i) => i.name === running);
    expect(mine?.state?.status_code).toBe(103);
    expect(mine?.state?.pid).toBeGreaterThan(0);
    expect(list.find((i) => i.name === stopped)?.state?.status_code).toBe(102);
  });

  it('a filter by name returns just that instance', async () => {
    const list = await target().client.listInstances({ filter: `name eq ${running}` });
    expect(list.map((i) => i.name)).toEqual([running]);
  });

  it('a filter by status returns running instances and not stopped ones', async () => {
    const names = (await target().client.listInstances({ filter: 'status eq Running' })).map((i) => i.name);
    expect(names).toContain(running);
    expect(names).not.toContain(stopped);
    const stoppedNames = (await target().client.listInstances({ filter: 'status eq Stopped' })).map((i) => i.name);
    expect(stoppedNames).toContain(stopped);
  });

  it('filters combine with and/not', async () => {
    const list = await target().client.listInstances({ filter: `name eq ${running} and not status eq Stopped` });
    expect(list.map((i) => i.name)).toEqual([running]);
  });

  it('a filter built with src/filter is printed and honoured', async () => {
    const expr = and(or(eq('name', running), eq('name', stopped)), not(eq('status', 'Stopped')));
    const list = await target().client.listInstances({ filter: expr });
    expect(list.map((i) => i.name)).toEqual([running]);
  });

  it('filter values match case-insensitively (status eq running)', async () => {
    const names = (await target().client.listInstances({ filter: eq('status', 'running') })).map((i) => i.name);
    expect(names).toContain(running);
  });

  it('all-projects lists instances with their project', async () => {
    const list = await target().client.listInstances({ allProjects: true });
    expect(list.find((i) => i.name === running)?.project).toBe('default');
  });

  it('/1.0/containers is an alias of /1.0/instances in the earlier revision only (the later answers 404)', async () => {
    const t = target();
    const listing = t.client.listInstances({ recursion: 0, collection: 'containers' });
    if (t.revision === 'earlier') expect((await listing).map(nameFromUrl)).toContain(running);
    else await expect(listing).rejects.toMatchObject({ status: 404 });
  });
});
