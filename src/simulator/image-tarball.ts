import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';
import { unpackTar, type ParsedTarEntryWithData } from 'modern-tar';
import type * as Yaml from 'yaml';

/** What an image's `metadata.yaml` says, as far as the image object shows it. */
export interface ImageMetadata {
  architecture?: string;
  /** `creation_date`, seconds since the epoch. */
  creationDate?: number;
  properties: Record<string, string>;
}

/**
 * An uploaded image tarball (a unified image, or the metadata part of a split one) opened once:
 * what its `metadata.yaml` says and, for gzip and plain tar, its entries (what an instance made
 * from it starts from, image-rootfs.ts); or the daemon's refusal.
 */
export type OpenedImage = { error: string } | { metadata: ImageMetadata; entries: ParsedTarEntryWithData[] };

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
 * Opens an uploaded image tarball as LXD 5.0.2 reads it before it stores the image, failing with
 * the daemon's words: bytes of no known compression are "Unsupported compression", a tarball
 * without `metadata.yaml` is "Metadata tarball is missing metadata.yaml". Gzip and plain tar are
 * read; the other compressions (bzip2, xz, lzma, zstd, squashfs) are recognised but not unpacked,
 * so their metadata reads as empty and they have no entries (Node has no decoder for most of them).
 */
export async function openImageTarball(bytes: Buffer): Promise<OpenedImage> {
  const kind = magics.find((m) => m.bytes.every((b, i) => bytes[(m.at ?? 0) + i] === b))?.name;
  if (!kind) return { error: 'Unsupported compression' };
  if (kind !== 'gzip' && kind !== 'tar') return { metadata: { properties: {} }, entries: [] };
  let tar: Buffer;
  try {
    tar = kind === 'gzip' ? gunzipSync(bytes) : bytes;
  } catch (err) {
    return { error: (err as Error).message };
  }
  // A tar cut short or corrupt reads as far as it goes: its metadata.yaml is missing if not in that part.
  const entries = await unpackTar(tar).catch(() => [] as ParsedTarEntryWithData[]);
  const yaml = entries.find((e) => (e.header.type ?? 'file') === 'file' && e.header.name.replace(/^\.\//, '') === 'metadata.yaml');
  if (!yaml) return { error: 'Metadata tarball is missing metadata.yaml' };
  let meta: Record<string, unknown>;
  try {
    const text = Buffer.from(yaml.data ?? new Uint8Array()).toString('utf8');
    const parsed: unknown = (createRequire(import.meta.url)('yaml') as typeof Yaml).parse(text, { maxAliasCount: 100 });
    meta = parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch (err) {
    return { error: `Could not parse metadata.yaml: ${(err as Error).message}` };
  }
  const properties = meta.properties !== null && typeof meta.properties === 'object' ? (meta.properties as Record<string, unknown>) : {};
  return {
    metadata: {
      architecture: typeof meta.architecture === 'string' ? meta.architecture : undefined,
      creationDate: Number.isSafeInteger(meta.creation_date) ? (meta.creation_date as number) : undefined,
      properties: Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, String(v)])),
    },
    entries,
  };
}
