/** The beds' filesystem's block (ext4's 4096 bytes): what a file is given on disk, a whole block at a time. */
export const blockSize = 4096;

/** Blocks [start, end) of a file, in {@link blockSize} units. */
type Extent = [start: number, end: number];

interface Sparse {
  /** The file's size when its blocks were last recorded: another size means it was written since by a path that fills it. */
  size: number;
  /** The blocks given, sorted and apart. */
  extents: Extent[];
}

/** The blocks that hold bytes [start, end) of a file. */
const blocksOver = (start: number, end: number): Extent => [Math.floor(start / blockSize), Math.ceil(end / blockSize)];

/** Blocks [0, n): every block of a file of `size` bytes, as a write of its whole content gives them. */
const wholeFile = (size: number): Extent[] => (size > 0 ? [blocksOver(0, size)] : []);

function union(extents: Extent[], [start, end]: Extent): Extent[] {
  if (end <= start) return extents;
  const out: Extent[] = [];
  let merged: Extent = [start, end];
  for (const e of extents) {
    if (e[1] < merged[0]) out.push(e);
    else if (e[0] > merged[1]) {
      out.push(merged);
      merged = e;
    } else merged = [Math.min(e[0], merged[0]), Math.max(e[1], merged[1])];
  }
  out.push(merged);
  return out;
}

/**
 * The blocks each file with holes is given, per inode, as ext4 gives them on the beds: a write gives
 * the blocks it covers, ftruncate(2) growing a file gives none (the new bytes read as zeros from a
 * hole) and shrinking it takes back the blocks past the new end, fallocate(2) gives the blocks of its
 * range. A file with no record here has every block of its size: what a write of its whole content
 * (a redirection, `cp`, `cat >`) leaves.
 */
export class FileBlocks {
  private readonly sparse = new Map<string, Sparse>();

  /** stat(2)'s `st_blocks` (512-byte units) for `inode` of `size` bytes. */
  count(inode: string | undefined, size: number): number {
    const kept = inode === undefined ? undefined : this.sparse.get(inode);
    const extents = kept?.size === size ? kept.extents : wholeFile(size);
    return extents.reduce((n, [start, end]) => n + (end - start), 0) * (blockSize / 512);
  }

  /** The file's content was written whole: every block of its size. */
  filled(inode: string): void {
    this.sparse.delete(inode);
  }

  /** ftruncate(2) from `before` bytes to `after`: the blocks from the new end's on are taken back, none given. */
  resized(inode: string, before: number, after: number): void {
    const kept = this.extentsOf(inode, before);
    const end = Math.ceil(after / blockSize);
    this.keep(
      inode,
      after,
      kept.flatMap(([s, e]): Extent[] => (s >= end ? [] : [[s, Math.min(e, end)]])),
    );
  }

  /** Bytes [start, end) were written (pwrite(2)) or allocated (fallocate(2)) in a file of `before` bytes, now of `after`. */
  given(inode: string, before: number, start: number, end: number, after: number): void {
    this.keep(inode, after, union(this.extentsOf(inode, before), blocksOver(start, end)));
  }

  /** `content` was written with a hole for each block of zeros (`rsync --sparse`). */
  holed(inode: string, content: Uint8Array): void {
    const extents: Extent[] = [];
    for (let block = 0; block * blockSize < content.length; block++) {
      const start = block * blockSize;
      if (content.subarray(start, start + blockSize).every((byte) => byte === 0)) continue;
      const last = extents.at(-1);
      if (last?.[1] === block) last[1] = block + 1;
      else extents.push([block, block + 1]);
    }
    this.keep(inode, content.length, extents);
  }

  /** Gives each inode `to` of `into` (a copy of the filesystem, or one holding the same bytes) the blocks its inode `from` has here. */
  copyTo(into: FileBlocks, inodes: Iterable<[from: string, to: string]>): void {
    for (const [from, to] of inodes) {
      const kept = this.sparse.get(from);
      if (kept) into.sparse.set(to, { size: kept.size, extents: kept.extents.map(([s, e]): Extent => [s, e]) });
      else into.sparse.delete(to);
    }
  }

  private extentsOf(inode: string, size: number): Extent[] {
    const kept = this.sparse.get(inode);
    return kept?.size === size ? kept.extents : wholeFile(size);
  }

  private keep(inode: string, size: number, extents: Extent[]): void {
    const whole = wholeFile(size);
    const full = extents.length === whole.length && extents.every(([s, e], i) => s === whole[i]![0] && e === whole[i]![1]);
    if (full) this.sparse.delete(inode);
    else this.sparse.set(inode, { size, extents });
  }
}
