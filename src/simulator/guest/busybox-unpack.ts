import { posix } from 'node:path';
import libbzip2, { type Bzip2, type Bzip2Module } from 'libbzip2-wasm';
import type { Command, ExecResult } from 'just-bash';
import xzDecompress from 'xz-decompress';
import { bytesOut, stdinBytes, writeFile, type ProgramHost } from './program-host.js';

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

/** What busybox's bunzip says of data that is not a whole bzip2 stream (libbzip2 only says that it is not). */
function bunzipError(data: Buffer, libError: number): string {
  if (data.length < 3 || data.subarray(0, 3).toString('latin1') !== 'BZh') return 'invalid magic';
  const level = data[3];
  if (level === undefined) return 'bunzip error -3';
  if (level < 0x31 || level > 0x39) return 'bunzip error -2';
  if (data.length < 10) return 'bunzip error -3';
  const magic = data.subarray(4, 10).toString('hex');
  if (magic !== '314159265359' && magic !== '177245385090') return 'bunzip error -2';
  return libError === -7 ? 'bunzip error -3' : 'bunzip error -5';
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

/** A compressed format as busybox's programs for it know it: its suffix, and what they can do with it. */
interface Codec {
  suffix: string;
  /** Throws busybox's message for data it cannot decompress. */
  decompress(data: Buffer): Promise<Buffer>;
  /** None: the program decompresses only (busybox's xz), and says its usage without `-d`. */
  compress?(data: Buffer): Promise<Buffer>;
  /** What it says without `-d` when it only decompresses. */
  usage?: string;
}

const banner = 'BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1) multi-call binary.\n\n';

/** bzip2 with libbzip2 (blocks of 900k, busybox's default). */
const bzip2Codec: Codec = {
  suffix: '.bz2',
  async compress(data) {
    return Buffer.from((await bzip2()).compressBZ2(new Uint8Array(data), 9, 30).output);
  },
  async decompress(data) {
    const result = data.length < 3 ? { error: -5, output: new Uint8Array() } : (await bzip2()).decompressBZ2(new Uint8Array(data), 0);
    if (result.error !== 0) throw new Error(bunzipError(data, result.error));
    return Buffer.from(result.output);
  },
};

/** The six bytes an xz stream starts with. */
const xzMagic = Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]);

/**
 * xz with xz-decompress (xz-embedded in WebAssembly). Busybox's unxz takes data without xz's magic
 * as an empty stream (nothing out, exit 0); anything else it cannot read is `corrupted data`.
 */
const xzCodec: Codec = {
  suffix: '.xz',
  async decompress(data) {
    if (!data.subarray(0, xzMagic.length).equals(xzMagic)) return Buffer.alloc(0);
    // What was decompressed before the data went wrong is written, as busybox writes it as it goes.
    const reader = new xzDecompress.XzReadableStream(new Blob([new Uint8Array(data)]).stream()).getReader();
    const chunks: Uint8Array[] = [];
    try {
      for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
    } catch {
      throw new PartialOutput(Buffer.concat(chunks), 'corrupted data');
    }
    return Buffer.concat(chunks);
  },
  usage:
    'Usage: xz -d [-cfk] [FILE]...\n\nDecompress FILEs (or stdin)\n\n' +
    '\t-d\tDecompress\n\t-c\tWrite to stdout\n\t-f\tForce\n\t-k\tKeep input files\n\t-t\tTest integrity\n',
};

/** bzip2 data decompressed (libbzip2), or busybox's message for what it cannot read thrown. */
export const bunzip = (data: Buffer): Promise<Buffer> => bzip2Codec.decompress(data);

/** xz data decompressed (xz-embedded), or busybox's message for what it cannot read thrown. */
export const unxz = (data: Buffer): Promise<Buffer> => xzCodec.decompress(data);

/**
 * One of busybox's (de)compressors (bbunzip.c): files are replaced by their (de)compressed form
 * named with or without the codec's suffix unless `-c` or `-k`; an existing output is refused
 * without `-f`; `-t` tests; no file: stdin to stdout. `implied` are the flags its name carries
 * (`bunzip2`: `-d`, `bzcat`: `-cd`).
 */
function unpackProgram(host: ProgramHost, name: string, codec: Codec, implied: string): Command {
  return {
    name,
    async execute(args, ctx): Promise<ExecResult> {
      const flags = new Set<string>(implied);
      const files: string[] = [];
      for (const a of args) {
        if (a.startsWith('-') && a !== '-') for (const c of a.slice(1)) flags.add(c);
        else files.push(a);
      }
      const decompress = flags.has('d') || flags.has('t');
      if (!decompress && !codec.compress) return { stdout: '', stderr: `${banner}${codec.usage ?? ''}`, exitCode: 1 };
      const toStdout = flags.has('c');
      let out = Buffer.alloc(0);
      let stderr = '';
      let code = 0;
      const failed = (message: string): void => {
        stderr += `${name}: ${message}\n`;
        code = 1;
      };
      for (const file of files.length ? files : ['-']) {
        let data: Buffer;
        let path: string | undefined;
        if (file === '-') data = stdinBytes(ctx);
        else {
          path = posix.resolve(ctx.cwd, file);
          const entry = await host.fs.entry(path);
          if (!entry) {
            failed(`${file}: No such file or directory`);
            continue;
          }
          if (entry.type === 'directory') {
            failed('read error: Is a directory');
            continue;
          }
          data = await host.fs.read(path);
        }
        let target: string | undefined;
        if (path && !toStdout && !flags.has('t')) {
          if (decompress && !file.endsWith(codec.suffix)) {
            failed(`${file}: unknown suffix - ignored`);
            continue;
          }
          target = decompress ? path.slice(0, -codec.suffix.length) : path + codec.suffix;
          if (!flags.has('f') && (await host.fs.entry(target))) {
            failed(`can't open '${decompress ? file.slice(0, -codec.suffix.length) : file + codec.suffix}': File exists`);
            continue;
          }
        }
        let result: Buffer;
        try {
          result = decompress ? await codec.decompress(data) : await codec.compress!(data);
        } catch (err) {
          if (err instanceof PartialOutput && !target) out = Buffer.concat([out, err.output]);
          failed((err as Error).message);
          continue;
        }
        if (flags.has('t')) continue;
        if (!target) {
          out = Buffer.concat([out, result]);
          continue;
        }
        const mode = (await host.fs.entry(path!))!.mode;
        await writeFile(host, target, result, mode);
        if (!flags.has('k')) await host.fs.remove(path!);
      }
      return out.length ? bytesOut(host, out, stderr, code) : { stdout: '', stderr, exitCode: code };
    },
  };
}

/** busybox's `bzip2`, `bunzip2`, `bzcat`, and its decompress-only `xz`, `unxz`, `xzcat`. */
export function busyboxUnpackers(host: ProgramHost): Command[] {
  return [
    unpackProgram(host, 'bzip2', bzip2Codec, ''),
    unpackProgram(host, 'bunzip2', bzip2Codec, 'd'),
    unpackProgram(host, 'bzcat', bzip2Codec, 'cd'),
    unpackProgram(host, 'xz', xzCodec, ''),
    unpackProgram(host, 'unxz', xzCodec, 'd'),
    unpackProgram(host, 'xzcat', xzCodec, 'cd'),
  ];
}
