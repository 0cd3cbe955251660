import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FilterExpr } from '../../src/filter/ast.js';
import { and, eq, ne, not, or } from '../../src/filter/builder.js';
import { evaluateFilter, resolveFilterField } from '../../src/filter/evaluator.js';
import { FilterSyntaxError } from '../../src/filter/filter-syntax-error.js';
import { parseFilter } from '../../src/filter/parser.js';
import { printFilter } from '../../src/filter/printer.js';

const instance = {
  name: 'research-a',
  status: 'Running',
  ephemeral: false,
  config: { 'user.reflex.autorestart': 'true', 'image.os': 'busybox' },
  devices: { root: { path: '/', pool: 'default' } },
  expanded_config: { 'image.os': 'busybox' },
};
const image = { properties: { os: 'Debian' }, update_source: { protocol: 'simplestreams' } };

describe('parsing', () => {
  it('parses the seed examples', () => {
    expect(parseFilter('name eq "my instance"')).toEqual({ kind: 'compare', field: 'name', op: 'eq', value: 'my instance' });
    expect(parseFilter('Properties.os eq Debian and not UpdateSource.Protocol eq simplestreams')).toEqual(
      and(eq('Properties.os', 'Debian'), not(eq('UpdateSource.Protocol', 'simplestreams'))),
    );
    expect(parseFilter('config.image.os eq busybox or devices.root.pool eq default')).toEqual(
      or(eq('config.image.os', 'busybox'), eq('devices.root.pool', 'default')),
    );
  });

  it('is left-associative and supports nesting', () => {
    expect(parseFilter('a eq 1 or b eq 2 and c eq 3')).toEqual(and(or(eq('a', '1'), eq('b', '2')), eq('c', '3')));
    expect(parseFilter('a eq 1 or (b eq 2 and c eq 3)')).toEqual(or(eq('a', '1'), and(eq('b', '2'), eq('c', '3'))));
    expect(parseFilter('not (a eq 1 or b ne 2)')).toEqual(not(or(eq('a', '1'), ne('b', '2'))));
  });

  it('reports errors with a position', () => {
    const cases: [string, number][] = [
      ['name', 4],
      ['name eq', 7],
      ['name gt x', 5],
      ['name eq "unterminated', 8],
      ['(name eq x', 10],
      ['name eq x xor y eq z', 10],
    ];
    for (const [input, position] of cases) {
      const err = (() => {
        try {
          parseFilter(input);
        } catch (e) {
          return e;
        }
      })();
      expect(err, input).toBeInstanceOf(FilterSyntaxError);
      expect((err as FilterSyntaxError).position, input).toBe(position);
    }
  });

  it('can mimic LXD 5.0.2: unknown operators act as eq, quoted values need a space', () => {
    expect(parseFilter('status gt 0', { unknownOperators: 'as-eq' })).toEqual(eq('status', '0'));
    expect(() => parseFilter('name eq "c1"', { rejectQuotedWithoutSpace: true })).toThrow(FilterSyntaxError);
    expect(parseFilter('name eq "c 1"', { rejectQuotedWithoutSpace: true })).toEqual(eq('name', 'c 1'));
  });
});

describe('printing and building', () => {
  it('quotes only values that contain spaces (or cannot be read back otherwise)', () => {
    expect(printFilter(and(eq('name', 'c1'), eq('description', 'a b')))).toBe('name eq c1 and description eq "a b"');
    expect(printFilter(or(eq('a', '1'), and(eq('b', '2'), not(eq('c', '3')))))).toBe('a eq 1 or (b eq 2 and not c eq 3)');
  });

  it('refuses values and fields that cannot be expressed', () => {
    expect(() => eq('name', 'a"b')).toThrow(FilterSyntaxError);
    expect(() => eq('and', 'x')).toThrow(FilterSyntaxError);
    expect(() => eq('my field', 'x')).toThrow(FilterSyntaxError);
  });
});

describe('evaluation', () => {
  it('resolves dotted map keys, devices and Go-style names', () => {
    expect(resolveFilterField(instance, 'config.user.reflex.autorestart')).toBe('true');
    expect(resolveFilterField(instance, 'devices.root.pool')).toBe('default');
    expect(resolveFilterField(image, 'Properties.os')).toBe('Debian');
    expect(resolveFilterField(image, 'UpdateSource.Protocol')).toBe('simplestreams');
    expect(resolveFilterField(instance, 'config.nope')).toBeUndefined();
  });

  it('lxd semantics: anchored case-insensitive regex, non-strings never match', () => {
    const m = (f: string) => evaluateFilter(parseFilter(f), instance);
    expect(m('status eq running')).toBe(true);
    expect(m('name eq research-.*')).toBe(true);
    expect(m('name eq research')).toBe(false);
    expect(m('ephemeral eq false')).toBe(false);
    expect(m('ephemeral ne false')).toBe(false);
    expect(m('config.user.reflex.autorestart eq true and not status eq stopped')).toBe(true);
    expect(m('expanded_config.image.os eq BusyBox')).toBe(true);
  });

  it('exact semantics: plain equality, numbers and booleans through their text', () => {
    const m = (f: string) => evaluateFilter(parseFilter(f), instance, { semantics: 'exact' });
    expect(m('status eq running')).toBe(false);
    expect(m('status eq Running')).toBe(true);
    expect(m('name eq research-.*')).toBe(false);
    expect(m('ephemeral eq false')).toBe(true);
    expect(m('ephemeral ne true')).toBe(true);
  });
});

const field = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,12}$/).filter((s) => !['and', 'or', 'not'].includes(s));
const value = fc.string({ maxLength: 12 }).filter((s) => !s.includes('"'));
const exprArb: fc.Arbitrary<FilterExpr> = fc.letrec<{ e: FilterExpr }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ kind: fc.constant('compare' as const), field, op: fc.constantFrom('eq' as const, 'ne' as const), value }),
    fc.record({ kind: fc.constant('not' as const), expr: tie('e') }),
    fc.record({ kind: fc.constantFrom('and' as const, 'or' as const), left: tie('e'), right: tie('e') }),
  ),
})).e;

describe('properties', () => {
  it('print then parse is the identity', () => {
    fc.assert(
      fc.property(exprArb, (e) => {
        expect(parseFilter(printFilter(e))).toEqual(e);
      }),
      { numRuns: 500 },
    );
  });

  it('printing a parsed canonical string gives the same string', () => {
    fc.assert(
      fc.property(exprArb, (e) => {
        expect(printFilter(parseFilter(printFilter(e)))).toBe(printFilter(e));
      }),
      { numRuns: 300 },
    );
  });

  it('the parser throws nothing but FilterSyntaxError on arbitrary input', () => {
    const tokens = fc.constantFrom('(', ')', '"', ' ', 'not', 'and', 'or', 'eq', 'ne', 'name', 'x)', '"a b"', '((', '))');
    const input = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.array(tokens, { maxLength: 20 }).map((a) => a.join(' ')),
      fc.array(tokens, { maxLength: 20 }).map((a) => a.join('')),
    );
    fc.assert(
      fc.property(input, (s) => {
        try {
          parseFilter(s);
          parseFilter(s, { unknownOperators: 'as-eq', rejectQuotedWithoutSpace: true });
        } catch (err) {
          expect(err).toBeInstanceOf(FilterSyntaxError);
        }
      }),
      { numRuns: 2000 },
    );
    expect(() => parseFilter('('.repeat(10_000))).toThrow(FilterSyntaxError);
    expect(() => parseFilter('not '.repeat(10_000))).toThrow(FilterSyntaxError);
  });
});
