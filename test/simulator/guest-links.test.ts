import { gunzipSync } from 'node:zlib';
import { InMemoryFs } from 'just-bash';
import { unpackTar } from 'modern-tar';
import { describe, expect, it } from 'vitest';
import { statusOf } from '../../src/simulator/guest/file-status.js';
import { GuestFs } from '../../src/simulator/guest/guest-fs.js';
import { imageTarball, rootfsOf } from '../../src/simulator/guest/image-rootfs.js';

/**
 * Hard links and the umask where the lxc differential cannot reach them (its busybox lines hold the
 * shell's side to LXD 5.0.2): a copy of the filesystem (snapshot, `lxc copy`) keeps a file's names
 * together, and the files API writing to one name shows in the others.
 */
const root = { uid: 0, gid: 0 };

describe('a guest file with more than one name', () => {
  it('keeps its names together in a copy of the filesystem, and a files-API write to one shows in the other', async () => {
    const fs = new GuestFs(new InMemoryFs());
    const shell = fs.as(root);
    await shell.writeFile('/a', 'one\n');
    await shell.link('/a', '/b');
    const copy = await fs.clone();
    await copy.write('/b', Buffer.from('two\n'), { ...root, mode: 0o644 });
    expect((await copy.read('/a')).toString()).toBe('two\n');
    expect((await statusOf(copy, '/a', false))?.nlink).toBe(2);
    // The original is untouched by the copy's write.
    expect((await fs.read('/a')).toString()).toBe('one\n');
    await copy.remove('/b');
    expect((await statusOf(copy, '/a', false))?.nlink).toBe(1);
    expect((await statusOf(fs, '/a', false))?.nlink).toBe(2);
  });

  it('is packed once in a published image, its other name a hard link, and an instance made from the image has one file of two names', async () => {
    const fs = new GuestFs(new InMemoryFs());
    const shell = fs.as(root);
    await shell.mkdir('/root', { recursive: true });
    await shell.writeFile('/root/one', 'one\n');
    await shell.link('/root/one', '/root/two');
    const tarball = await imageTarball('architecture: x86_64\n', fs, new Date(0), 'links');
    const entries = await unpackTar(gunzipSync(tarball));
    expect(
      entries.filter((e) => e.header.name.startsWith('rootfs/root/')).map((e) => [e.header.name, e.header.type, e.header.linkname, e.header.size]),
    ).toEqual([
      ['rootfs/root/one', 'file', '', 4],
      ['rootfs/root/two', 'link', 'rootfs/root/one', 0],
    ]);
    const made = (await rootfsOf(entries, async () => new InMemoryFs()))!;
    expect((await statusOf(made, '/root/two', false))?.nlink).toBe(2);
    await made.write('/root/two', Buffer.from('two\n'), { ...root, mode: 0o644 });
    expect((await made.read('/root/one')).toString()).toBe('two\n');
  });

  it('keeps its inode when written over or appended to, and gets a new one when a program renames a new file over it', async () => {
    const fs = new GuestFs(new InMemoryFs());
    const ino = async (p: string) => (await statusOf(fs, p, false))?.ino;
    await fs.write('/f', Buffer.from('a\n'), { ...root, mode: 0o644 });
    const first = await ino('/f');
    await fs.write('/f', Buffer.from('b\n'), { ...root, mode: 0o644 });
    await fs.write('/f', Buffer.from('c\n'), { ...root, mode: 0o644, append: true });
    expect(await ino('/f')).toBe(first);
    await fs.separate('/f');
    expect(await ino('/f')).not.toBe(first);
    expect((await fs.read('/f')).toString()).toBe('b\nc\n');
  });

  it('is made under the umask the shell gives, through the filesystem a command sees', async () => {
    const fs = new GuestFs(new InMemoryFs());
    const shell = fs.as(root, () => 0o077);
    await shell.writeFile('/f', 'x');
    await shell.mkdir('/d/e', { recursive: true });
    expect((await fs.entry('/f'))?.mode).toBe(0o600);
    expect((await fs.entry('/d'))?.mode).toBe(0o700);
    expect((await fs.entry('/d/e'))?.mode).toBe(0o700);
  });
});
