import libbzip2, { type Bzip2, type Bzip2Module } from 'libbzip2-wasm';
import type { Command } from 'just-bash';
import xzDecompress from 'xz-decompress';
import { bbunpack, strippedOf, type Unpacked, type Unpacker } from './bbunpack.js';
import type { ProgramHost } from './program-host.js';

let bzip2Module: Promise<Bzip2> | undefined;

/**
 * libbzip2 itself (compiled to WebAssembly; its compressed bytes are busybox's), made on first use.
 * Its `then` is emscripten's and hands back the module, itself a thenable: taken off before resolving.
 */
function bzip2(): Promise<Bzip2> {
  bzip2Module ??= new Promise((resolve) => {
    const module = libbzip2();
    const ready = (m: Bzip2Module): void => {
      delete m.then;
      resolve({ compressBZ2: (...a) => m.compressBZ2(...a), decompressBZ2: (...a) => m.decompressBZ2(...a) });
    };
    if (module.then) module.then(ready);
    else ready(module);
  });
  return bzip2Module;
}

/** Bad data after some good: what was decompressed is written before the message. */
class PartialOutput extends Error {
  constructor(
    readonly output: Buffer,
    message: string,
  ) {
    super(message);
  }
}

/** What busybox's bunzip says of data that is not a whole bzip2 stream (libbzip2 only says that it is not). */
function bunzipError(data: Buffer, libError: number): string {
  if (data.length < 2 || data.subarray(0, 2).toString('latin1') !== 'BZ') return 'invalid magic';
  // start_bunzip reads "h" and the level as 16 bits, get_next_block a block's 48-bit magic: short of them, EOF (-3).
  if (data.length < 4) return 'bunzip error -3';
  if (data[2] !== 0x68 || data[3]! < 0x31 || data[3]! > 0x39) return 'bunzip error -2';
  if (data.length < 10) return 'bunzip error -3';
  const magic = data.subarray(4, 10).toString('hex');
  if (magic !== '314159265359' && magic !== '177245385090') return 'bunzip error -2';
  return libError === -7 ? 'bunzip error -3' : 'bunzip error -5';
}

/** The 48-bit magics a bzip2 block and the end of a stream start with. */
const [blockMagic, endMagic] = [0x314159265359, 0x177245385090];

/**
 * The bit positions (from `from`, in order) at which a 48-bit magic stands. At each of the eight
 * bit offsets its middle five bytes are whole bytes: found with indexOf, then the edges checked.
 */
function magicBits(data: Buffer, magic: number, from = 0): number[] {
  const found: number[] = [];
  for (let shift = 0; shift < 8; shift++) {
    // The magic at bit `shift` of seven bytes.
    const bytes = Buffer.alloc(7);
    for (let k = 0; k < 48; k++) if (Math.floor(magic / 2 ** (47 - k)) % 2) bytes[(shift + k) >> 3]! |= 0x80 >> ((shift + k) & 7);
    const middle = bytes.subarray(1, 6);
    for (let i = data.indexOf(middle, Math.max(1, (from >> 3) + 1)); i >= 1; i = data.indexOf(middle, i + 1)) {
      const at = (i - 1) * 8 + shift;
      if (at >= from && bitsAt(data, at, 48) === magic) found.push(at);
    }
  }
  return found.sort((x, y) => x - y);
}

/** The number `count` bits at bit `at` make, most significant first. */
function bitsAt(data: Buffer, at: number, count: number): number {
  let value = 0;
  for (let k = 0; k < count; k++) value = value * 2 + (((data[(at + k) >> 3] ?? 0) >> (7 - ((at + k) & 7))) & 1);
  return value;
}

/**
 * Where a bzip2 stream may end: after each end-of-stream magic (0x177245385090, at any bit) and
 * its 32-bit CRC, padded to a byte. Data can hold the magic by chance: each is only a candidate.
 */
function* bzip2StreamEnds(data: Buffer): Generator<number> {
  for (const at of magicBits(data, endMagic, 32)) {
    const end = Math.ceil((at + 80) / 8);
    if (end <= data.length) yield end;
  }
}

/** The block at bits [from, to) of a stream as a stream of its own: the header, the block, the end magic, its CRC as the stream's. */
function blockAsStream(data: Buffer, from: number, to: number): Buffer {
  const bits = to - from;
  const out = Buffer.alloc(4 + Math.ceil((bits + 80) / 8));
  data.copy(out, 0, 0, 4);
  const [first, shift] = [from >> 3, from & 7];
  for (let j = 0; j < Math.ceil(bits / 8); j++) out[4 + j] = ((data[first + j]! << shift) | ((data[first + j + 1] ?? 0) >> (8 - shift))) & 0xff;
  if (bits % 8) out[4 + Math.ceil(bits / 8) - 1]! &= (0xff << (8 - (bits % 8))) & 0xff;
  let at = 32 + bits;
  const put = (value: number, count: number): void => {
    for (let k = count - 1; k >= 0; k--, at++) if (Math.floor(value / 2 ** k) % 2) out[at >> 3]! |= 0x80 >> (at & 7);
  };
  put(endMagic, 48);
  put(bitsAt(data, from + 48, 32), 32);
  return out;
}

/**
 * Where the last block of data cut short may end: busybox writes a block before it reads the magic
 * after it, so a block whose data is whole, followed by part of a magic (a block's or the end's,
 * and the end's CRC), is written. The candidates are the bits from which the rest is such a part.
 */
function* lastBlockEnds(data: Buffer, from: number): Generator<number> {
  const end = data.length * 8;
  for (let to = end; to >= Math.max(from + 48, end - 80); to--) {
    const tail = Math.min(end - to, 48);
    const bits = bitsAt(data, to, tail);
    if ([endMagic, blockMagic].some((magic) => Math.floor(magic / 2 ** (48 - tail)) === bits)) yield to;
  }
}

/**
 * What busybox's bunzip writes of a stream that fails: the blocks before the one that fails (each
 * decompressed by libbzip2 as a stream of its own), in writes of its 4 KiB buffer, the last one,
 * not full, lost with the error.
 */
function blocksBefore(lib: Bzip2, data: Buffer): Buffer {
  const marks = [...magicBits(data, blockMagic, 32), ...magicBits(data, endMagic, 32)].sort((x, y) => x - y);
  const blocks: Buffer[] = [];
  const decoded = (from: number, to: number): boolean => {
    const block = lib.decompressBZ2(new Uint8Array(blockAsStream(data, from, to)), 0);
    if (block.error === 0) blocks.push(Buffer.from(block.output));
    return block.error === 0;
  };
  for (const [i, from] of marks.entries()) {
    if (bitsAt(data, from, 48) !== blockMagic) break;
    const to = marks[i + 1];
    if (to === undefined) {
      for (const end of lastBlockEnds(data, from)) if (decoded(from, end)) break;
      break;
    }
    if (!decoded(from, to)) break;
  }
  const written = Buffer.concat(blocks);
  return written.subarray(0, written.length - (written.length % 4096));
}

/**
 * bzip2 data decompressed (libbzip2), or busybox's message for what it cannot read thrown. As
 * busybox's unpack_bz2_stream, a stream followed by "BZ" is followed by another (pbzip2's), and
 * anything else after it is left unread.
 */
export async function bunzip(data: Buffer): Promise<Buffer> {
  const lib = await bzip2();
  const streams: Buffer[] = [];
  for (let rest = data; ;) {
    let end: number | undefined;
    for (const candidate of rest.length < 14 ? [] : bzip2StreamEnds(rest)) {
      const result = lib.decompressBZ2(new Uint8Array(rest.subarray(0, candidate)), 0);
      if (result.error === 0) {
        streams.push(Buffer.from(result.output));
        end = candidate;
        break;
      }
    }
    if (end === undefined) {
      const error = rest.length < 3 ? -5 : lib.decompressBZ2(new Uint8Array(rest), 0).error;
      throw new PartialOutput(Buffer.concat([...streams, blocksBefore(lib, rest)]), bunzipError(rest, error));
    }
    rest = rest.subarray(end);
    if (rest.length < 2 || rest.subarray(0, 2).toString('latin1') !== 'BZ') return Buffer.concat(streams);
  }
}

/** One xz stream decompressed by xz-embedded (WebAssembly, over xz-decompress): its bytes, or those before it went wrong and false. */
async function xzStream(data: Buffer): Promise<{ output: Buffer; whole: boolean }> {
  const reader = new xzDecompress.XzReadableStream(new Blob([new Uint8Array(data)]).stream()).getReader();
  const chunks: Uint8Array[] = [];
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
  } catch {
    return { output: Buffer.concat(chunks), whole: false };
  }
  return { output: Buffer.concat(chunks), whole: true };
}

/**
 * Where the xz stream at the start of data ends, and its bytes: the first end that decompresses
 * whole, among those a stream can have (a multiple of four bytes, ending in a footer whose flags
 * are the header's and then "YZ").
 */
async function firstXzStream(data: Buffer): Promise<{ end: number; output: Buffer } | undefined> {
  for (let end = 24; end <= data.length; end += 4) {
    if (data[end - 2] !== 0x59 || data[end - 1] !== 0x5a || !data.subarray(end - 4, end - 2).equals(data.subarray(6, 8))) continue;
    const stream = await xzStream(data.subarray(0, end));
    if (stream.whole) return { end, output: stream.output };
  }
  return undefined;
}

/**
 * xz data decompressed, or busybox's message for what it cannot read thrown, as busybox's
 * unpack_xz_stream reads it: it starts as if a stream had just ended (its state is X_OK, which is
 * XZ_STREAM_END's 1), so before each stream zero bytes are skipped, a byte other than 0xfd ends
 * the data well (nothing at all, or text, is an empty stream), and zeros up to the end are
 * `corrupted data`. What was decompressed before the data went wrong is written, as busybox
 * writes it as it goes.
 */
export async function unxz(data: Buffer): Promise<Buffer> {
  const streams: Buffer[] = [];
  for (let rest = data; rest.length;) {
    const start = rest.findIndex((b) => b !== 0);
    if (start < 0) throw new PartialOutput(Buffer.concat(streams), 'corrupted data');
    if (rest[start] !== 0xfd) break;
    rest = rest.subarray(start);
    const stream = await firstXzStream(rest);
    if (!stream) throw new PartialOutput(Buffer.concat([...streams, (await xzStream(rest)).output]), 'corrupted data');
    streams.push(stream.output);
    rest = rest.subarray(stream.end);
  }
  return Buffer.concat(streams);
}

/** A decompression as bbunpack reads it: the bytes out (for `-v`, their count), or the message and what came before it. */
async function unpacked(decompress: Promise<Buffer>): Promise<Unpacked> {
  try {
    const output = await decompress;
    return { output, status: output.length };
  } catch (err) {
    return { output: err instanceof PartialOutput ? err.output : Buffer.alloc(0), error: (err as Error).message, status: -1 };
  }
}

const decompressHelp = '\t-c\tWrite to stdout\n\t-f\tForce\n\t-k\tKeep input files\n\t-t\tTest integrity\n';
/** getopt32's letters of bunzip2_main and unxz_main (BBUNPK_OPTSTR "dt"). */
const decompressOptions = 'cfkvqdt';

/**
 * busybox's bzip2 (archival/bzip2.c): compresses with libbzip2 in blocks of the smallest level
 * given (`-s` is `-2`, none `-9`) into FILE.bz2; `-d` or `-t` hands over to bunzip2's main,
 * which reads the options again and refuses the levels.
 */
const bzip2Unpacker: Unpacker = {
  name: 'bzip2',
  options: `${decompressOptions}zs123456789`,
  reparsedWith: (flags) => (flags.has('d') || flags.has('t') ? decompressOptions : undefined),
  implied: '',
  usage:
    'Usage: bzip2 [-cfkdt123456789] [FILE]...\n\nCompress FILEs (or stdin) with bzip2 algorithm\n\n' +
    `\t-1..9\tCompression level\n\t-d\tDecompress\n${decompressHelp}`,
  newName: (file, flags) => (flags.has('d') || flags.has('t') ? strippedOf('bz2')(file) : `${file}.bz2`),
  keeps: (flags) => flags.has('k'),
  async run(data, flags, directory) {
    if (flags.has('d') || flags.has('t')) return unpacked(bunzip(data));
    if (directory) return { output: Buffer.alloc(0), error: 'read error: Is a directory', status: -1 };
    const level = [...'123456789'].find((l) => flags.has(l) || (l === '2' && flags.has('s'))) ?? '9';
    const output = Buffer.from((await bzip2()).compressBZ2(new Uint8Array(data), Number(level), 30).output);
    return { output, status: output.length };
  },
};

/** bunzip2 and bzcat (bunzip2_main). */
const bunzip2Unpacker = (name: string, implied: string, usage: string): Unpacker => ({
  name,
  options: decompressOptions,
  implied,
  usage,
  newName: strippedOf('bz2'),
  keeps: (flags) => flags.has('k'),
  // A directory reads as nothing: check_signature16 says `invalid magic`.
  run: (data) => unpacked(bunzip(data)),
});

/** unxz, xzcat and xz (unxz_main; xz refuses to run without `-d` or `-t`). */
const unxzUnpacker = (name: string, implied: string, usage: string, refuses?: Unpacker['refuses']): Unpacker => ({
  name,
  options: decompressOptions,
  implied,
  usage,
  refuses,
  newName: strippedOf('xz'),
  keeps: (flags) => flags.has('k'),
  run: (data, _flags, directory) => (directory ? { output: Buffer.alloc(0), error: 'read error', status: -1 } : unpacked(unxz(data))),
});

/** busybox's `bzip2`, `bunzip2`, `bzcat`, and its decompress-only `xz`, `unxz`, `xzcat`, all over bbunpack. */
export function busyboxUnpackers(host: ProgramHost): Command[] {
  const decompressing = `Decompress FILEs (or stdin)\n\n`;
  return [
    bbunpack(host, bzip2Unpacker),
    bbunpack(host, bunzip2Unpacker('bunzip2', '', `Usage: bunzip2 [-cfk] [FILE]...\n\n${decompressing}${decompressHelp}`)),
    bbunpack(host, bunzip2Unpacker('bzcat', 'c', 'Usage: bzcat [FILE]...\n\nDecompress to stdout\n')),
    bbunpack(
      host,
      unxzUnpacker(
        'xz',
        '',
        `Usage: xz -d [-cfk] [FILE]...\n\n${decompressing}\t-d\tDecompress\n${decompressHelp}`,
        (flags) => !flags.has('d') && !flags.has('t'),
      ),
    ),
    bbunpack(host, unxzUnpacker('unxz', '', `Usage: unxz [-cfk] [FILE]...\n\n${decompressing}${decompressHelp}`)),
    bbunpack(host, unxzUnpacker('xzcat', 'c', 'Usage: xzcat [FILE]...\n\nDecompress to stdout\n')),
  ];
}
