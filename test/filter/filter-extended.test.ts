import { describe, expect, it } from 'vitest';
import { evaluateFilter } from '../../src/filter/evaluator.js';
import { FilterSyntaxError } from '../../src/filter/filter-syntax-error.js';
import { parseFilter } from '../../src/filter/parser.js';
import { printFilter } from '../../src/filter/printer.js';

const extended = { extended: true } as const;
const fleet = [
  { name: 'inst-00042', project: 'default', restarts: '0', status: 'Running' },
  { name: 'inst-00420', project: 'default', restarts: '3', status: 'Stopped' },
  { name: 'web-1', project: 'shop', restarts: '1', status: 'Running' },
  { name: 'db-1', project: 'shop', restarts: '12', status: 'Error' },
];
const names = (text: string) => fleet.filter((o) => evaluateFilter(parseFilter(text, extended), o)).map((o) => o.name);

describe("the console's extended filter language", () => {
  it('finds an instance by a bare name, as a search box does, not a syntax error', () => {
    expect(parseFilter('inst-00042', extended)).toEqual({ kind: 'text', text: 'inst-00042' });
    expect(names('inst-00042')).toEqual(['inst-00042']);
    expect(names('INST-0004')).toEqual(['inst-00042']);
    expect(names('inst')).toEqual(['inst-00042', 'inst-00420']);
    expect(names('"web-1"')).toEqual(['web-1']);
  });

  it('takes words side by side as all of them, and mixes free text with clauses', () => {
    expect(names('inst 420')).toEqual(['inst-00420']);
    expect(names('inst and status eq running')).toEqual(['inst-00042']);
    expect(names('(web or db) and not status eq Error')).toEqual(['web-1']);
  });

  it('compares numbers with gt, ge, lt and le', () => {
    expect(names('restarts gt 0')).toEqual(['inst-00420', 'web-1', 'db-1']);
    expect(names('restarts ge 3')).toEqual(['inst-00420', 'db-1']);
    expect(names('restarts lt 1')).toEqual(['inst-00042']);
    expect(names('restarts le 3 and project eq shop')).toEqual(['web-1']);
    // Not a number on either side: no match, not an error.
    expect(names('name gt 3')).toEqual([]);
    expect(names('restarts gt many')).toEqual([]);
  });

  it('prints what it parses so that it parses back the same', () => {
    for (const text of ['inst-00042', 'restarts gt 0 and web', 'not "two words" or db', '"and"']) {
      const e = parseFilter(text, extended);
      expect(parseFilter(printFilter(e), extended)).toEqual(e);
    }
  });

  it('still reports a clause left half-written, with its position', () => {
    expect(() => parseFilter('name eq', extended)).toThrow(FilterSyntaxError);
    expect(() => parseFilter('restarts gt', extended)).toThrow(/expected a value/);
    expect(() => parseFilter('(web', extended)).toThrow(/unclosed parenthesis/);
  });

  it('leaves the language of rules, schedules and silences as the daemon knows it', () => {
    expect(() => parseFilter('inst-00042')).toThrow(/expected an operator|ended early/);
    expect(() => parseFilter('restarts gt 0')).toThrow('unknown operator "gt" (expected eq or ne)');
  });
});
