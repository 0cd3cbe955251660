import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/audit/canonical-json.js';

describe('canonical JSON of audit records', () => {
  it('gives the same bytes whatever order the keys were set in', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 0, y: null }], c: 'x' } })).toBe(canonicalJson({ a: { c: 'x', d: [1, { y: null, z: 0 }] }, b: 1 }));
    expect(canonicalJson({ b: 1, a: 2 })).toBe('{"a":2,"b":1}');
  });

  it('drops what JSON drops', () => {
    expect(canonicalJson({ a: undefined, b: () => 1, c: [undefined, NaN], d: new Date(0) })).toBe('{"c":[null,null],"d":"1970-01-01T00:00:00.000Z"}');
  });

  it('is reproduced exactly from its own parse, so an exported record can be re-hashed', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const once = canonicalJson(v);
        expect(canonicalJson(JSON.parse(once))).toBe(once);
        expect(JSON.parse(once)).toEqual(JSON.parse(JSON.stringify(v)));
      }),
    );
  });
});

describe('canonical JSON of a record read back from outside', () => {
  it('serialises a value nested 100 000 deep without overflowing the stack (a tampered file or export)', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`) as unknown;
    expect(canonicalJson(deep)).toBe(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
  });
});
