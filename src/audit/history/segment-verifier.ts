import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { chainHash } from '../audit-chain.js';
import { compareIds, type VerifyResult } from '../audit-verifier.js';
import { canonicalJson } from '../canonical-json.js';
import { gzipLines, type GzipLine } from './gzip-lines.js';

/** What the manifest says of one segment: its chain's ends, its record count and its committed bytes. */
export interface SegmentCheckpoint {
  file: string;
  firstId: string;
  firstPrev: string;
  lastId: string;
  lastHash: string;
  count: number;
  bytes: number;
}

/** One place where a segment breaks the chain: the record named, its line, and the hash expected there against the one found. */
interface Mismatch {
  badId: string;
  segment: string;
  /** `segment F, line L (record ID)`, or `segment F`. */
  where: string;
  why: string;
  line?: number;
  expectedHash?: string;
  foundHash?: string;
}

const STREAM_ID = /^[0-9]+-[0-9]+$/;

/** Parses a line as `reflex audit export` writes it; undefined when it is not such a record. */
function parseLine(text: string): { id: string; prev: string; hash: string; json: string } | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const { id, prev, hash, ...record } = value as Record<string, unknown>;
    if (typeof id !== 'string' || !STREAM_ID.test(id) || typeof prev !== 'string' || typeof hash !== 'string') return undefined;
    return { id, prev, hash, json: canonicalJson(record) };
  } catch {
    // Not JSON, or nested too deep to serialise again: either way not a record the store wrote.
    return undefined;
  }
}

/**
 * One read of one segment, line by line: each record's hash recomputed from its content and
 * compared with its stored hash, each record's `prev` with the hash of the record before it, the
 * segment's ends and count with its checkpoint. It goes on past a mismatch, so every mismatch is
 * counted and the first is named.
 */
class SegmentRead {
  /** Lines holding something (a record or not). */
  records = 0;
  /** Records that matched before the first mismatch. */
  verifiedBefore = 0;
  private matched = 0;
  mismatches: Mismatch[] = [];
  /** Why reading stopped before the end of the segment (its gzip stream cut or corrupt, the file gone). */
  stopped: NodeJS.ErrnoException | undefined;
  private last: { id: string; hash: string; text: string; line: number } | undefined;
  private lastUnknown = false;

  constructor(private readonly s: SegmentCheckpoint) {}

  private miss(m: Omit<Mismatch, 'where' | 'segment'>, id?: string): void {
    if (!this.mismatches.length) this.verifiedBefore = this.matched;
    const where = m.line === undefined ? `segment ${this.s.file}` : `segment ${this.s.file}, line ${m.line}${id ? ` (record ${id})` : ''}`;
    this.mismatches.push({ ...m, segment: this.s.file, where });
  }

  add({ line, text, bytes }: GzipLine): void {
    if (text === '') return;
    this.records++;
    const mismatches = this.mismatches.length;
    const e = text === undefined ? undefined : parseLine(text);
    if (!e) {
      this.miss({
        badId: `line ${line} of ${this.s.file}`,
        line,
        why:
          text === undefined
            ? `it is ${bytes} bytes long, more than any record the store writes: it was inserted or rewritten`
            : 'it is not a record (not a JSON object with a stream id, prev and hash): it was inserted or rewritten',
      });
      this.lastUnknown = true;
      return;
    }
    const last = this.last;
    if (last && compareIds(e.id, last.id) <= 0) {
      const same = e.id === last.id;
      this.miss(
        {
          badId: e.id,
          line,
          why: same
            ? `it has the id of line ${last.line}, the record before it: ${text === last.text ? 'that record was duplicated' : 'a record was inserted under an id already used'}`
            : `its id is older than ${last.id}, the record before it: it was inserted or moved`,
          expectedHash: e.prev,
          foundHash: last.hash,
        },
        e.id,
      );
      return;
    }
    const found = chainHash(e.prev, e.id, e.json);
    if (found !== e.hash) {
      this.miss(
        { badId: e.id, line, why: 'its content does not match its hash: the record was altered', expectedHash: e.hash, foundHash: found },
        e.id,
      );
    } else if (last && !this.lastUnknown && e.prev !== last.hash) {
      this.miss(
        {
          badId: e.id,
          line,
          why: `its prev is not the hash of ${last.id}, the record before it (line ${last.line}): a record between them was deleted, or ${last.id} was rewritten`,
          expectedHash: e.prev,
          foundHash: last.hash,
        },
        e.id,
      );
    } else if (!last && !this.lastUnknown && (e.id !== this.s.firstId || e.prev !== this.s.firstPrev)) {
      const order = compareIds(e.id, this.s.firstId);
      this.miss(
        {
          badId: e.id,
          line,
          why:
            order > 0
              ? `it is the segment's first record, but its checkpoint starts at ${this.s.firstId}: the records before it were deleted`
              : order < 0
                ? `it is older than ${this.s.firstId}, where the segment's checkpoint starts: it was inserted`
                : `its prev is not the one the segment's checkpoint holds: the record was rewritten`,
          expectedHash: this.s.firstPrev,
          foundHash: e.prev,
        },
        e.id,
      );
    }
    if (this.mismatches.length === mismatches) this.matched++;
    this.last = { id: e.id, hash: e.hash, text: text!, line };
    this.lastUnknown = false;
  }

  /** The checks of a segment read to its end: it ends where its checkpoint does and holds as many records. */
  finish(): void {
    const { s, last } = this;
    if (!last) {
      if (!this.mismatches.length) this.miss({ badId: s.firstId, why: `it holds no record where its checkpoint says ${s.count}` });
      return;
    }
    if (last.id !== s.lastId || last.hash !== s.lastHash) {
      const order = compareIds(last.id, s.lastId);
      this.miss(
        {
          badId: last.id,
          line: last.line,
          why: `the segment ends with it, but its checkpoint ends at ${s.lastId}: ${order < 0 ? 'the records after it were deleted' : order > 0 ? 'records were appended after the checkpoint' : 'the record was rewritten'}`,
          expectedHash: s.lastHash,
          foundHash: last.hash,
        },
        last.id,
      );
    } else if (this.records !== s.count && !this.mismatches.length) {
      this.miss({ badId: s.firstId, why: `it holds ${this.records} records where its checkpoint says ${s.count}` });
    }
  }

  /** Reading stopped at `err`: the segment is missing, cut, corrupt or unreadable, and this is how far it was read. */
  unreadable(err: NodeJS.ErrnoException, fileBytes: number | undefined): void {
    this.stopped = err;
    const { s, last } = this;
    const badId = last?.id ?? s.firstId;
    const after = last ? ` after line ${last.line} (record ${last.id})` : ' before its first record';
    const size =
      fileBytes === undefined
        ? `its checkpoint committed ${s.bytes} bytes`
        : `the file has ${fileBytes} bytes where its checkpoint committed ${s.bytes}`;
    if (err.code === 'ENOENT') {
      this.miss({
        badId,
        why: `it is missing: it was deleted (its checkpoint says it held ${s.count} records, ${s.firstId} to ${s.lastId})`,
      });
    } else if (err.code === 'Z_BUF_ERROR') {
      const readable = `${this.records} of its ${s.count} records were readable`;
      this.miss({ badId, why: `is cut${after}: its gzip stream ends there; ${readable}; ${size}` });
    } else {
      // zlib drops what it decoded from the input chunk it fails in: the count is of the records read before that chunk.
      const read = `${this.records} of its ${s.count} records were read before it`;
      const what = err.code?.startsWith('Z_') ? 'is corrupt' : 'cannot be read';
      this.miss({ badId, why: `${what}${after}: ${err.message}; ${read}; ${size}` });
    }
  }
}

async function readSegment(path: string, s: SegmentCheckpoint, bytes: number | undefined, fileBytes: number): Promise<SegmentRead> {
  const read = new SegmentRead(s);
  try {
    for await (const line of gzipLines(path, { bytes })) read.add(line);
    read.finish();
  } catch (err) {
    read.unreadable(err as NodeJS.ErrnoException, fileBytes);
  }
  return read;
}

/**
 * Reads a segment as the store wrote it: its committed bytes (bytes past them are a batch a crash
 * left before its checkpoint). When those cannot be read (a file edited and compressed again has
 * another size), the whole file is read as it is now, so each record in it is still checked and
 * the edit is named where it is, not at the segment's start: at most two linear passes.
 */
async function checkSegment(dir: string, s: SegmentCheckpoint): Promise<{ read: SegmentRead; rewrittenBytes?: number }> {
  const path = join(dir, s.file);
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (err) {
    const read = new SegmentRead(s);
    read.unreadable(err as NodeJS.ErrnoException, undefined);
    return { read };
  }
  if (size >= s.bytes) {
    const committed = await readSegment(path, s, s.bytes, size);
    if (!committed.stopped || size === s.bytes) return { read: committed };
  }
  return { read: await readSegment(path, s, undefined, size), rewrittenBytes: size };
}

/**
 * Verifies a files store's segments in order: every record's hash and link, each segment against its
 * checkpoint, each checkpoint against the one before. Every mismatch is counted; the first is
 * named with its segment, line and record, and the hash expected there against the one found.
 */
export async function verifySegments(dir: string, segments: readonly SegmentCheckpoint[]): Promise<VerifyResult> {
  let records = 0;
  let first: { m: Mismatch; records: number; note: string } | undefined;
  let count = 0;
  let before: SegmentCheckpoint | undefined;
  for (const s of segments) {
    const { read, rewrittenBytes } = await checkSegment(dir, s);
    if (before && s.firstPrev !== before.lastHash) {
      read.mismatches.unshift({
        badId: s.firstId,
        segment: s.file,
        where: `segment ${s.file}`,
        why: `it does not follow ${before.file}, the segment before it: a segment was deleted`,
        expectedHash: s.firstPrev,
        foundHash: before.lastHash,
      });
      read.verifiedBefore = 0;
    }
    const notes: string[] = [];
    if (read.records !== s.count && !read.stopped) notes.push(`the segment holds ${read.records} records where its checkpoint says ${s.count}`);
    if (rewrittenBytes !== undefined && !read.stopped) {
      const size = `${rewrittenBytes} bytes where its checkpoint committed ${s.bytes}`;
      if (read.mismatches.length) notes.push(`it was compressed again: ${size}`);
      else {
        read.mismatches.push({
          badId: s.firstId,
          segment: s.file,
          where: `segment ${s.file}`,
          why: `it was rewritten outside the store (${size}), though each of its records matches its hash and chain`,
        });
      }
    }
    if (read.mismatches.length && !first) {
      first = { m: read.mismatches[0]!, records: records + read.verifiedBefore, note: notes.map((n) => `; ${n}`).join('') };
    }
    count += read.mismatches.length;
    records += read.records;
    before = s;
  }
  if (!first) return { ok: true, records, firstId: segments[0]?.firstId, headId: before?.lastId, headHash: before?.lastHash };
  const { m } = first;
  const hashes = m.expectedHash !== undefined ? ` (expected hash ${m.expectedHash}, found ${m.foundHash})` : '';
  const sep = /^(is|cannot) /.test(m.why) ? ' ' : ': ';
  return {
    ok: false,
    records: first.records,
    badId: m.badId,
    reason: `${m.where}${sep}${m.why}${hashes}${first.note}; ${count} ${count === 1 ? 'mismatch' : 'mismatches'} in the store`,
    mismatches: count,
    segment: m.segment,
    ...(m.line !== undefined ? { line: m.line } : {}),
    ...(m.expectedHash !== undefined ? { expectedHash: m.expectedHash, foundHash: m.foundHash } : {}),
  };
}
