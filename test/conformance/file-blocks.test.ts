import { expect, it } from 'vitest';
import { conformance, launchPerTest, printing, type ConformanceTarget } from './targets.js';

/**
 * A file's blocks (`stat %b`) across the copies of an instance's filesystem, on the `dir` pools of
 * the beds and in the simulator. The beds copy with `rsync --sparse --checksum`: a snapshot and a
 * copy make a hole of each block of zeros, and a restore leaves a file whose bytes did not change
 * as it is (its blocks of zeros too) and writes the others anew from the snapshot, holed.
 */
const make =
  'cd /root && rm -f zeros holed mixed; dd if=/dev/zero of=zeros bs=4k count=10 2>/dev/null; truncate -s 1M holed; printf x >> holed; ' +
  "printf 'abc\\0\\0\\0' > mixed; head -c 5000 /dev/zero >> mixed";
const show = 'cd /root && stat -c "%n %s %b" zeros holed mixed && md5sum mixed';
const recorded = 'zeros 40960 80\nholed 1048577 8\nmixed 5006 16\n';

/** Runs `script` in `name`; one that prints nothing is not rerun for a lost stream ({@link printing}). */
async function sh(t: ConformanceTarget, name: string, script: string): Promise<string> {
  const run = async () => (await t.client.exec(name, { command: ['sh', '-c', script] })).wait({ timeoutMs: 20_000 });
  const res = script === show ? await printing(t, run) : await run();
  expect(res.exitCode, res.stderr).toBe(0);
  return res.stdout;
}

await conformance("a file's blocks through a snapshot, a restore and a copy", (target) => {
  const launch = launchPerTest(target);

  it('a restore keeps an unchanged file as it is and writes a removed one back holed; a copy from the snapshot is holed, with the same bytes', async () => {
    const t = target();
    const name = await launch();
    const copy = `${name}-c`;
    try {
      await sh(t, name, make);
      const before = await sh(t, name, show);
      expect(before.startsWith(recorded), before).toBe(true);
      const holed = before.replace(recorded, 'zeros 40960 0\nholed 1048577 8\nmixed 5006 8\n');
      await (await t.client.createSnapshot(name, { name: 'rt-blocks' })).wait({ timeoutMs: 30_000 });
      await (await t.client.restoreSnapshot(name, 'rt-blocks')).wait({ timeoutMs: 60_000 });
      expect(await sh(t, name, show)).toBe(before);
      await sh(t, name, 'rm /root/zeros /root/holed /root/mixed');
      await (await t.client.restoreSnapshot(name, 'rt-blocks')).wait({ timeoutMs: 60_000 });
      expect(await sh(t, name, show)).toBe(holed);

      // As `lxc copy` does: LXD 5.0.2 gives a copy made without profiles none (and then no root disk).
      const created = await t.client.transport.request('POST', '/1.0/instances', {
        body: { name: copy, profiles: ['default'], source: { type: 'copy', source: `${name}/rt-blocks` } },
      });
      const opId = String(created.envelope.operation).split('/').pop()!;
      await t.client.transport.request('GET', `/1.0/operations/${opId}/wait?timeout=60`);
      await (await t.client.changeState(copy, { action: 'start' })).wait({ timeoutMs: 60_000 });
      expect(await sh(t, copy, show)).toBe(holed);
    } finally {
      await t.remove(copy);
    }
  });
});
