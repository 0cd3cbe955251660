import { crc32 } from 'node:zlib';
import type { Command } from 'just-bash';
import { bbunpack, FatalUnpackError, strippedOf, UnpackWriter, type Unpacked, type Unpacker } from './bbunpack.js';
import { ByteReader } from './byte-reader.js';
import { unpackLzma, unpackZ } from './lz-streams.js';
import { LzoDictionary, LzoError, lzo1xCompress, lzo1xDecompress } from './lzo1x.js';
import type { ProgramHost } from './program-host.js';

const unlzmaHelp = '\t-c\tWrite to stdout\n\t-f\tForce\n\t-k\tKeep input files\n\t-t\tTest integrity\n';

/** An adler32 as LZO computes it (zlib's, from a running value). */
function adler32(data: Uint8Array, adler = 1): number {
  let s1 = adler & 0xffff;
  let s2 = adler >>> 16;
  for (let i = 0; i < data.length;) {
    const end = Math.min(data.length, i + 5552);
    for (; i < end; i++) {
      s1 += data[i]!;
      s2 += s1;
    }
    s1 %= 65521;
    s2 %= 65521;
  }
  return ((s2 << 16) | s1) >>> 0;
}

/** lzop's checksum of some bytes: CRC-32 where its flags ask for one, Adler-32 otherwise. */
const checksum = (crc: boolean, bytes: Uint8Array): number => (crc ? crc32(bytes) : adler32(bytes));

const lzopMagic = Buffer.from([0x89, 0x4c, 0x5a, 0x4f, 0x00, 0x0d, 0x0a, 0x1a, 0x0a]);
const F_ADLER32_D = 0x1;
const F_ADLER32_C = 0x2;
const F_H_EXTRA_FIELD = 0x40;
const F_CRC32_D = 0x100;
const F_CRC32_C = 0x200;
const F_H_FILTER = 0x800;
const F_H_CRC32 = 0x1000;
const F_RESERVED = 0x000fc000;
const blockSize = 256 * 1024;

const be32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

/**
 * busybox's lzop compression: a header with no name, mode or time (so the bytes depend on the data
 * and the options only), then blocks of 256 KiB, each stored as it is where LZO1X does not shrink it.
 */
function lzopCompress(data: Buffer, flags: Set<string>): Unpacked {
  const out = new UnpackWriter();
  if (['7', '8', '9'].some((l) => flags.has(l))) return out.failed('high compression not compiled in', true);
  const fast = flags.has('1');
  let headerFlags = 0x03000000;
  if (!flags.has('F')) headerFlags |= F_ADLER32_D | (flags.has('C') ? F_ADLER32_C : 0);
  const header = Buffer.from([0x10, 0x10, 0x20, 0x30, 0x09, 0x40, fast ? 2 : 1, fast ? 1 : 5, ...be32(headerFlags), ...Buffer.alloc(12), 0]);
  for (const part of [lzopMagic, header, be32(adler32(header))]) out.write(part);
  const dict = new LzoDictionary(fast ? 15 : 14);
  for (let at = 0; at < data.length; at += blockSize) {
    const block = data.subarray(at, at + blockSize);
    const packed = lzo1xCompress(block, dict);
    const shrunk = packed.length < block.length;
    out.write(be32(block.length));
    out.write(be32(shrunk ? packed.length : block.length));
    if (headerFlags & F_ADLER32_D) out.write(be32(adler32(block)));
    if (shrunk && headerFlags & F_ADLER32_C) out.write(be32(adler32(packed)));
    out.write(shrunk ? packed : block);
  }
  out.write(be32(0));
  return out.done(1);
}

/** The checks of busybox's read_header: 0 where the header is good, else its `header_error` number. */
function headerError(h: Buffer, flags: number): number {
  const version = h.readUInt16BE(0);
  const needed = h.readUInt16BE(4);
  if (version < 0x0940) return 3;
  if (needed > 0x1010) return 16;
  if (needed < 0x0940) return 3;
  const method = h[6]!;
  let level = h[7]!;
  if (method === 0) return 14;
  if (method < 1 || method > 3) return -1;
  if (level === 0) level = [3, 1, 9][method - 1]!;
  if (level < 1 || level > 9) return 15;
  if (flags & F_H_FILTER) return 16;
  if (flags & F_RESERVED) return -13;
  return 0;
}

/** busybox's lzop decompression: every failure ends the program (`short read` where the data stops). */
function lzopDecompress(data: Buffer, flags: Set<string>): Unpacked {
  const out = new UnpackWriter();
  const input = new ByteReader(data, () => new FatalUnpackError('short read'));
  return out.settle(() => {
    if (!input.bytes(9).equals(lzopMagic)) throw new FatalUnpackError('bad magic number');
    const h = input.bytes(25);
    const f = h.readUInt32BE(8);
    const sum = (bytes: Uint8Array): number => checksum((f & F_H_CRC32) !== 0, bytes);
    let error = headerError(h, f);
    if (error === 0) {
      const name = input.bytes(h[24]!);
      if (input.u32be() !== sum(Buffer.concat([h, name]))) error = 2;
    }
    if (error === 0 && f & F_H_EXTRA_FIELD) {
      const length = input.bytes(4);
      const extra = input.bytes(length.readUInt32BE(0));
      if (input.u32be() !== sum(Buffer.concat([length, extra]))) error = 3;
    }
    if (error !== 0) throw new FatalUnpackError(`header_error ${error}`);
    const verify = !flags.has('F');
    const check = (kind: number, bytes: Uint8Array, expected: number): void => {
      if (verify && checksum(kind === F_CRC32_D || kind === F_CRC32_C, bytes) !== expected) throw new FatalUnpackError('checksum error');
    };
    for (;;) {
      const dstLen = input.u32be();
      if (dstLen === 0) break;
      if (dstLen === 0xffffffff) throw new FatalUnpackError('this file is a split lzop file');
      if (dstLen > 64 * 1024 * 1024) throw new FatalUnpackError('corrupted data');
      const srcLen = input.u32be();
      if (srcLen === 0 || srcLen > dstLen) throw new FatalUnpackError('corrupted data');
      const sums: [number, number][] = [];
      if (f & F_ADLER32_D) sums.push([F_ADLER32_D, input.u32be()]);
      if (f & F_CRC32_D) sums.push([F_CRC32_D, input.u32be()]);
      const packedSums: [number, number][] = [];
      if (srcLen < dstLen) {
        if (f & F_ADLER32_C) packedSums.push([F_ADLER32_C, input.u32be()]);
        if (f & F_CRC32_C) packedSums.push([F_CRC32_C, input.u32be()]);
      }
      const block = input.bytes(srcLen);
      let plain: Uint8Array = block;
      if (srcLen < dstLen) {
        for (const [kind, expected] of packedSums) check(kind, block, expected);
        try {
          plain = lzo1xDecompress(block, dstLen);
        } catch (err) {
          if (err instanceof LzoError) throw new FatalUnpackError(err.message);
          throw err;
        }
      }
      for (const [kind, expected] of sums) check(kind, plain, expected);
      out.write(plain);
    }
    return out.done(1);
  });
}

const lzop: Omit<Unpacker, 'name' | 'implied'> = {
  options: 'cfUvqdt123456789CFk',
  usage:
    'Usage: lzop [-cfUvd123456789CF] [FILE]...\n\n\t-1..9\tCompression level\n\t-d\tDecompress\n\t-c\tWrite to stdout\n\t-f\tForce\n' +
    "\t-U\tDelete input files\n\t-v\tVerbose\n\t-F\tDon't store or verify checksum\n\t-C\tAlso write checksum of compressed block\n",
  newName(file, flags) {
    if (!flags.has('d')) return `${file}.lzo`;
    return strippedOf('lzo')(file) ?? `${file}.out`;
  },
  // lzop keeps its input unless -U, and -k undoes -U.
  keeps: (flags) => !flags.has('U') || flags.has('k'),
  // -t tests by writing to nowhere what lzop would write: a compression without -d.
  run: (data, flags) => (flags.has('d') ? lzopDecompress(data, flags) : lzopCompress(data, flags)),
};

/**
 * busybox's `uncompress` (.Z), `unlzma`, `lzcat` and decompress-only `lzma` (LZMA-alone), and `lzop`
 * (LZO1X, both ways), with their decoders ported from busybox's own (lz-streams.ts, lzo1x.ts).
 */
export function busyboxLz(host: ProgramHost): Command[] {
  const unlzma = (name: string, implied: string, usage: string, refuses?: Unpacker['refuses']): Command =>
    bbunpack(host, {
      name,
      options: 'cfkvqdt',
      implied,
      usage,
      newName: strippedOf('lzma'),
      keeps: (flags) => flags.has('k'),
      refuses,
      run: (data) => unpackLzma(data),
    });
  return [
    bbunpack(host, {
      name: 'uncompress',
      options: 'cf',
      implied: '',
      usage: 'Usage: uncompress [-cf] [FILE]...\n\nDecompress FILEs (or stdin)\n\n\t-c\tWrite to stdout\n\t-f\tOverwrite\n',
      newName: strippedOf('Z'),
      keeps: () => false,
      run: (data) => unpackZ(data),
    }),
    unlzma('unlzma', '', `Usage: unlzma [-cfk] [FILE]...\n\nDecompress FILEs (or stdin)\n\n${unlzmaHelp}`),
    unlzma('lzcat', 'c', 'Usage: lzcat [FILE]...\n\nDecompress to stdout\n'),
    unlzma(
      'lzma',
      '',
      `Usage: lzma -d [-cfk] [FILE]...\n\nDecompress FILEs (or stdin)\n\n\t-d\tDecompress\n${unlzmaHelp}`,
      (flags) => !flags.has('d') && !flags.has('t'),
    ),
    bbunpack(host, { name: 'lzop', implied: '', ...lzop }),
  ];
}
