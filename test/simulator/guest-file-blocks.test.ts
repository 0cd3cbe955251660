import { InMemoryFs } from 'just-bash';
import { describe, expect, it } from 'vitest';
import { statusOf } from '../../src/simulator/guest/file-status.js';
import { GuestFs } from '../../src/simulator/guest/guest-fs.js';

/**
 * A file's blocks across the copies of a filesystem, where the conformance cases (one instance's
 * shell) cannot reach, as recorded on LXD 5.0.2 and Incus 6.0.4 on their `dir` pools: a snapshot
 * and a restore keep a file's holes and blocks as they are, a copy to a new instance (`rsync
 * --sparse`) makes a hole of each block of zeros, and an instance launched from a published image
 * has every block of its files (the image's tarball unpacked).
 */
const root = { uid: 0, gid: 0, mode: 0o644 };

async function blocksOf(fs: GuestFs): Promise<Record<string, number | undefined>> {
  const out: Record<string, number | undefined> = {};
  for (const name of ['zeros', 'holed', 'mixed']) out[name] = (await statusOf(fs, `/root/${name}`, false))?.blocks;
  return out;
}

describe("a guest file's blocks in a copy of its filesystem", () => {
  it('are kept by a snapshot, holed where zeros by a copy, and all written by an image', async () => {
    const fs = new GuestFs(new InMemoryFs());
    await fs.memory.mkdir('/root');
    // dd if=/dev/zero of=zeros bs=4k count=10; truncate -s 1M holed; printf x >> holed; printf 'abc\0\0\0' > mixed; head -c 5000 /dev/zero >> mixed
    await fs.write('/root/zeros', Buffer.alloc(40960), root);
    await fs.resize('/root/holed', 1 << 20, root);
    await fs.write('/root/holed', Buffer.from('x'), { ...root, append: true });
    await fs.write('/root/mixed', Buffer.concat([Buffer.from('abc'), Buffer.alloc(5003)]), root);
    const recorded = { zeros: 80, holed: 8, mixed: 16 };
    expect(await blocksOf(fs)).toEqual(recorded);

    expect(await blocksOf(await fs.clone())).toEqual(recorded);
    expect(await blocksOf(await fs.clone('sparse'))).toEqual({ zeros: 0, holed: 8, mixed: 8 });
    expect(await blocksOf(await fs.clone('written'))).toEqual({ zeros: 80, holed: 2056, mixed: 16 });
    // The copies' content is the same.
    expect((await (await fs.clone('sparse')).read('/root/mixed')).equals(await fs.read('/root/mixed'))).toBe(true);
  });
});
