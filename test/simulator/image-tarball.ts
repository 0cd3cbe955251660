import { gzipSync } from 'node:zlib';

/**
 * A gzipped tar archive of the given files (ustar headers, mode 0644, a fixed mtime), the shape of
 * an image tarball: `{ 'metadata.yaml': '…' }` for a split image's metadata, plus `rootfs/…` entries
 * for a unified one.
 */
export function imageTarball(files: Record<string, string>, opts: { gzip?: boolean } = {}): Buffer {
  const blocks: Buffer[] = [];
  for (const [name, content] of Object.entries(files)) {
    const data = Buffer.from(content);
    const header = Buffer.alloc(512);
    const field = (at: number, len: number, value: string) => header.write(value.padEnd(len, '\0').slice(0, len), at, 'latin1');
    field(0, 100, name);
    field(100, 8, '0000644');
    field(108, 8, '0000000');
    field(116, 8, '0000000');
    field(124, 12, data.length.toString(8).padStart(11, '0'));
    field(136, 12, (1_700_000_000).toString(8).padStart(11, '0'));
    field(148, 8, '        ');
    field(156, 1, '0');
    field(257, 6, 'ustar');
    field(263, 2, '00');
    const sum = header.reduce((a, b) => a + b, 0);
    field(148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  const tar = Buffer.concat([...blocks, Buffer.alloc(1024)]);
  return opts.gzip === false ? tar : gzipSync(tar);
}
