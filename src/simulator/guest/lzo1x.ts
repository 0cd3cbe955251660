/**
 * LZO1X as busybox 1.35's lzop has it (archival/libarchive/lzo1x_c.c, lzo1x_d.c, from LZO 2.03):
 * the LZO1X-1 compressor ported step for step, so that its bytes are busybox's, and a decoder that
 * refuses anything reaching outside its input or output. No maintained JavaScript LZO compressor
 * exists (npm's `lzo` is a native binding; `lzo-wasm` only decompresses).
 */

import { ByteReader } from './byte-reader.js';

const M2_MAX_LEN = 8;
const M4_MAX_LEN = 9;
const M2_MAX_OFFSET = 0x0800;
const M3_MAX_OFFSET = 0x4000;
const M4_MAX_OFFSET = 0xbfff;
const M3_MARKER = 32;
const M4_MARKER = 16;

/**
 * The compressor's dictionary: positions in the input buffer by hash (-1: none). busybox keeps it
 * for a whole file, each block read into the same buffer, so one block's entries still point into
 * the next: it is made once per file and handed to each block.
 */
export class LzoDictionary {
  readonly positions: Int32Array;
  constructor(readonly bits: 14 | 15) {
    this.positions = new Int32Array(1 << bits).fill(-1);
  }
}

/** Pushes a literal run's length as LZO1X codes it (the first run's short form aside). */
function literalLength(out: number[], t: number): void {
  if (t <= 3) out[out.length - 2]! |= t;
  else if (t <= 18) out.push(t - 3);
  else {
    let tt = t - 18;
    out.push(0);
    for (; tt > 255; tt -= 255) out.push(0);
    out.push(tt);
  }
}

/** The body of lzo1x_1_compress / lzo1x_1_15_compress: returns how many bytes at the end are left as literals. */
function compressCore(input: Uint8Array, out: number[], dict: LzoDictionary): number {
  const inEnd = input.length;
  const ipEnd = input.length - M2_MAX_LEN - 5;
  const dMask = (1 << dict.bits) - 1;
  const dHigh = (dMask >> 1) + 1;
  const positions = dict.positions;
  let ip = 4;
  let ii = 0;
  for (;;) {
    let dindex = ((0x21 * ((((((input[ip + 3]! << 6) ^ input[ip + 2]!) << 5) ^ input[ip + 1]!) << 5) ^ input[ip]!)) >>> 5) & dMask;
    let mPos = positions[dindex]!;
    let mOff = ip - mPos;
    let matched = false;
    if (!(mPos < 0 || mOff <= 0 || mOff > M4_MAX_OFFSET)) {
      if (mOff <= M2_MAX_OFFSET || input[mPos + 3] === input[ip + 3]) matched = true;
      else {
        dindex = (dindex & (dMask & 0x7ff)) ^ (dHigh | 0x1f);
        mPos = positions[dindex]!;
        mOff = ip - mPos;
        if (!(mPos < 0 || mOff <= 0 || mOff > M4_MAX_OFFSET) && (mOff <= M2_MAX_OFFSET || input[mPos + 3] === input[ip + 3])) matched = true;
      }
    }
    if (!matched || input[mPos] !== input[ip] || input[mPos + 1] !== input[ip + 1] || input[mPos + 2] !== input[ip + 2]) {
      positions[dindex] = ip;
      if (++ip >= ipEnd) break;
      continue;
    }
    positions[dindex] = ip;
    if (ip - ii > 0) {
      const t = ip - ii;
      literalLength(out, t);
      for (let k = 0; k < t; k++) out.push(input[ii++]!);
    }
    ip += 3;
    let long = true;
    for (let k = 3; k <= 8; k++)
      if (input[mPos + k] !== input[ip++]) {
        long = false;
        break;
      }
    if (!long) {
      --ip;
      const mLen = ip - ii;
      if (mOff <= M2_MAX_OFFSET) {
        mOff -= 1;
        out.push(((mLen - 1) << 5) | ((mOff & 7) << 2), mOff >> 3);
      } else if (mOff <= M3_MAX_OFFSET) {
        mOff -= 1;
        out.push(M3_MARKER | (mLen - 2), (mOff & 63) << 2, mOff >> 6);
      } else {
        mOff -= 0x4000;
        out.push(M4_MARKER | ((mOff & 0x4000) >> 11) | (mLen - 2), (mOff & 63) << 2, (mOff >> 6) & 0xff);
      }
    } else {
      let m = mPos + M2_MAX_LEN + 1;
      while (ip < inEnd && input[m] === input[ip]) (m++, ip++);
      let mLen = ip - ii;
      let lengthBytes = false;
      if (mOff <= M3_MAX_OFFSET) {
        mOff -= 1;
        if (mLen <= 33) out.push(M3_MARKER | (mLen - 2));
        else {
          mLen -= 33;
          out.push(M3_MARKER);
          lengthBytes = true;
        }
      } else {
        mOff -= 0x4000;
        if (mLen <= M4_MAX_LEN) out.push(M4_MARKER | ((mOff & 0x4000) >> 11) | (mLen - 2));
        else {
          mLen -= M4_MAX_LEN;
          out.push(M4_MARKER | ((mOff & 0x4000) >> 11));
          lengthBytes = true;
        }
      }
      if (lengthBytes) {
        for (; mLen > 255; mLen -= 255) out.push(0);
        out.push(mLen);
      }
      out.push((mOff & 63) << 2, (mOff >> 6) & 0xff);
    }
    ii = ip;
    if (ip >= ipEnd) break;
  }
  return inEnd - ii;
}

/** LZO1X-1 (a dictionary of 2^14: lzop's levels 2-6) or LZO1X-1(15) (2^15: level 1) of one block. */
export function lzo1xCompress(input: Uint8Array, dict: LzoDictionary): Uint8Array {
  const out: number[] = [];
  const t = input.length <= M2_MAX_LEN + 5 ? input.length : compressCore(input, out, dict);
  if (t > 0) {
    if (out.length === 0 && t <= 238) out.push(17 + t);
    else literalLength(out, t);
    for (let k = input.length - t; k < input.length; k++) out.push(input[k]!);
  }
  out.push(M4_MARKER | 1, 0, 0);
  return Uint8Array.from(out);
}

/** Thrown for data the decoder cannot take (busybox's lzop says `corrupted data`). */
export class LzoError extends Error {}

/** lzo1x_decompress_safe: the block's bytes, which must come to `size`. */
export function lzo1xDecompress(block: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(size);
  const corrupt = (): LzoError => new LzoError('corrupted data');
  const bad = (): never => {
    throw corrupt();
  };
  const input = new ByteReader(block, corrupt);
  let op = 0;
  const literals = (n: number): void => {
    if (op + n > size) bad();
    out.set(input.bytes(n), op);
    op += n;
  };
  const copy = (back: number, n: number): void => {
    const from = op - back;
    if (from < 0 || back <= 0 || op + n > size) bad();
    for (let k = 0; k < n; k++) out[op + k] = out[from + k]!;
    op += n;
  };
  const runLength = (t: number, base: number): number => {
    if (t !== 0) return t;
    let n = 0;
    let b = input.byte();
    for (; b === 0; b = input.byte()) n += 255;
    return n + base + b;
  };
  let t = input.byte();
  let state: 'start' | 'afterLiterals' | 'match' = 'start';
  // LZO's match_next: the 1 to 3 literals a code's low bits count, then a match; with none, the
  // next byte starts a literal run.
  const fewLiterals = (n: number): void => {
    if (n === 0) {
      t = input.byte();
      state = 'start';
      return;
    }
    literals(n);
    t = input.byte();
    state = 'match';
  };
  // LZO's match_done: after a match, the count is in the low bits of its code's second-to-last byte.
  const afterMatch = (): void => fewLiterals(block[input.at - 2]! & 3);
  if (t > 17) {
    t -= 17;
    if (t < 4) fewLiterals(t);
    else {
      literals(t);
      state = 'afterLiterals';
    }
  }
  for (;;) {
    if (state === 'start') {
      if (t >= 16) state = 'match';
      else {
        literals(runLength(t, 15) + 3);
        state = 'afterLiterals';
        continue;
      }
    }
    if (state === 'afterLiterals') {
      t = input.byte();
      if (t < 16) {
        copy(1 + M2_MAX_OFFSET + (t >> 2) + (input.byte() << 2), 3);
        afterMatch();
        continue;
      }
      state = 'match';
    }
    if (t >= 64) copy(1 + ((t >> 2) & 7) + (input.byte() << 3), (t >> 5) + 1);
    else if (t >= 32) {
      const len = runLength(t & 31, 31) + 2;
      const low = input.byte();
      copy(1 + (low >> 2) + (input.byte() << 6), len);
    } else if (t >= 16) {
      const len = runLength(t & 7, 7) + 2;
      const low = input.byte();
      const back = ((t & 8) << 11) + (low >> 2) + (input.byte() << 6);
      if (back === 0) {
        if (input.left !== 0 || op !== size) bad();
        return out;
      }
      copy(back + 0x4000, len);
    } else copy(1 + (t >> 2) + (input.byte() << 2), 2);
    afterMatch();
  }
}
