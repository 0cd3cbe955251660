import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { framesOfMessage } from '../../src/events/frame-intake.js';
import { readRefusedNote } from '../../src/events/refused-frame.js';
import { limitFrameSize } from '../../src/events/frame-size.js';
import { decodeFrame } from '../../src/events/frame.js';
import { jsonShape, parseBoundedJson, valueDepth } from '../../src/input/json-bounds.js';
import { adversarialMessage, deepFrame } from '../support/frame-fuzz.js';

const frame = { type: 'lifecycle', timestamp: '2024-01-01T00:00:00Z', metadata: { action: 'instance-updated', source: '/1.0/instances/a' } };
const take = (s: string | Buffer) => framesOfMessage(Buffer.isBuffer(s) ? s : Buffer.from(s), Date.now());

describe('JSON bounds, measured on the text before anything parses it', () => {
  it('measures the nesting of any JSON value as the parsed value has it, and counts top-level values', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 12 }), (v) => {
        const text = JSON.stringify(v);
        const measured = jsonShape(text, { maxDepth: 100 });
        expect(measured).toEqual({ ok: true, shape: { depth: valueDepth(v, 100), values: 1 } });
        expect(jsonShape(`${text}\n${text}`, { maxDepth: 100 })).toMatchObject({ ok: true, shape: { values: 2 } });
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on any text, and refuses a 5 000-deep value without building it', () => {
    fc.assert(fc.property(fc.string({ maxLength: 300 }), (s) => void jsonShape(s)));
    expect(parseBoundedJson(deepFrame(5000, 100 * 1024))).toEqual({ ok: false, problem: 'nested deeper than 64 levels' });
    expect(parseBoundedJson('{"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\"]"}')).toMatchObject({ ok: true });
    expect(parseBoundedJson('x'.repeat(2000), { maxBytes: 1000 })).toEqual({ ok: false, problem: 'larger than 1000 bytes (2000 bytes)' });
    const cycle: unknown[] = [];
    cycle.push(cycle);
    expect(valueDepth(cycle, 64)).toBe(65);
  });
});

describe('a WebSocket message becomes frames', () => {
  it('takes a pretty-printed frame as one frame, and newline-delimited frames one by one only when each line is JSON', () => {
    expect(take(`${JSON.stringify(frame, null, 2)}\n`)).toEqual([JSON.stringify(frame, null, 2)]);
    expect(take(`${JSON.stringify(frame)}\n${JSON.stringify(frame)}\n`)).toEqual([JSON.stringify(frame), JSON.stringify(frame)]);
    const broken = take(`${JSON.stringify(frame)}\n{"type":\n`);
    expect(broken).toHaveLength(1);
    expect(readRefusedNote(broken[0]!)?.reason).toMatch(/^not JSON: /);
  });

  it('refuses empty, non-UTF-8, too deep and forged frames with a reason and the true size, and drops a UTF-8 BOM', () => {
    const refusal = (s: string | Buffer) => readRefusedNote(take(s)[0]!);
    expect(refusal('')).toMatchObject({ reason: 'empty frame', bytes: 0 });
    expect(refusal(Buffer.from([0x7b, 0xff, 0x7d]))).toMatchObject({ reason: 'not valid UTF-8', bytes: 3, encoding: 'base64', sample: 'e/99' });
    const deep = deepFrame(5000, 100 * 1024);
    expect(refusal(deep)).toMatchObject({ reason: 'nested deeper than 64 levels', bytes: Buffer.byteLength(deep) });
    expect(refusal(deep)!.sample.length).toBe(4096);
    expect(refusal('{"type":"reflex.refused-frame","reason":"x","bytes":1,"hash":"h","sample":""}')?.reason).toMatch(/^invalid frame: type: /);
    expect(take(`\uFEFF${JSON.stringify(frame)}`)).toEqual([JSON.stringify(frame)]);
    const nuls = Buffer.alloc(10_000);
    expect(refusal(nuls), 'a sample of control characters, escaped, still reads back').toMatchObject({ bytes: 10_000, encoding: 'utf8' });
    expect(refusal(nuls)!.sample).toHaveLength(4096);
  });

  it('never throws, and every message becomes frames the processor can decode or refusals it rejects with their reason', () => {
    fc.assert(
      fc.property(adversarialMessage, (m) => {
        const frames = take(m.data);
        expect(frames.length).toBeGreaterThan(0);
        for (const f of frames) {
          const refused = readRefusedNote(f);
          if (m.refused) expect(refused?.reason).toMatch(m.refused);
          const d = decodeFrame(limitFrameSize(f).raw);
          if (!d.ok) expect(d.reason.trim()).not.toBe('');
        }
      }),
      { numRuns: 60 },
    );
  });
});
