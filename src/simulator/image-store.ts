import { createHash } from 'node:crypto';
import { SimHttpError } from './envelope.js';

/** An image's bytes: one unified tarball, or the metadata and rootfs of a split image. */
export type ImageFiles = { kind: 'unified'; data: Buffer } | { kind: 'split'; metadata: Buffer; rootfs: Buffer };

/** An image: its API object (without aliases, which ImageAliases holds) and its files. */
interface StoredImage {
  object: Record<string, unknown>;
  files: ImageFiles;
}

/**
 * The images of the simulator: the built-in ones, and those clients upload (`lxc image import`,
 * raw or split) or publish from an instance or snapshot. The fingerprint of an uploaded image is
 * the SHA-256 of its files, as the daemon computes it, so a client can check it.
 */
export class ImageStore {
  private readonly images = new Map<string, StoredImage>();

  constructor(seed: readonly Record<string, unknown>[]) {
    for (const object of seed) {
      // Built-in images have no real tarball; their export is a stand-in of the right kind.
      const data = Buffer.from(`reflex-sim image ${String(object.fingerprint)}\n`);
      this.images.set(String(object.fingerprint), { object, files: { kind: 'unified', data } });
    }
  }

  /** Every image object, in creation order. */
  list(): Record<string, unknown>[] {
    return [...this.images.values()].map((i) => i.object);
  }

  /** The image a fingerprint (or a unique prefix) names, or 404 "Image not found". */
  find(prefix: string): Record<string, unknown> {
    return this.stored(prefix).object;
  }

  /** The files of an image, for its export. */
  files(prefix: string): ImageFiles {
    return this.stored(prefix).files;
  }

  /** Whether a fingerprint (or a unique prefix) names an image. */
  matches(prefix: string): boolean {
    return prefix !== '' && [...this.images.keys()].filter((fp) => fp.startsWith(prefix)).length === 1;
  }

  /** Whether an image with this exact fingerprint exists. */
  has(fingerprint: string): boolean {
    return this.images.has(fingerprint);
  }

  /** Adds an image; the object's `fingerprint` is the key. */
  add(object: Record<string, unknown>, files: ImageFiles): void {
    this.images.set(String(object.fingerprint), { object, files });
  }

  /** Deletes an image, or 404. */
  remove(prefix: string): Record<string, unknown> {
    const img = this.find(prefix);
    this.images.delete(String(img.fingerprint));
    return img;
  }

  private stored(prefix: string): StoredImage {
    const hits = prefix === '' ? [] : [...this.images.entries()].filter(([fp]) => fp.startsWith(prefix));
    if (hits.length !== 1) throw new SimHttpError(404, 'Image not found');
    return hits[0]![1];
  }
}

/** The fingerprint the daemon gives image files: SHA-256 over the metadata tarball, then the rootfs. */
export function fingerprintOf(files: ImageFiles): string {
  const h = createHash('sha256');
  if (files.kind === 'unified') h.update(files.data);
  else h.update(files.metadata).update(files.rootfs);
  return h.digest('hex');
}
