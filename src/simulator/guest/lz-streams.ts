/**
 * The .Z (LZW) and LZMA-alone decoders of busybox 1.35 (decompress_uncompress.c,
 * decompress_unlzma.c), ported step for step so that data cut short or corrupt ends as busybox's
 * does: the same message, and the same bytes written before it (busybox writes its output buffer
 * only when it is full, so what was decoded after the last full buffer is lost).
 */

import { FatalUnpackError, UnpackWriter, type Unpacked } from './bbunpack.js';
import { ByteReader } from './byte-reader.js';

const IBUFSIZ = 2048;
const OBUFSIZ = 2048;
const HSIZE = 1 << 17;
const INIT_BITS = 9;
const FIRST = 257;
const CLEAR = 256;
const maxCode = (bits: number): number => 2 ** bits;

/** busybox's `uncompress` decoder (unpack_Z_stream), reading its input 2048 bytes at a time as it does. */
export function unpackZ(data: Uint8Array): Unpacked {
  const out = new UnpackWriter();
  if (data.length < 2 || data[0] !== 0x1f || data[1] !== 0x9d) return out.failed('invalid magic');
  if (data.length < 3) return out.failed('short read');
  let at = 3;
  const maxbits = data[2]! & 0x1f;
  const blockMode = data[2]! & 0x80;
  if (maxbits > 16) return out.failed(`compressed with ${maxbits} bits, can only handle 16 bits`);
  const maxmaxcode = maxCode(maxbits);
  const inbuf = new Uint8Array(IBUFSIZ + 64 + 4);
  const outbuf = new Uint8Array(OBUFSIZ + 2048);
  // The suffix table and the stack of a string's bytes share one array, as in busybox.
  const htab = new Uint8Array(HSIZE);
  const codetab = new Uint16Array(HSIZE);
  const deStack = HSIZE - 1;
  let nBits = INIT_BITS;
  let maxcode = maxCode(INIT_BITS) - 1;
  let bitmask = (1 << INIT_BITS) - 1;
  let oldcode = -1;
  let finchar = 0;
  let outpos = 0;
  let posbits = 0;
  let insize = 0;
  let rsize = 0;
  let freeEnt = blockMode ? FIRST : 256;
  for (let i = 255; i >= 0; --i) htab[i] = i;
  const skipToGroup = (): number => posbits - 1 + ((nBits << 3) - ((posbits - 1 + (nBits << 3)) % (nBits << 3)));
  return out.settle(() => {
    do {
      resetbuf: for (;;) {
        const o = posbits >> 3;
        const e = insize - o;
        if (e > 0) inbuf.copyWithin(0, o, o + e);
        insize = e;
        posbits = 0;
        if (insize < 64) {
          rsize = Math.min(IBUFSIZ, data.length - at);
          // A code-width change can skip past what was read: busybox then reads to before its
          // buffer, and decodes from the bytes that land at its start.
          const chunk = data.subarray(at, at + rsize);
          inbuf.set(insize >= 0 ? chunk : chunk.subarray(-insize), Math.max(insize, 0));
          at += rsize;
          insize += rsize;
        }
        const inbits = rsize > 0 ? (insize - (insize % nBits)) << 3 : (insize << 3) - (nBits - 1);
        while (inbits > posbits) {
          if (freeEnt > maxcode) {
            posbits = skipToGroup();
            ++nBits;
            maxcode = nBits === maxbits ? maxmaxcode : maxCode(nBits) - 1;
            bitmask = (1 << nBits) - 1;
            continue resetbuf;
          }
          const p = posbits >> 3;
          let code = ((inbuf[p]! | (inbuf[p + 1]! << 8) | (inbuf[p + 2]! << 16)) >> (posbits & 7)) & bitmask;
          posbits += nBits;
          if (oldcode === -1) {
            if (code >= 256) throw new FatalUnpackError('corrupted data');
            oldcode = code;
            finchar = code;
            outbuf[outpos++] = finchar;
            continue;
          }
          if (code === CLEAR && blockMode) {
            codetab.fill(0, 0, 256);
            freeEnt = FIRST - 1;
            posbits = skipToGroup();
            nBits = INIT_BITS;
            maxcode = maxCode(INIT_BITS) - 1;
            bitmask = (1 << INIT_BITS) - 1;
            continue resetbuf;
          }
          const incode = code;
          let stackp = deStack;
          if (code >= freeEnt) {
            if (code > freeEnt) return out.failed('corrupted data');
            htab[--stackp] = finchar;
            code = oldcode;
          }
          while (code >= 256) {
            if (stackp <= 0) throw new FatalUnpackError('corrupted data');
            htab[--stackp] = htab[code]!;
            code = codetab[code]!;
          }
          finchar = htab[code]!;
          htab[--stackp] = finchar;
          let i = deStack - stackp;
          if (outpos + i >= OBUFSIZ) {
            do {
              if (i > OBUFSIZ - outpos) i = OBUFSIZ - outpos;
              if (i > 0) {
                outbuf.set(htab.subarray(stackp, stackp + i), outpos);
                outpos += i;
              }
              if (outpos >= OBUFSIZ) {
                out.write(outbuf.subarray(0, outpos));
                outpos = 0;
              }
              stackp += i;
              i = deStack - stackp;
            } while (i > 0);
          } else {
            outbuf.set(htab.subarray(stackp, stackp + i), outpos);
            outpos += i;
          }
          if (freeEnt < maxmaxcode) {
            codetab[freeEnt] = oldcode;
            htab[freeEnt] = finchar;
            freeEnt++;
          }
          oldcode = incode;
        }
        break;
      }
    } while (rsize > 0);
    if (outpos > 0) out.write(outbuf.subarray(0, outpos));
    return out.done();
  });
}

const LZMA = (() => {
  const NUM_POS_BITS_MAX = 4;
  const NUM_STATES = 12;
  const LEN_LOW = 2;
  const LEN_MID = LEN_LOW + (1 << (NUM_POS_BITS_MAX + 3));
  const LEN_HIGH = LEN_MID + (1 << (NUM_POS_BITS_MAX + 3));
  const NUM_LEN_PROBS = LEN_HIGH + (1 << 8);
  const IS_REP = NUM_STATES << NUM_POS_BITS_MAX;
  const IS_REP_G0 = IS_REP + NUM_STATES;
  const IS_REP_G1 = IS_REP_G0 + NUM_STATES;
  const IS_REP_G2 = IS_REP_G1 + NUM_STATES;
  const IS_REP_0_LONG = IS_REP_G2 + NUM_STATES;
  const POS_SLOT = IS_REP_0_LONG + (NUM_STATES << NUM_POS_BITS_MAX);
  const SPEC_POS = POS_SLOT + (4 << 6);
  const ALIGN = SPEC_POS + (1 << 7) - 14;
  const LEN_CODER = ALIGN + (1 << 4);
  const REP_LEN_CODER = LEN_CODER + NUM_LEN_PROBS;
  const LITERAL = REP_LEN_CODER + NUM_LEN_PROBS;
  return {
    LEN_LOW,
    LEN_MID,
    LEN_HIGH,
    IS_REP,
    IS_REP_G0,
    IS_REP_G1,
    IS_REP_G2,
    IS_REP_0_LONG,
    POS_SLOT,
    SPEC_POS,
    ALIGN,
    LEN_CODER,
    REP_LEN_CODER,
    LITERAL,
  };
})();

const nextState = [0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 4, 5];

/**
 * busybox's `unlzma` decoder (unpack_lzma_stream) for an LZMA-alone stream: its 13-byte header,
 * then range-coded data up to the size the header gives or its end mark. Its window is written
 * each time it fills (the dictionary's size), and at the end.
 */
export function unpackLzma(data: Uint8Array): Unpacked {
  const out = new UnpackWriter();
  if (data.length < 13 || data[0]! >= 9 * 5 * 5) return out.failed('bad lzma header');
  const header = Buffer.from(data.subarray(0, 13));
  const lc = header[0]! % 9;
  const pb = Math.floor(header[0]! / 9 / 5);
  const lp = Math.floor(header[0]! / 9) % 5;
  const posStateMask = (1 << pb) - 1;
  const literalPosMask = (1 << lp) - 1;
  const dictSize = header.readUInt32LE(1) || 1;
  const dstSize = header.readUInt32LE(5) + header.readUInt32LE(9) * 2 ** 32;
  const bufferSize = Math.min(dstSize, dictSize);
  // The window grows as it is written: a header may ask for 4 GiB that the data never fills.
  let buffer = new Uint8Array(Math.min(bufferSize, 1 << 16));
  const put = (pos: number, byte: number): void => {
    if (pos >= buffer.length) {
      const grown = new Uint8Array(Math.min(bufferSize, Math.max(buffer.length * 2, pos + 1)));
      grown.set(buffer);
      buffer = grown;
    }
    buffer[pos] = byte;
  };
  const p = new Uint16Array(LZMA.LITERAL + (0x300 << (lc + lp))).fill(1024);
  const input = new ByteReader(data, () => new FatalUnpackError('unexpected EOF'), 13);
  let code = 0;
  let range = 0;
  const normalize = (): void => {
    if (range < 1 << 24) {
      range = (range * 256) >>> 0;
      code = ((code << 8) | input.byte()) >>> 0;
    }
  };
  const isBit1 = (i: number): number => {
    normalize();
    const prob = p[i]!;
    const bound = prob * (range >>> 11);
    if (code < bound) {
      range = bound;
      p[i] = prob + ((2048 - prob) >> 5);
      return 0;
    }
    range = (range - bound) >>> 0;
    code = (code - bound) >>> 0;
    p[i] = prob - (prob >> 5);
    return 1;
  };
  const treeDecode = (base: number, levels: number): number => {
    let symbol = 1;
    for (let i = 0; i < levels; i++) symbol = symbol * 2 + isBit1(base + symbol);
    return symbol - (1 << levels);
  };
  let bufferPos = 0;
  let globalPos = 0;
  let previousByte = 0;
  let state = 0;
  let rep0 = 1;
  let rep1 = 1;
  let rep2 = 1;
  let rep3 = 1;
  const emit = (byte: number): void => {
    previousByte = byte;
    put(bufferPos++, byte);
    if (bufferPos === dictSize) {
      bufferPos = 0;
      globalPos += dictSize;
      out.write(buffer.subarray(0, dictSize));
    }
  };
  return out.settle(() => {
    for (let i = 0; i < 5; i++) {
      range = (range * 256) >>> 0;
      code = ((code << 8) | input.byte()) >>> 0;
    }
    range = 0xffffffff;
    while (globalPos + bufferPos < dstSize) {
      const posState = (bufferPos + globalPos) & posStateMask;
      if (!isBit1((state << 4) + posState)) {
        const prob = LZMA.LITERAL + 0x300 * ((((bufferPos + globalPos) & literalPosMask) << lc) + (previousByte >> (8 - lc)));
        let mi = 1;
        if (state >= 7) {
          let pos = (bufferPos - rep0) | 0;
          if (pos < 0) {
            pos = (pos + dictSize) | 0;
            if (pos < 0) return out.failed('corrupted data');
          }
          let matchByte = buffer[pos] ?? 0;
          do {
            matchByte <<= 1;
            let bit = matchByte & 0x100;
            const got = isBit1(prob + 0x100 + bit + mi);
            mi = mi * 2 + got;
            bit ^= got << 8;
            if (bit) break;
          } while (mi < 0x100);
        }
        while (mi < 0x100) mi = mi * 2 + isBit1(prob + mi);
        state = nextState[state]!;
        emit(mi & 0xff);
        continue;
      }
      let len: number;
      let lenBase: number;
      if (!isBit1(LZMA.IS_REP + state)) {
        rep3 = rep2;
        rep2 = rep1;
        rep1 = rep0;
        state = state < 7 ? 0 : 3;
        lenBase = LZMA.LEN_CODER;
      } else {
        if (!isBit1(LZMA.IS_REP_G0 + state)) {
          if (!isBit1(LZMA.IS_REP_0_LONG + (state << 4) + posState)) {
            state = state < 7 ? 9 : 11;
            if (!copyMatch(1)) return out.failed('corrupted data');
            continue;
          }
        } else {
          let distance = rep1;
          if (isBit1(LZMA.IS_REP_G1 + state)) {
            distance = rep2;
            if (isBit1(LZMA.IS_REP_G2 + state)) {
              distance = rep3;
              rep3 = rep2;
            }
            rep2 = rep1;
          }
          rep1 = rep0;
          rep0 = distance;
        }
        state = state < 7 ? 8 : 11;
        lenBase = LZMA.REP_LEN_CODER;
      }
      if (!isBit1(lenBase)) len = treeDecode(lenBase + LZMA.LEN_LOW + (posState << 3), 3);
      else if (!isBit1(lenBase + 1)) len = 8 + treeDecode(lenBase + LZMA.LEN_MID + (posState << 3), 3);
      else len = 16 + treeDecode(lenBase + LZMA.LEN_HIGH, 8);
      if (state < 4) {
        state += 7;
        const posSlot = treeDecode(LZMA.POS_SLOT + (Math.min(len, 3) << 6), 6);
        rep0 = posSlot;
        if (posSlot >= 4) {
          let numBits = (posSlot >> 1) - 1;
          rep0 = 2 | (posSlot & 1);
          let base: number;
          if (posSlot < 14) {
            rep0 = (rep0 << numBits) >>> 0;
            base = LZMA.SPEC_POS + rep0 - posSlot - 1;
          } else {
            for (; numBits !== 4; numBits--) {
              normalize();
              range >>>= 1;
              let bit = 0;
              if (code >= range) {
                code = (code - range) >>> 0;
                bit = 1;
              }
              rep0 = ((rep0 << 1) | bit) >>> 0;
            }
            rep0 = (rep0 << 4) >>> 0;
            base = LZMA.ALIGN;
          }
          let i2 = 1;
          let mi2 = 1;
          while (numBits--) {
            const bit = isBit1(base + mi2);
            mi2 = mi2 * 2 + bit;
            if (bit) rep0 = (rep0 | i2) >>> 0;
            i2 <<= 1;
          }
        }
        rep0 = (rep0 + 1) >>> 0;
        if ((rep0 | 0) <= 0) {
          if (rep0 === 0) break;
          return out.failed('corrupted data');
        }
      }
      if (!copyMatch(len + 2)) return out.failed('corrupted data');
    }
    out.write(buffer.subarray(0, bufferPos));
    return out.done();
  });

  /** Copies `len` bytes from rep0 back; false where the distance reaches outside the window. */
  function copyMatch(len: number): boolean {
    do {
      let pos = (bufferPos - rep0) | 0;
      if (pos < 0) {
        pos = (pos + dictSize) >>> 0;
        if (pos >= bufferSize) return false;
      }
      emit(buffer[pos] ?? 0);
      len--;
    } while (len !== 0 && bufferPos < dstSize);
    return true;
  }
}
