import { constants, crc32, inflateRawSync } from 'node:zlib';
import type { Command } from 'just-bash';
import { bbunpack, strippedOf, type Unpacked, type Unpacker } from './bbunpack.js';
import { busyboxDeflate } from './busybox-deflate.js';
import type { ProgramHost } from './program-host.js';

/** busybox gunzip's window: what it has decoded reaches its output 32 KiB at a time, and at the end. */
const window = 32 * 1024;

/** The gzip header busybox writes: deflate, no flags, no time (0), no extra flags, Unix. */
const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);

/** busybox's gzip stream: its header, the data as busybox deflates it, CRC-32 and length. */
export function gzipStream(data: Buffer): Buffer {
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(data), 0);
  trailer.writeUInt32LE(data.length >>> 0, 4);
  return Buffer.concat([header, busyboxDeflate(data), trailer]);
}

/** Where a member's deflate data starts after its header (FEXTRA, FNAME, FCOMMENT, FHCRC skipped), or undefined if the header is cut short. */
function dataStart(data: Buffer, at: number): number | undefined {
  if (data.length < at + 10) return undefined;
  const flags = data[at + 3]!;
  let pos = at + 10;
  if (flags & 4) {
    if (data.length < pos + 2) return undefined;
    pos += 2 + data.readUInt16LE(pos);
  }
  for (const bit of [8, 16]) {
    if (!(flags & bit)) continue;
    const end = data.indexOf(0, pos);
    if (end < 0) return undefined;
    pos = end + 1;
  }
  if (flags & 2) pos += 2;
  return pos <= data.length ? pos : undefined;
}

/**
 * busybox's unpack_gz_stream (archival/libarchive/decompress_gunzip.c): `invalid magic` unless the
 * data starts with gzip's; members one after the other, anything after one that is not gzip's magic
 * ignored; a header or trailer cut short is `corrupted data`, deflate data cut short `unexpected end
 * of file` (what it had decoded reaches the output only in whole 32 KiB windows), a bad CRC `crc
 * error`, a wrong length `incorrect length`. zlib inflates.
 */
export function gunzip(data: Buffer): Unpacked {
  const out: Buffer[] = [];
  const failed = (error: string, partial?: Buffer): Unpacked => {
    if (partial) out.push(partial);
    return { output: Buffer.concat(out), error, status: -1 };
  };
  if (data.length < 2 || data[0] !== 0x1f || data[1] !== 0x8b) return failed('invalid magic');
  let at = 0;
  for (;;) {
    const start = dataStart(data, at);
    if (start === undefined) return failed('corrupted data');
    let inflated: { buffer: Buffer; engine: { bytesWritten: number } };
    try {
      inflated = inflateRawSync(data.subarray(start), { info: true }) as unknown as typeof inflated;
    } catch (err) {
      if ((err as { code?: string }).code !== 'Z_BUF_ERROR') return failed('corrupted data');
      const partial = inflateRawSync(data.subarray(start), { finishFlush: constants.Z_SYNC_FLUSH });
      return failed('unexpected end of file', partial.subarray(0, partial.length - (partial.length % window)));
    }
    const end = start + inflated.engine.bytesWritten;
    out.push(inflated.buffer);
    if (data.length < end + 8) return failed('corrupted data');
    if (data.readUInt32LE(end) !== crc32(inflated.buffer)) return failed('crc error');
    if (data.readUInt32LE(end + 4) !== inflated.buffer.length >>> 0) return failed('incorrect length');
    at = end + 8;
    if (data.length < at + 2 || data[at] !== 0x1f || data[at + 1] !== 0x8b) break;
  }
  const output = Buffer.concat(out);
  return { output, status: output.length };
}

const decompressHelp = '\t-c\tWrite to stdout\n\t-f\tForce\n\t-k\tKeep input files\n\t-t\tTest integrity\n';
/** getopt32's letters of gunzip_main (with BBUNPK_OPTSTR's `dt`). */
const gunzipOptions = 'cfkvqdtn';

/** busybox's gzip: FILE to FILE.gz; `-d` or `-t` decompress as gunzip does. */
const gzipUnpacker: Unpacker = {
  name: 'gzip',
  options: `${gunzipOptions}123456789`,
  // `gzip -d` and `-t` run gunzip's main, which reads the options again and refuses the levels.
  reparsedWith: (flags) => (flags.has('d') || flags.has('t') ? gunzipOptions : undefined),
  implied: '',
  usage:
    'Usage: gzip [-cfkdt] [FILE]...\n\nCompress FILEs (or stdin)\n\n' +
    '\t-d\tDecompress\n\t-c\tWrite to stdout\n\t-f\tForce\n\t-k\tKeep input files\n\t-t\tTest integrity\n',
  newName: (file, flags) => (flags.has('d') || flags.has('t') ? strippedOf('gz')(file) : `${file}.gz`),
  keeps: (flags) => flags.has('k'),
  run(data, flags, directory) {
    if (flags.has('d') || flags.has('t')) return gunzip(data);
    // A directory reads as nothing to gzip, which does not check its read(2): DIR.gz is an empty stream.
    // Debian's busybox has no FEATURE_GZIP_LEVELS: `-1`..`-9` are taken and change nothing.
    const output = gzipStream(directory ? Buffer.alloc(0) : data);
    return { output, status: output.length };
  },
};

/** gunzip and zcat (gunzip_main): FILE.gz (and .tgz, .taz give .tar) to FILE. */
const gunzipUnpacker = (name: string, implied: string, usage: string): Unpacker => ({
  name,
  options: gunzipOptions,
  implied,
  usage,
  newName: (file) => (/\.t[ag]z$/.test(file) ? `${file.slice(0, -4)}.tar` : strippedOf('gz')(file)),
  keeps: (flags) => flags.has('k'),
  run: (data) => gunzip(data),
});

/** busybox's `gzip`, `gunzip` and `zcat` over bbunpack: the output has the input's mode (under the umask), as busybox's. */
export function busyboxGzip(host: ProgramHost): Command[] {
  const decompressing = 'Decompress FILEs (or stdin)\n\n';
  return [
    gzipUnpacker,
    gunzipUnpacker('gunzip', '', `Usage: gunzip [-cfkt] [FILE]...\n\n${decompressing}${decompressHelp}`),
    // Debian's zcat opens its files another way: one the user may not read is `F: Permission denied`.
    { ...gunzipUnpacker('zcat', 'c', 'Usage: zcat [FILE]...\n\nDecompress to stdout\n'), refusedAs: (file: string) => `${file}: Permission denied` },
  ].map((u) => bbunpack(host, u));
}
