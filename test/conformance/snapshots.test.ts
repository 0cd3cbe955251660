import { expect, it } from 'vitest';
import { conformance, launchPerSuite } from './targets.js';

await conformance('snapshots are created with an expiry, listed, renamed, restored and deleted', (target) => {
  const name = launchPerSuite(target);

  it('a snapshot created with an expiry lists with that expiry', async () => {
    const c = target().client;
    const expiresAt = new Date(Date.now() + 3_600_000);
    expiresAt.setMilliseconds(0);
    await (await c.createSnapshot(name(), { name: 'rt-s1', expiresAt })).wait({ timeoutMs: 30_000 });
    const list = await c.listSnapshots(name());
    const s1 = list.find((s) => s.name === 'rt-s1');
    expect(s1).toBeDefined();
    expect(Date.parse(s1!.expires_at!)).toBe(expiresAt.getTime());
    expect(await c.listSnapshots(name(), { recursion: 0 })).toContain(`/1.0/instances/${name()}/snapshots/rt-s1`);
  });

  it('a snapshot without a name gets the server pattern and no expiry', async () => {
    const c = target().client;
    await (await c.createSnapshot(name())).wait({ timeoutMs: 30_000 });
    const auto = (await c.listSnapshots(name())).find((s) => s.name !== 'rt-s1');
    expect(auto?.name).toMatch(/^snap\d+$/);
    // No expiry reads back as the zero time.
    expect(Date.parse(auto!.expires_at ?? '0001-01-01T00:00:00Z')).toBeLessThan(0);
    await (await c.deleteSnapshot(name(), auto!.name)).wait({ timeoutMs: 30_000 });
  });

  it('a snapshot can be renamed and its expiry changed', async () => {
    const c = target().client;
    await (await c.renameSnapshot(name(), 'rt-s1', 'rt-s2')).wait({ timeoutMs: 30_000 });
    const later = new Date(Date.now() + 7_200_000);
    later.setMilliseconds(0);
    await c.setSnapshotExpiry(name(), 'rt-s2', later);
    const { value } = await c.getSnapshot(name(), 'rt-s2');
    expect(Date.parse(value.expires_at!)).toBe(later.getTime());
    await expect(c.getSnapshot(name(), 'rt-s1')).rejects.toMatchObject({ code: 'API_NOT_FOUND', status: 404 });
  });

  it('an instance can be restored from a snapshot', async () => {
    const c = target().client;
    await c.patchInstance(name(), { config: { 'user.rt-after-snapshot': '1' } });
    await (await c.restoreSnapshot(name(), 'rt-s2')).wait({ timeoutMs: 30_000 });
    expect((await c.getInstance(name())).value.config).not.toHaveProperty('user.rt-after-snapshot');
  });

  it('a deleted snapshot is gone from the list', async () => {
    const c = target().client;
    await (await c.deleteSnapshot(name(), 'rt-s2')).wait({ timeoutMs: 30_000 });
    expect(await c.listSnapshots(name())).toEqual([]);
  });
});
