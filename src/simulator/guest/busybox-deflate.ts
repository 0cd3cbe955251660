/**
 * busybox 1.35's deflate (archival/gzip.c, its port of gzip 1.2.4's deflate.c, trees.c and bits.c),
 * as Debian builds it: without FEATURE_GZIP_LEVELS, so every `-1`..`-9` is accepted and ignored and
 * the one configuration is gzip's `-6` (chains of 128, lazy matching below 16), and with GZIP_FAST=2
 * (a 15-bit hash, blocks of up to 32 KiB items). zlib's deflate chooses other matches and other
 * block ends, so only a port writes busybox's bytes. Nothing recurses on the size of the input.
 */

const WSIZE = 0x8000;
const WMASK = WSIZE - 1;
/** The sliding window: input is read into it 64 KiB at a time, and its upper half moves down. */
const WINDOW_SIZE = 2 * WSIZE;
const MIN_MATCH = 3;
const MAX_MATCH = 258;
const MIN_LOOKAHEAD = MAX_MATCH + MIN_MATCH + 1;
const MAX_DIST = WSIZE - MIN_LOOKAHEAD;
const HASH_BITS = 15;
const HASH_SIZE = 1 << HASH_BITS;
const HASH_MASK = HASH_SIZE - 1;
const H_SHIFT = Math.floor((HASH_BITS + MIN_MATCH - 1) / MIN_MATCH);
/** A match of 3 further back than this is not worth its distance code. */
const TOO_FAR = 4096;
const LIT_BUFSIZE = 0x8000;
const DIST_BUFSIZE = 0x8000;

/** What busybox 1.35 uses when FEATURE_GZIP_LEVELS is off: gzip's level 6. */
const MAX_CHAIN_LENGTH = 128;
const MAX_LAZY_MATCH = 16;
const GOOD_MATCH = 8;
const NICE_MATCH = 128;

const MAX_BITS = 15;
const MAX_BL_BITS = 7;
const LENGTH_CODES = 29;
const LITERALS = 256;
const END_BLOCK = 256;
const L_CODES = LITERALS + 1 + LENGTH_CODES;
const D_CODES = 30;
const BL_CODES = 19;
const HEAP_SIZE = 2 * L_CODES + 1;
const REP_3_6 = 16;
const REPZ_3_10 = 17;
const REPZ_11_138 = 18;
const STORED_BLOCK = 0;
const STATIC_TREES = 1;
const DYN_TREES = 2;

const extraLbits = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const extraDbits = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
const extraBlbits = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7];
const blOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/**
 * A Huffman tree as gzip keeps it: `fc` is a node's frequency until its code is made, then its code;
 * `dl` is its father until its length is made, then its length (the C unions, whose reuse the
 * algorithm relies on).
 */
interface Tree {
  fc: Uint16Array;
  dl: Uint16Array;
}

interface TreeDesc {
  tree: Tree;
  staticTree: Tree | undefined;
  extraBits: number[];
  extraBase: number;
  elems: number;
  maxLength: number;
  maxCode: number;
}

const newTree = (size: number): Tree => ({ fc: new Uint16Array(size), dl: new Uint16Array(size) });

function bitReverse(code: number, len: number): number {
  let res = 0;
  for (;;) {
    res |= code & 1;
    if (--len <= 0) return res;
    code >>>= 1;
    res <<= 1;
  }
}

/** gen_codes: canonical codes (bit-reversed, as they are sent) from the lengths and the count per length. */
function genCodes(tree: Tree, maxCode: number, blCount: Uint16Array): void {
  const nextCode = new Uint16Array(MAX_BITS + 1);
  let code = 0;
  for (let bits = 1; bits <= MAX_BITS; bits++) nextCode[bits] = code = ((code + blCount[bits - 1]!) << 1) & 0xffff;
  for (let n = 0; n <= maxCode; n++) {
    const len = tree.dl[n]!;
    if (len === 0) continue;
    tree.fc[n] = bitReverse(nextCode[len]!++, len);
  }
}

/** ct_init's tables, the same for every stream. */
const lengthCode = new Uint8Array(MAX_MATCH - MIN_MATCH + 1);
const baseLength = new Int32Array(LENGTH_CODES);
const distCode = new Uint8Array(512);
const baseDist = new Int32Array(D_CODES);
const staticLtree = newTree(L_CODES + 2);
const staticDtree = newTree(D_CODES);
{
  let length = 0;
  let code = 0;
  for (; code < LENGTH_CODES - 1; code++) {
    baseLength[code] = length;
    for (let n = 0; n < 1 << extraLbits[code]!; n++) lengthCode[length++] = code;
  }
  // Length 258 could be code 284 with 5 extra bits or code 285: 285 is shorter.
  lengthCode[length - 1] = code;
  let dist = 0;
  for (code = 0; code < 16; code++) {
    baseDist[code] = dist;
    for (let n = 0; n < 1 << extraDbits[code]!; n++) distCode[dist++] = code;
  }
  dist >>= 7;
  for (; code < D_CODES; code++) {
    baseDist[code] = dist << 7;
    for (let n = 0; n < 1 << (extraDbits[code]! - 7); n++) distCode[256 + dist++] = code;
  }
  let n = 0;
  while (n <= 143) staticLtree.dl[n++] = 8;
  while (n <= 255) staticLtree.dl[n++] = 9;
  while (n <= 279) staticLtree.dl[n++] = 7;
  while (n <= 287) staticLtree.dl[n++] = 8;
  const blCount = new Uint16Array(MAX_BITS + 1);
  blCount[7] = 279 - 255;
  blCount[8] = 143 + 1 + (287 - 279);
  blCount[9] = 255 - 143;
  // Codes 286 and 287 do not exist, but make the tree canonical.
  genCodes(staticLtree, L_CODES + 1, blCount);
  for (n = 0; n < D_CODES; n++) {
    staticDtree.dl[n] = 5;
    staticDtree.fc[n] = bitReverse(n, 5);
  }
}

const dCode = (dist: number): number => (dist < 256 ? distCode[dist]! : distCode[256 + (dist >> 7)]!);

/** The compressed bytes as they are made, bits least significant first. */
class BitWriter {
  bytes = new Uint8Array(1 << 16);
  length = 0;
  private bitBuf = 0;
  private bitCount = 0;

  byte(b: number): void {
    if (this.length === this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bytes[this.length++] = b;
  }

  bits(value: number, length: number): void {
    this.bitBuf |= value << this.bitCount;
    this.bitCount += length;
    while (this.bitCount >= 8) {
      this.byte(this.bitBuf & 0xff);
      this.bitBuf >>>= 8;
      this.bitCount -= 8;
    }
  }

  /** bi_windup: the bits of an incomplete byte, and a byte boundary. */
  windup(): void {
    if (this.bitCount > 0) this.byte(this.bitBuf & 0xff);
    this.bitBuf = 0;
    this.bitCount = 0;
  }
}

/** One stream's deflate state (gzip.c's globals). */
class Deflater {
  private readonly out = new BitWriter();
  private inPos = 0;
  private eofile = false;

  // The window has room past its end: near the end of the input the match loop reads up to
  // MAX_MATCH bytes beyond the data, which in C is what the window held before (or zeros).
  private readonly window = new Uint8Array(WINDOW_SIZE + MAX_MATCH + MIN_MATCH);
  private readonly prev = new Uint16Array(WSIZE);
  private readonly head = new Uint16Array(HASH_SIZE);
  private blockStart = 0;
  private insH = 0;
  private prevLength = 0;
  private strstart = 0;
  private matchStart = 0;
  private lookahead = 0;

  private readonly lBuf = new Uint8Array(LIT_BUFSIZE);
  private readonly dBuf = new Uint16Array(DIST_BUFSIZE);
  /** Whether each item in lBuf is a match (gzip's flag_buf, one bit an item). */
  private readonly isMatch = new Uint8Array(LIT_BUFSIZE);
  private lastLit = 0;
  private lastDist = 0;

  private readonly heap = new Int32Array(HEAP_SIZE);
  private heapLen = 0;
  private heapMax = 0;
  private readonly depth = new Uint8Array(2 * L_CODES + 1);
  private readonly blCount = new Uint16Array(MAX_BITS + 1);
  private optLen = 0;
  private staticLen = 0;

  private readonly lDesc: TreeDesc = {
    tree: newTree(HEAP_SIZE),
    staticTree: staticLtree,
    extraBits: extraLbits,
    extraBase: LITERALS + 1,
    elems: L_CODES,
    maxLength: MAX_BITS,
    maxCode: 0,
  };
  private readonly dDesc: TreeDesc = {
    tree: newTree(2 * D_CODES + 1),
    staticTree: staticDtree,
    extraBits: extraDbits,
    extraBase: 0,
    elems: D_CODES,
    maxLength: MAX_BITS,
    maxCode: 0,
  };
  private readonly blDesc: TreeDesc = {
    tree: newTree(2 * BL_CODES + 1),
    staticTree: undefined,
    extraBits: extraBlbits,
    extraBase: 0,
    elems: BL_CODES,
    maxLength: MAX_BL_BITS,
    maxCode: 0,
  };

  constructor(private readonly input: Uint8Array) {
    this.initBlock();
  }

  /** file_read from a regular file: as much as asked for, while there is input. */
  private read(at: number, size: number): number {
    const n = Math.min(size, this.input.length - this.inPos);
    this.window.set(this.input.subarray(this.inPos, this.inPos + n), at);
    this.inPos += n;
    return n;
  }

  private fillWindow(): void {
    let more = WINDOW_SIZE - this.lookahead - this.strstart;
    if (this.strstart >= WSIZE + MAX_DIST) {
      this.window.copyWithin(0, WSIZE, WINDOW_SIZE);
      this.matchStart -= WSIZE;
      this.strstart -= WSIZE;
      this.blockStart -= WSIZE;
      const { head, prev } = this;
      for (let n = 0; n < HASH_SIZE; n++) {
        const m = head[n]!;
        head[n] = m >= WSIZE ? m - WSIZE : 0;
      }
      for (let n = 0; n < WSIZE; n++) {
        const m = prev[n]!;
        prev[n] = m >= WSIZE ? m - WSIZE : 0;
      }
      more += WSIZE;
    }
    if (!this.eofile) {
      const n = this.read(this.strstart + this.lookahead, more);
      if (n === 0) this.eofile = true;
      else this.lookahead += n;
    }
  }

  private fillWindowIfNeeded(): void {
    while (this.lookahead < MIN_LOOKAHEAD && !this.eofile) this.fillWindow();
  }

  /** The longest match at strstart along the hash chain from curMatch, longer than prevLength; sets matchStart. */
  private longestMatch(curMatch: number): number {
    const w = this.window;
    const prev = this.prev;
    let chainLength = MAX_CHAIN_LENGTH;
    const scan = this.strstart;
    let bestLen = this.prevLength;
    const limit = this.strstart > MAX_DIST ? this.strstart - MAX_DIST : 0;
    const strend = this.strstart + MAX_MATCH;
    let scanEnd1 = w[scan + bestLen - 1];
    let scanEnd = w[scan + bestLen];
    if (this.prevLength >= GOOD_MATCH) chainLength >>= 2;
    do {
      const match = curMatch;
      if (w[match + bestLen] !== scanEnd || w[match + bestLen - 1] !== scanEnd1 || w[match] !== w[scan] || w[match + 1] !== w[scan + 1]) {
        continue;
      }
      // The third bytes are equal when the first two are and the hashes are (HASH_BITS >= 8).
      let s = scan + 2;
      let m = match + 2;
      while (
        w[++s] === w[++m] &&
        w[++s] === w[++m] &&
        w[++s] === w[++m] &&
        w[++s] === w[++m] &&
        w[++s] === w[++m] &&
        w[++s] === w[++m] &&
        w[++s] === w[++m] &&
        w[++s] === w[++m] &&
        s < strend
      );
      const len = MAX_MATCH - (strend - s);
      if (len > bestLen) {
        this.matchStart = curMatch;
        bestLen = len;
        if (len >= NICE_MATCH) break;
        scanEnd1 = w[scan + bestLen - 1];
        scanEnd = w[scan + bestLen];
      }
    } while ((curMatch = prev[curMatch & WMASK]!) > limit && --chainLength !== 0);
    return bestLen;
  }

  private initBlock(): void {
    this.lDesc.tree.fc.fill(0, 0, L_CODES);
    this.dDesc.tree.fc.fill(0, 0, D_CODES);
    this.blDesc.tree.fc.fill(0, 0, BL_CODES);
    this.lDesc.tree.fc[END_BLOCK] = 1;
    this.optLen = this.staticLen = 0;
    this.lastLit = this.lastDist = 0;
  }

  /** Whether node n sorts before node m: less frequent, or as frequent and no deeper. */
  private smaller(tree: Tree, n: number, m: number): boolean {
    const fn = tree.fc[n]!;
    const fm = tree.fc[m]!;
    return fn < fm || (fn === fm && this.depth[n]! <= this.depth[m]!);
  }

  private pqdownheap(tree: Tree, k: number): void {
    const heap = this.heap;
    const v = heap[k]!;
    let j = k << 1;
    while (j <= this.heapLen) {
      if (j < this.heapLen && this.smaller(tree, heap[j + 1]!, heap[j]!)) j++;
      if (this.smaller(tree, v, heap[j]!)) break;
      heap[k] = heap[j]!;
      k = j;
      j <<= 1;
    }
    heap[k] = v;
  }

  /** gen_bitlen: the lengths from the tree, kept to maxLength as gzip does, and the block's bit counts. */
  private genBitlen(desc: TreeDesc): void {
    const { tree, staticTree, extraBits, extraBase, maxCode, maxLength } = desc;
    const heap = this.heap;
    const blCount = this.blCount;
    let overflow = 0;
    blCount.fill(0);
    tree.dl[heap[this.heapMax]!] = 0;
    let h: number;
    for (h = this.heapMax + 1; h < HEAP_SIZE; h++) {
      const n = heap[h]!;
      let bits = tree.dl[tree.dl[n]!]! + 1;
      if (bits > maxLength) {
        bits = maxLength;
        overflow++;
      }
      tree.dl[n] = bits;
      if (n > maxCode) continue;
      blCount[bits]!++;
      const xbits = n >= extraBase ? extraBits[n - extraBase]! : 0;
      const f = tree.fc[n]!;
      this.optLen += f * (bits + xbits);
      if (staticTree) this.staticLen += f * (staticTree.dl[n]! + xbits);
    }
    if (overflow === 0) return;
    do {
      let bits = maxLength - 1;
      while (blCount[bits] === 0) bits--;
      blCount[bits]!--;
      blCount[bits + 1]! += 2;
      blCount[maxLength]!--;
      overflow -= 2;
    } while (overflow > 0);
    for (let bits = maxLength; bits !== 0; bits--) {
      let n = blCount[bits]!;
      while (n !== 0) {
        const m = heap[--h]!;
        if (m > maxCode) continue;
        if (tree.dl[m] !== bits) {
          this.optLen += (bits - tree.dl[m]!) * tree.fc[m]!;
          tree.dl[m] = bits;
        }
        n--;
      }
    }
  }

  private buildTree(desc: TreeDesc): void {
    const { tree, staticTree, elems } = desc;
    const heap = this.heap;
    let maxCode = -1;
    let node = elems;
    this.heapLen = 0;
    this.heapMax = HEAP_SIZE;
    for (let n = 0; n < elems; n++) {
      if (tree.fc[n] !== 0) {
        heap[++this.heapLen] = maxCode = n;
        this.depth[n] = 0;
      } else {
        tree.dl[n] = 0;
      }
    }
    // Deflate needs two codes at least, so that at least one bit is sent.
    while (this.heapLen < 2) {
      const added = (heap[++this.heapLen] = maxCode < 2 ? ++maxCode : 0);
      tree.fc[added] = 1;
      this.depth[added] = 0;
      this.optLen--;
      if (staticTree) this.staticLen -= staticTree.dl[added]!;
    }
    desc.maxCode = maxCode;
    for (let n = this.heapLen >> 1; n >= 1; n--) this.pqdownheap(tree, n);
    do {
      const n = heap[1]!;
      heap[1] = heap[this.heapLen--]!;
      this.pqdownheap(tree, 1);
      const m = heap[1]!;
      heap[--this.heapMax] = n;
      heap[--this.heapMax] = m;
      tree.fc[node] = tree.fc[n]! + tree.fc[m]!;
      this.depth[node] = Math.max(this.depth[n]!, this.depth[m]!) + 1;
      tree.dl[n] = tree.dl[m] = node;
      heap[1] = node++;
      this.pqdownheap(tree, 1);
    } while (this.heapLen >= 2);
    heap[--this.heapMax] = heap[1]!;
    this.genBitlen(desc);
    genCodes(tree, maxCode, this.blCount);
  }

  /** scan_tree: the bit-length tree's frequencies for sending this tree. */
  private scanTree(tree: Tree, maxCode: number): void {
    const bl = this.blDesc.tree.fc;
    let prevlen = -1;
    let nextlen = tree.dl[0]!;
    let count = 0;
    let maxCount = 7;
    let minCount = 4;
    if (nextlen === 0) {
      maxCount = 138;
      minCount = 3;
    }
    tree.dl[maxCode + 1] = 0xffff;
    for (let n = 0; n <= maxCode; n++) {
      const curlen = nextlen;
      nextlen = tree.dl[n + 1]!;
      if (++count < maxCount && curlen === nextlen) continue;
      if (count < minCount) bl[curlen]! += count;
      else if (curlen !== 0) {
        if (curlen !== prevlen) bl[curlen]!++;
        bl[REP_3_6]!++;
      } else if (count <= 10) bl[REPZ_3_10]!++;
      else bl[REPZ_11_138]!++;
      count = 0;
      prevlen = curlen;
      maxCount = 7;
      minCount = 4;
      if (nextlen === 0) {
        maxCount = 138;
        minCount = 3;
      } else if (curlen === nextlen) {
        maxCount = 6;
        minCount = 3;
      }
    }
  }

  private sendCode(c: number, tree: Tree): void {
    this.out.bits(tree.fc[c]!, tree.dl[c]!);
  }

  /** send_tree: a tree's lengths, coded with the bit-length tree. */
  private sendTree(tree: Tree, maxCode: number): void {
    const bl = this.blDesc.tree;
    let prevlen = -1;
    let nextlen = tree.dl[0]!;
    let count = 0;
    let maxCount = 7;
    let minCount = 4;
    if (nextlen === 0) {
      maxCount = 138;
      minCount = 3;
    }
    for (let n = 0; n <= maxCode; n++) {
      const curlen = nextlen;
      nextlen = tree.dl[n + 1]!;
      if (++count < maxCount && curlen === nextlen) continue;
      if (count < minCount) {
        do this.sendCode(curlen, bl);
        while (--count);
      } else if (curlen !== 0) {
        if (curlen !== prevlen) {
          this.sendCode(curlen, bl);
          count--;
        }
        this.sendCode(REP_3_6, bl);
        this.out.bits(count - 3, 2);
      } else if (count <= 10) {
        this.sendCode(REPZ_3_10, bl);
        this.out.bits(count - 3, 3);
      } else {
        this.sendCode(REPZ_11_138, bl);
        this.out.bits(count - 11, 7);
      }
      count = 0;
      prevlen = curlen;
      if (nextlen === 0) {
        maxCount = 138;
        minCount = 3;
      } else if (curlen === nextlen) {
        maxCount = 6;
        minCount = 3;
      } else {
        maxCount = 7;
        minCount = 4;
      }
    }
  }

  /** The index in blOrder of the last bit-length code to send. */
  private buildBlTree(): number {
    this.scanTree(this.lDesc.tree, this.lDesc.maxCode);
    this.scanTree(this.dDesc.tree, this.dDesc.maxCode);
    this.buildTree(this.blDesc);
    let maxBlindex: number;
    // Four bit-length codes at least are sent.
    for (maxBlindex = BL_CODES - 1; maxBlindex >= 3; maxBlindex--) {
      if (this.blDesc.tree.dl[blOrder[maxBlindex]!] !== 0) break;
    }
    this.optLen += 3 * (maxBlindex + 1) + 5 + 5 + 4;
    return maxBlindex;
  }

  private sendAllTrees(lcodes: number, dcodes: number, blcodes: number): void {
    this.out.bits(lcodes - 257, 5);
    this.out.bits(dcodes - 1, 5);
    this.out.bits(blcodes - 4, 4);
    for (let rank = 0; rank < blcodes; rank++) this.out.bits(this.blDesc.tree.dl[blOrder[rank]!]!, 3);
    this.sendTree(this.lDesc.tree, lcodes - 1);
    this.sendTree(this.dDesc.tree, dcodes - 1);
  }

  /** ct_tally: records a literal (dist 0) or a match; whether the block should end here. */
  private tally(dist: number, lc: number): boolean {
    const lx = this.lastLit++;
    this.lBuf[lx] = lc;
    if (dist === 0) {
      this.lDesc.tree.fc[lc]!++;
      this.isMatch[lx] = 0;
    } else {
      dist--;
      this.lDesc.tree.fc[lengthCode[lc]! + LITERALS + 1]!++;
      this.dDesc.tree.fc[dCode(dist)]!++;
      this.dBuf[this.lastDist++] = dist;
      this.isMatch[lx] = 1;
    }
    // Every 4096 items, end the block early if it compresses well already.
    if ((this.lastLit & 0xfff) === 0) {
      let outLength = this.lastLit * 8;
      const inLength = this.strstart - this.blockStart;
      for (let dcode = 0; dcode < D_CODES; dcode++) outLength += this.dDesc.tree.fc[dcode]! * (5 + extraDbits[dcode]!);
      outLength = Math.floor(outLength / 8);
      if (this.lastDist < this.lastLit >>> 1 && outLength < Math.floor(inLength / 2)) return true;
    }
    return this.lastLit === LIT_BUFSIZE - 1 || this.lastDist === DIST_BUFSIZE;
  }

  private compressBlock(ltree: Tree, dtree: Tree): void {
    let dx = 0;
    for (let lx = 0; lx < this.lastLit; lx++) {
      let lc = this.lBuf[lx]!;
      if (!this.isMatch[lx]) {
        this.sendCode(lc, ltree);
        continue;
      }
      let code = lengthCode[lc]!;
      this.sendCode(code + LITERALS + 1, ltree);
      let extra = extraLbits[code]!;
      if (extra !== 0) {
        lc -= baseLength[code]!;
        this.out.bits(lc, extra);
      }
      let dist = this.dBuf[dx++]!;
      code = dCode(dist);
      this.sendCode(code, dtree);
      extra = extraDbits[code]!;
      if (extra !== 0) {
        dist -= baseDist[code]!;
        this.out.bits(dist, extra);
      }
    }
    this.sendCode(END_BLOCK, ltree);
  }

  /** flush_block: the block stored, with the static trees or with its own, whichever is shortest (ties as gzip breaks them). */
  private flushBlock(eof: boolean): void {
    const storedLen = this.strstart - this.blockStart;
    const eofBit = eof ? 1 : 0;
    this.buildTree(this.lDesc);
    this.buildTree(this.dDesc);
    const maxBlindex = this.buildBlTree();
    let optLenb = (this.optLen + 3 + 7) >>> 3;
    const staticLenb = (this.staticLen + 3 + 7) >>> 3;
    if (staticLenb <= optLenb) optLenb = staticLenb;
    // Once the window has moved past the block's start, its bytes are gone and it cannot be stored.
    if (storedLen + 4 <= optLenb && this.blockStart >= 0) {
      this.out.bits((STORED_BLOCK << 1) + eofBit, 3);
      this.out.windup();
      this.out.byte(storedLen & 0xff);
      this.out.byte((storedLen >> 8) & 0xff);
      this.out.byte(~storedLen & 0xff);
      this.out.byte((~storedLen >> 8) & 0xff);
      for (let i = 0; i < storedLen; i++) this.out.byte(this.window[this.blockStart + i]!);
    } else if (staticLenb === optLenb) {
      this.out.bits((STATIC_TREES << 1) + eofBit, 3);
      this.compressBlock(staticLtree, staticDtree);
    } else {
      this.out.bits((DYN_TREES << 1) + eofBit, 3);
      this.sendAllTrees(this.lDesc.maxCode + 1, this.dDesc.maxCode + 1, maxBlindex + 1);
      this.compressBlock(this.lDesc.tree, this.dDesc.tree);
    }
    this.initBlock();
    if (eof) this.out.windup();
  }

  /** INSERT_STRING: puts the string at s in its hash chain; the chain's previous head. */
  private insertString(s: number): number {
    this.insH = ((this.insH << H_SHIFT) ^ this.window[s + MIN_MATCH - 1]!) & HASH_MASK;
    const head = this.head[this.insH]!;
    this.prev[s & WMASK] = head;
    this.head[this.insH] = s;
    return head;
  }

  /** lm_init, then deflate(): lazy matching, a match taken only if the next position has no longer one. */
  run(): Uint8Array {
    this.lookahead = this.read(0, WINDOW_SIZE);
    if (this.lookahead === 0) this.eofile = true;
    else {
      this.fillWindowIfNeeded();
      for (let j = 0; j < MIN_MATCH - 1; j++) this.insH = ((this.insH << H_SHIFT) ^ this.window[j]!) & HASH_MASK;
    }
    let matchAvailable = false;
    let matchLength = MIN_MATCH - 1;
    while (this.lookahead !== 0) {
      const hashHead = this.insertString(this.strstart);
      this.prevLength = matchLength;
      const prevMatch = this.matchStart;
      matchLength = MIN_MATCH - 1;
      if (hashHead !== 0 && this.prevLength < MAX_LAZY_MATCH && this.strstart - hashHead <= MAX_DIST) {
        // Window index 0 is never matched (so the first string is not matched with itself).
        matchLength = this.longestMatch(hashHead);
        if (matchLength > this.lookahead) matchLength = this.lookahead;
        if (matchLength === MIN_MATCH && this.strstart - this.matchStart > TOO_FAR) matchLength--;
      }
      if (this.prevLength >= MIN_MATCH && matchLength <= this.prevLength) {
        const flush = this.tally(this.strstart - 1 - prevMatch, this.prevLength - MIN_MATCH);
        this.lookahead -= this.prevLength - 1;
        this.prevLength -= 2;
        do {
          this.strstart++;
          this.insertString(this.strstart);
        } while (--this.prevLength !== 0);
        matchAvailable = false;
        matchLength = MIN_MATCH - 1;
        this.strstart++;
        if (flush) {
          this.flushBlock(false);
          this.blockStart = this.strstart;
        }
      } else if (matchAvailable) {
        if (this.tally(0, this.window[this.strstart - 1]!)) {
          this.flushBlock(false);
          this.blockStart = this.strstart;
        }
        this.strstart++;
        this.lookahead--;
      } else {
        matchAvailable = true;
        this.strstart++;
        this.lookahead--;
      }
      this.fillWindowIfNeeded();
    }
    if (matchAvailable) this.tally(0, this.window[this.strstart - 1]!);
    this.flushBlock(true);
    return this.out.bytes.subarray(0, this.out.length);
  }
}

/** The raw deflate data busybox 1.35's gzip writes for these bytes, whatever level it was given. */
export function busyboxDeflate(data: Uint8Array): Buffer {
  const bytes = new Deflater(data).run();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}
