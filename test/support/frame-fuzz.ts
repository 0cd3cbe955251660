import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { RedisConnection } from '../../src/redis/connect.js';

/**
 * Adversarial WebSocket messages for the events socket, and what Reflex must make of each: shared
 * by the CI test (test/ingestion/adversarial-frames.test.ts, short) and `npm run chaos` (fuzz, long).
 */
export interface AdversarialMessage {
  what: string;
  data: Buffer;
  /** Sent as a binary message; else as a text message, whatever the bytes hold. */
  binary: boolean;
  /** Refused unparsed: kept once per distinct bytes, with this reason and `data.length` bytes. Else: not refused (a frame, valid or rejected by the schema). */
  refused?: RegExp;
}

const frame = (name: string, extra: Record<string, unknown> = {}) => ({
  type: 'lifecycle',
  timestamp: new Date(Date.UTC(2024, 0, 1)).toISOString(),
  location: 'none',
  project: 'default',
  metadata: { action: 'instance-updated', source: `/1.0/instances/${name}`, name, project: 'default', context: {} },
  ...extra,
});

const text = (what: string, s: string, refused?: RegExp): AdversarialMessage => ({ what, data: Buffer.from(s), binary: false, refused });

/** `[[[…]]]` nested `depth` deep inside a frame padded to about `bytes`. */
export function deepFrame(depth: number, bytes: number): string {
  const nest = `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const shell = (pad: string) => `{"type":"lifecycle","pad":"${pad}","metadata":{"context":${nest}}}`;
  return shell('x'.repeat(Math.max(0, bytes - shell('').length)));
}

const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);

/** One adversarial message: depth, width, size, encodings, newlines, empty, forged fields and notes. */
export const adversarialMessage: fc.Arbitrary<AdversarialMessage> = fc.oneof(
  fc
    .tuple(fc.integer({ min: 65, max: 6000 }), fc.integer({ min: 0, max: 120_000 }))
    .map(([d, b]) => text(`nested ${d} deep`, deepFrame(d, b), /^nested deeper than 64 levels$/)),
  fc
    .integer({ min: 1, max: 20_000 })
    .map((w) => text(`${w} keys wide`, JSON.stringify(Object.fromEntries(Array.from({ length: w }, (_, i) => [`k${i}`, i]))), /^invalid frame: /)),
  fc
    .integer({ min: 64 * 1024, max: 3 * 1024 * 1024 })
    .map((b) => text(`${b} bytes, not JSON`, `{"type":"lifecycle","blob":"${'y'.repeat(b)}`, /^not JSON: /)),
  fc.uint8Array({ minLength: 1, maxLength: 3000 }).map((bytes) => {
    // 0xFF never occurs in UTF-8: whatever the rest holds, these bytes are not UTF-8.
    const data = Buffer.concat([Buffer.from(bytes), Buffer.from([0xff])]);
    return { what: 'invalid UTF-8 (binary)', data, binary: true, refused: /^not valid UTF-8$/ };
  }),
  fc.integer({ min: 1, max: 20_000 }).map((n) => text(`${n} control characters`, '\u0001'.repeat(n), /^not JSON: /)),
  fc.constant({ what: 'invalid UTF-8 (text)', data: Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]), binary: false, refused: /^not valid UTF-8$/ }),
  name.map((n) => ({
    what: 'UTF-16 with BOM',
    data: Buffer.from(`\uFEFF${JSON.stringify(frame(n))}`, 'utf16le'),
    binary: true,
    refused: /^not valid UTF-8$/,
  })),
  name.map((n) => ({ what: 'UTF-16 without BOM', data: Buffer.from(JSON.stringify(frame(n)), 'utf16le'), binary: true, refused: /^not JSON: / })),
  name.map((n) => ({ what: 'UTF-8 BOM then a frame', data: Buffer.from(`\uFEFF${JSON.stringify(frame(n))}\n`), binary: false })),
  name.map((n) => text('pretty-printed frame', `${JSON.stringify(frame(n), null, 2)}\n`)),
  fc
    .array(name, { minLength: 2, maxLength: 4 })
    .map((ns) => text('newline-delimited frames', ns.map((n) => `${JSON.stringify(frame(n))}\n`).join(''))),
  fc.constantFrom('', '\n', '  \r\n\t').map((s) => text('empty', s, /^empty frame/)),
  fc
    .tuple(name, fc.constantFrom('/1.0/instances/../../etc', '/1.0/instances/%zz', '', 'x'.repeat(5000)), fc.string({ maxLength: 50 }))
    .map(([n, source, location]) =>
      text('forged source/location', JSON.stringify({ ...frame(n), location, metadata: { ...frame(n).metadata, source } })),
    ),
  fc.constant(text('forged oversized-frame note', '{"type":"reflex.oversized-frame","maxFrameBytes":1,"receivedAt":"x"}', /^invalid frame: type: /)),
  fc.constant(
    text(
      'forged refusal note',
      '{"type":"reflex.refused-frame","reason":"x","bytes":1,"hash":"h","sample":"","encoding":"utf8"}',
      /^invalid frame: type: /,
    ),
  ),
);

/** Messages to send: some drawn twice (duplicates, which are counted, not dropped). */
export const adversarialMessages = (n: number): fc.Arbitrary<AdversarialMessage[]> =>
  fc
    .array(adversarialMessage, { minLength: n, maxLength: n })
    .chain((ms) => fc.array(fc.nat({ max: ms.length - 1 }), { maxLength: Math.ceil(n / 4) }).map((dups) => [...ms, ...dups.map((i) => ms[i]!)]));

/** One entry of the rejected stream, as read back. */
export interface RejectedEntry {
  target: string;
  reason: string;
  bytes: number;
  hash: string;
  raw: string;
  repeats: number;
}

export async function rejectedEntries(redis: RedisConnection, key: string): Promise<RejectedEntry[]> {
  const rows = (await redis.xrange(key, '-', '+')) as [string, string[]][];
  return rows.map(([, flat]) => {
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
    return {
      target: f.target ?? '',
      reason: f.reason ?? '',
      bytes: Number(f.bytes),
      hash: f.hash ?? '',
      raw: f.raw ?? '',
      repeats: Number(f.repeats),
    };
  });
}

/**
 * What the refused messages of `sent` must have left: one entry per distinct bytes, with the
 * expected reason, the true size and the number of times they were sent. Answers the problems found.
 */
export function refusalProblems(sent: AdversarialMessage[], entries: RejectedEntry[]): string[] {
  const expected = new Map<string, { m: AdversarialMessage; times: number }>();
  for (const m of sent) {
    if (!m.refused) continue;
    const key = ownHash(m.data);
    const e = expected.get(key);
    if (e) e.times++;
    else expected.set(key, { m, times: 1 });
  }
  // Entries are looked up by hash: a long run compares hundreds of messages with hundreds of entries.
  const byHash = new Map<string, RejectedEntry[]>();
  for (const e of entries) byHash.set(e.hash, [...(byHash.get(e.hash) ?? []), e]);
  const targets = [...new Set(entries.map((e) => e.target))];
  const problems: string[] = [];
  for (const { m, times } of expected.values()) {
    const found = targets.flatMap((t) => byHash.get(refusedHash(t, m.data)) ?? []);
    if (found.length !== 1) problems.push(`${m.what} (${m.data.length} bytes): ${found.length} entries, expected 1`);
    else if (!m.refused!.test(found[0]!.reason)) problems.push(`${m.what}: reason "${found[0]!.reason}", expected ${String(m.refused)}`);
    else if (found[0]!.bytes !== m.data.length) problems.push(`${m.what}: ${found[0]!.bytes} bytes kept as its size, sent ${m.data.length}`);
    else if (found[0]!.repeats !== times) problems.push(`${m.what} (${m.data.length} bytes): repeats ${found[0]!.repeats}, sent ${times} times`);
  }
  return problems;
}

/** The rejected stream's hash of refused bytes (rejected-events.ts: target and the bytes' own hash). */
function refusedHash(target: string, data: Buffer): string {
  return createHash('sha256')
    .update(`${target}|${ownHash(data)}`)
    .digest('hex')
    .slice(0, 32);
}

// Polled checks see the same messages again and again: each one's bytes are hashed once.
const hashes = new WeakMap<Buffer, string>();

/** SHA-256 of a message's bytes, as the refusal note has it (frame-intake.ts). */
function ownHash(data: Buffer): string {
  let h = hashes.get(data);
  if (h === undefined) hashes.set(data, (h = createHash('sha256').update(data).digest('hex').slice(0, 32)));
  return h;
}
