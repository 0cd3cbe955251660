import { gzipSync } from 'node:zlib';
import type { InMemoryFs } from 'just-bash';
import { packTar, type ParsedTarEntryWithData, type TarHeader } from 'modern-tar';
import { GuestFs } from './guest-fs.js';

/** What the kernel fills at run time: an image holds these directories empty. */
const kernelDirs = ['/proc/', '/sys/', '/dev/'];

/** The PAX record on `metadata.yaml` that marks a tarball the simulator packed (its value tells one publish from another). */
const publishedBy = 'REFLEX.publish';

/**
 * A unified image tarball as the daemon publishes one: `metadata.yaml`, then the root filesystem
 * under `rootfs/` (each entry with its mode, owner and mtime), gzipped. `tag` goes into a PAX
 * record only: two publishes of the same files are still two tarballs.
 */
export async function imageTarball(metadataYaml: string, fs: GuestFs, created: Date, tag: string): Promise<Buffer> {
  const entries: { header: TarHeader; body?: Uint8Array }[] = [];
  const yaml = Buffer.from(metadataYaml);
  entries.push({ header: { name: 'metadata.yaml', size: yaml.length, mode: 0o644, mtime: created, pax: { [publishedBy]: tag } }, body: yaml });
  const paths = fs.memory
    .getAllPaths()
    .filter((p) => !kernelDirs.some((d) => p.startsWith(d)))
    .sort();
  for (const path of paths) {
    const entry = await fs.entry(path);
    if (!entry) continue;
    const name = path === '/' ? 'rootfs' : `rootfs${path}`;
    const common = { mode: entry.mode, mtime: entry.mtime, uid: entry.uid, gid: entry.gid };
    if (entry.type === 'directory') entries.push({ header: { name, size: 0, type: 'directory', ...common } });
    else if (entry.type === 'symlink')
      entries.push({ header: { name, size: 0, type: 'symlink', linkname: (await fs.read(path)).toString('utf8'), ...common } });
    else {
      // A file of several names is packed once, its other names as hard links to the first (as LXD's tar writer does).
      const first = fs.linkedNames(path).find((other) => other < path && paths.includes(other));
      if (first !== undefined) {
        entries.push({ header: { name, size: 0, type: 'link', linkname: `rootfs${first}`, ...common } });
        continue;
      }
      const body = await fs.read(path);
      entries.push({ header: { name, size: body.length, type: 'file', ...common }, body });
    }
  }
  return gzipSync(await packTar(entries));
}

/**
 * The root filesystem under `rootfs/` of a unified image tarball the simulator packed (its export,
 * uploaded again; `entries` as image-tarball.ts opened it), as the daemon unpacks it for an instance
 * made from the image; undefined for any other tarball. The rootfs of an image made elsewhere holds
 * programs the simulator cannot run (its guests run the simulator's own for the image's `os`), so it
 * is not unpacked. `memory` makes the empty filesystem, only when there is something to put in it.
 */
export async function rootfsOf(entries: readonly ParsedTarEntryWithData[], memory: () => Promise<InMemoryFs>): Promise<GuestFs | undefined> {
  const pathOf = (name: string): string | undefined => {
    const m = /^(?:\.\/)?rootfs(\/.*)?$/.exec(name.replace(/\/+$/, ''));
    return m ? (m[1] ?? '/') : undefined;
  };
  if (entries[0]?.header.name !== 'metadata.yaml' || entries[0].header.pax?.[publishedBy] === undefined) return undefined;
  const rooted = entries.filter((e) => pathOf(e.header.name) !== undefined);
  const fs = new GuestFs(await memory());
  const times: [string, Date][] = [];
  for (const { header, data } of rooted) {
    const path = pathOf(header.name)!;
    const mode = (header.mode ?? 0o644) & 0o7777;
    const mtime = header.mtime ?? new Date(0);
    const parent = path.slice(0, path.lastIndexOf('/')) || '/';
    if (path !== '/') fs.memory.mkdirSync(parent, { recursive: true });
    if (header.type === 'directory') {
      if (path !== '/') fs.memory.mkdirSync(path, { recursive: true });
      await fs.memory.chmod(path, mode);
      times.push([path, mtime]);
    } else if (header.type === 'symlink') await fs.memory.symlink(header.linkname ?? '', path);
    else if (header.type === 'link') {
      // Another name of a file unpacked before it (a hard link): one file, as the publish found it.
      const first = pathOf(header.linkname ?? '');
      if (first !== undefined && (await fs.entry(first))) await fs.link(first, path);
      continue;
    } else if (header.type === 'file') fs.memory.writeFileSync(path, data ?? new Uint8Array(), undefined, { mode, mtime });
    else continue;
    if (header.uid || header.gid) await fs.setMeta(path, { uid: header.uid ?? 0, gid: header.gid ?? 0, mode });
  }
  // Directories last: adding their entries moved their mtimes.
  for (const [path, mtime] of times) await fs.memory.utimes(path, mtime, mtime);
  return fs;
}
