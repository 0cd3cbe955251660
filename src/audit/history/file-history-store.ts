import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { z } from 'zod';
import { ReflexError } from '../../errors/reflex-error.js';
import { compareIds, type VerifyResult } from '../audit-verifier.js';
import { canonicalJson } from '../canonical-json.js';
import { gzipLines } from './gzip-lines.js';
import type { HistoryEntry, HistoryHead, HistoryRange, HistoryStore } from './history-store.js';
import { verifySegments } from './segment-verifier.js';

/**
 * A segment's checkpoint in the manifest: where its chain starts and ends, how many records it
 * holds and how many bytes of its file are committed (a crash can leave more, never less).
 */
const segmentSchema = z.object({
  file: z.string().regex(/^audit-[0-9]+-[0-9]+\.ndjson\.gz$/),
  firstId: z.string(),
  firstPrev: z.string(),
  lastId: z.string(),
  lastHash: z.string(),
  count: z.number().int().min(1),
  bytes: z.number().int().min(1),
});
type Segment = z.infer<typeof segmentSchema>;

const manifestSchema = z.object({ version: z.literal(1), segments: z.array(segmentSchema) });
type Manifest = z.infer<typeof manifestSchema>;

const MANIFEST = 'manifest.json';

/** Options of {@link FileHistoryStore}. */
export interface FileHistoryStoreOptions {
  /** A segment that reached this many compressed bytes is closed and the next batch starts a new one. Default 16 MiB. */
  segmentMaxBytes?: number;
  /** Compressed bytes kept at most: when a segment is started, the oldest others are deleted until the store fits. Default and 0: no limit. */
  maxBytes?: number;
  /** When a segment is started, the others whose newest record is older than this are deleted. Default and 0: no limit. */
  maxAgeMs?: number;
  /** The clock of `maxAgeMs` (tests). Default Date.now. */
  now?: () => number;
}

/**
 * The embedded history store: gzip-compressed NDJSON segments in one folder, each line a record as
 * `reflex audit export` writes it (the record with its `id`, `prev` and `hash`), so a segment can be
 * read with `zcat` and checked with `reflex audit verify --file`. Each batch is one gzip member
 * appended to the newest segment and fsync'ed; `manifest.json` holds one checkpoint per segment
 * (first id, its prev, last id, last hash, count, committed bytes) and is replaced atomically (a
 * temporary file, fsync, rename, fsync of the folder) after each batch. Bytes past a segment's
 * checkpoint (a crash between the append and the manifest) are ignored and overwritten.
 * One writer at a time (the shipper's lock); readers may run beside it.
 */
export class FileHistoryStore implements HistoryStore {
  readonly kind = 'files';
  private readonly segmentMaxBytes: number;

  constructor(
    readonly dir: string,
    private readonly opts: FileHistoryStoreOptions = {},
  ) {
    this.segmentMaxBytes = opts.segmentMaxBytes ?? 16 * 1024 * 1024;
  }

  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await this.manifest();
  }

  async head(): Promise<HistoryHead | undefined> {
    const last = (await this.manifest()).segments.at(-1);
    return last && { id: last.lastId, hash: last.lastHash };
  }

  async append(entries: readonly HistoryEntry[]): Promise<void> {
    if (!entries.length) return;
    const manifest = await this.manifest();
    const segments = [...manifest.segments];
    const last = segments.at(-1);
    const first = entries[0]!;
    if (last && (first.prev !== last.lastHash || compareIds(first.id, last.lastId) <= 0)) {
      throw new ReflexError('HISTORY_STORE_FAILED', `history batch starting at ${first.id} does not follow the store's head ${last.lastId}`);
    }
    const member = gzipSync(entries.map((e) => `${exportLine(e)}\n`).join(''));
    const tail = entries.at(-1)!;
    let segment: Segment;
    if (last && last.bytes < this.segmentMaxBytes) {
      await this.write(last.file, last.bytes, member);
      segment = { ...last, lastId: tail.id, lastHash: tail.hash, count: last.count + entries.length, bytes: last.bytes + member.length };
      segments[segments.length - 1] = segment;
    } else {
      const file = `audit-${first.id}.ndjson.gz`;
      await this.write(file, 0, member);
      segment = { file, firstId: first.id, firstPrev: first.prev, lastId: tail.id, lastHash: tail.hash, count: entries.length, bytes: member.length };
      segments.push(segment);
    }
    const dropped = segment.file === last?.file ? [] : this.overLimits(segments);
    await this.saveManifest({ version: 1, segments: segments.slice(dropped.length) });
    // Deleted once the manifest no longer names them: a crash in between leaves a stray file, never a missing segment.
    for (const s of dropped) await rm(join(this.dir, s.file), { force: true });
  }

  /** The oldest segments past `maxBytes` or `maxAgeMs`, never the newest: the chain's tail stays. */
  private overLimits(segments: readonly Segment[]): Segment[] {
    const { maxBytes = 0, maxAgeMs = 0 } = this.opts;
    const oldest = maxAgeMs > 0 ? (this.opts.now ?? Date.now)() - maxAgeMs : -Infinity;
    let bytes = segments.reduce((n, s) => n + s.bytes, 0);
    const dropped: Segment[] = [];
    for (const s of segments.slice(0, -1)) {
      if (!((maxBytes > 0 && bytes > maxBytes) || Number(s.lastId.split('-')[0]) < oldest)) break;
      dropped.push(s);
      bytes -= s.bytes;
    }
    return dropped;
  }

  async *entries(range: HistoryRange): AsyncGenerator<HistoryEntry> {
    for (const s of (await this.manifest()).segments) {
      if (range.end !== '+' && compareIds(s.firstId, range.end) > 0) return;
      if (range.start !== '-' && compareIds(s.lastId, range.start) < 0) continue;
      for await (const e of this.segmentEntries(s)) {
        if (range.start !== '-' && compareIds(e.id, range.start) < 0) continue;
        if (range.end !== '+' && compareIds(e.id, range.end) > 0) return;
        yield e;
      }
    }
  }

  /** Reads every segment whole, as lines, so a record edited by hand is named where it is (segment-verifier.ts). */
  async verify(): Promise<VerifyResult> {
    return verifySegments(this.dir, (await this.manifest()).segments);
  }

  async close(): Promise<void> {}

  /**
   * A segment's records, streamed (a segment decompresses to about ten times its size): its committed
   * bytes only. A segment that cannot be read so was edited, cut or corrupted: no retry helps, and
   * `reflex audit verify` names where.
   */
  private async *segmentEntries(s: Segment): AsyncGenerator<HistoryEntry> {
    const path = join(this.dir, s.file);
    const damaged = (why: string, cause?: unknown) =>
      new ReflexError('HISTORY_STORE_FAILED', `history segment ${s.file} ${why}: it was edited, cut or corrupted (reflex audit verify names where)`, {
        cause,
        retryable: false,
      });
    let line = 0;
    try {
      const size = (await stat(path)).size;
      if (size < s.bytes) throw damaged(`has ${size} bytes of the ${s.bytes} committed`);
      for await (const l of gzipLines(path, { bytes: s.bytes })) {
        line = l.line;
        if (l.text === undefined) throw damaged(`line ${line} is longer than any record`);
        if (!l.text) continue;
        const { id, prev, hash, ...record } = JSON.parse(l.text) as Record<string, unknown>;
        yield { id: String(id), prev: typeof prev === 'string' ? prev : '', hash: typeof hash === 'string' ? hash : '', json: canonicalJson(record) };
      }
    } catch (err) {
      if (err instanceof ReflexError) throw err;
      throw damaged(`cannot be read ${line ? `past line ${line}` : 'at all'} (${(err as Error).message})`, err);
    }
  }

  private async write(file: string, at: number, data: Buffer): Promise<void> {
    const path = join(this.dir, file);
    const handle = await open(path, at === 0 ? 'w' : 'r+');
    try {
      await handle.truncate(at);
      await handle.write(data, 0, data.length, at);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (at === 0) await this.syncDir();
  }

  private async manifest(): Promise<Manifest> {
    let text: string;
    try {
      text = await readFile(join(this.dir, MANIFEST), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && (await stat(this.dir)).isDirectory()) return { version: 1, segments: [] };
      throw err;
    }
    return manifestSchema.parse(JSON.parse(text));
  }

  private async saveManifest(m: Manifest): Promise<void> {
    const tmp = join(this.dir, `${MANIFEST}.tmp`);
    const handle = await open(tmp, 'w');
    try {
      await handle.writeFile(`${JSON.stringify(m, null, 1)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, join(this.dir, MANIFEST));
    await this.syncDir();
  }

  private async syncDir(): Promise<void> {
    const handle = await open(this.dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}

/** A record as `reflex audit export` writes it: the record's fields, then its chain fields. */
function exportLine(e: HistoryEntry): string {
  return JSON.stringify({ ...(JSON.parse(e.json) as Record<string, unknown>), id: e.id, prev: e.prev, hash: e.hash });
}
