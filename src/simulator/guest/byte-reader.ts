/**
 * Input bytes a decoder reads front to back (lzop's file, an LZO1X block, an LZMA stream): every
 * read is checked against the end, and a read past it throws what that format's program says
 * there (busybox's lzop: `short read`, an LZO1X block: `corrupted data`, unlzma: `unexpected EOF`).
 */
export class ByteReader<B extends Uint8Array = Uint8Array> {
  /**
   * @param pastEnd the error a read past the end throws
   * @param at where reading starts (default 0)
   */
  constructor(
    readonly data: B,
    private readonly pastEnd: () => Error,
    public at = 0,
  ) {}

  /** How many bytes are left to read. */
  get left(): number {
    return this.data.length - this.at;
  }

  byte(): number {
    if (this.at >= this.data.length) throw this.pastEnd();
    return this.data[this.at++]!;
  }

  /** The next `n` bytes, as a view of the data (a Buffer's is a Buffer). */
  bytes(n: number): B {
    if (n > this.data.length - this.at) throw this.pastEnd();
    return this.data.subarray(this.at, (this.at += n)) as B;
  }

  /** The next four bytes as a big-endian unsigned number. */
  u32be(): number {
    const b = this.bytes(4);
    return ((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0;
  }
}
