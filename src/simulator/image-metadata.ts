import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';
import type * as Yaml from 'yaml';

/** What an image's `metadata.yaml` says, as far as the image object shows it. */
export interface ImageMetadata {
  architecture?: string;
  /** `creation_date`, seconds since the epoch. */
  creationDate?: number;
  properties: Record<string, string>;
}

/** The compressions the daemon recognises by their first bytes (`shared.DetectCompression`); tar is "ustar" at 257. */
const magics: { name: string; bytes: number[]; at?: number }[] = [
  { name: 'gzip', bytes: [0x1f, 0x8b] },
  { name: 'bzip2', bytes: [0x42, 0x5a, 0x68] },
  { name: 'xz', bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00] },
  { name: 'lzma', bytes: [0x5d, 0x00, 0x00] },
  { name: 'zstd', bytes: [0x28, 0xb5, 0x2f, 0xfd] },
  { name: 'squashfs', bytes: [0x68, 0x73, 0x71, 0x73] },
  { name: 'tar', bytes: [0x75, 0x73, 0x74, 0x61, 0x72], at: 257 },
];

/**
 * Reads the metadata of an uploaded image tarball (a unified image, or the metadata part of a
 * split one) as LXD 5.0.2 does before it stores the image, failing with the daemon's words: bytes
 * of no known compression are "Unsupported compression", a tarball without `metadata.yaml` is
 * "Metadata tarball is missing metadata.yaml". Gzip and plain tar are read; the other compressions
 * (bzip2, xz, lzma, zstd, squashfs) are recognised but not unpacked, so their metadata reads as
 * empty (Node has no decoder for most of them).
 */
export function readImageMetadata(bytes: Buffer): ImageMetadata | { error: string } {
  const kind = magics.find((m) => m.bytes.every((b, i) => bytes[(m.at ?? 0) + i] === b))?.name;
  if (!kind) return { error: 'Unsupported compression' };
  if (kind !== 'gzip' && kind !== 'tar') return { properties: {} };
  let tar: Buffer;
  try {
    tar = kind === 'gzip' ? gunzipSync(bytes) : bytes;
  } catch (err) {
    return { error: (err as Error).message };
  }
  const yamlText = tarEntry(tar, 'metadata.yaml');
  if (yamlText === undefined) return { error: 'Metadata tarball is missing metadata.yaml' };
  let meta: Record<string, unknown>;
  try {
    const parsed: unknown = (createRequire(import.meta.url)('yaml') as typeof Yaml).parse(yamlText.toString('utf8'), { maxAliasCount: 100 });
    meta = parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch (err) {
    return { error: `Could not parse metadata.yaml: ${(err as Error).message}` };
  }
  const properties = meta.properties !== null && typeof meta.properties === 'object' ? (meta.properties as Record<string, unknown>) : {};
  return {
    architecture: typeof meta.architecture === 'string' ? meta.architecture : undefined,
    creationDate: Number.isSafeInteger(meta.creation_date) ? (meta.creation_date as number) : undefined,
    properties: Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, String(v)])),
  };
}

/** The bytes of one regular file of a tar archive (`name` or `./name`), or undefined. */
function tarEntry(tar: Buffer, name: string): Buffer | undefined {
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) return undefined;
    const text = (from: number, to: number): string => header.subarray(from, to).toString('utf8').replace(/\0.*$/s, '');
    const prefix = text(345, 500);
    const path = `${prefix ? `${prefix}/` : ''}${text(0, 100)}`.replace(/^\.\//, '');
    const size = Number.parseInt(text(124, 136).trim() || '0', 8);
    const type = text(156, 157);
    if (path === name && (type === '' || type === '0')) return tar.subarray(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return undefined;
}
