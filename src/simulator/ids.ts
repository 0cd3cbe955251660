import { randomBytes, randomUUID } from 'node:crypto';

/**
 * Source of identifiers: random by default, or a deterministic sequence from a numeric seed so
 * that two runs with the same seed hand out the same operation ids, uuids and secrets.
 */
export class IdSource {
  private state: number;

  constructor(private readonly seed?: number) {
    this.state = (seed ?? 0) >>> 0 || 0x9e3779b9;
  }

  /** A version-4 UUID. */
  uuid(): string {
    if (this.seed === undefined) return randomUUID();
    const b = this.bytes(16);
    b[6] = (b[6]! & 0x0f) | 0x40;
    b[8] = (b[8]! & 0x3f) | 0x80;
    const h = b.toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  /** A hex secret of `n` random bytes (operation fds secrets, trust token secrets). */
  secret(n = 32): string {
    return (this.seed === undefined ? randomBytes(n) : this.bytes(n)).toString('hex');
  }

  /** A MAC address in the 00:16:3e prefix LXD uses. */
  hwaddr(): string {
    const b = this.seed === undefined ? randomBytes(3) : this.bytes(3);
    return `00:16:3e:${[...b].map((x) => x.toString(16).padStart(2, '0')).join(':')}`;
  }

  /** A uniform float in [0, 1). */
  float(): number {
    return this.next() / 2 ** 32;
  }

  private bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = this.next() & 0xff;
    return out;
  }

  // mulberry32: tiny, fast, good enough for ids that only need to be distinct and repeatable.
  private next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
}
