import { describe, expect, it } from 'vitest';
import { formatFloat } from '../../src/simulator/guest/c-printf.js';

/**
 * The guest's programs print doubles as C's printf does (glibc and musl agree); each answer here is
 * Python's `%` formatting, which is C's. The beds' busybox printf and awk are held to the same in
 * test/conformance/busybox-programs.test.ts.
 */
describe('a double printed as C prints it', () => {
  it.each([
    ['f', 2.5, '', 0, 0, '2'],
    ['f', 0.5, '', 0, 0, '0'],
    ['f', 1.005, '', 0, 2, '1.00'],
    ['e', 12345.678, '', 0, undefined, '1.234568e+04'],
    ['e', 5e-324, '', 0, 3, '4.941e-324'],
    ['g', 100000.5, '', 0, undefined, '100000'],
    ['g', 1e100, '', 0, undefined, '1e+100'],
    ['g', 0.0001, '', 0, undefined, '0.0001'],
    ['g', 1.234e-5, '', 0, undefined, '1.234e-05'],
    ['G', 1e-10, '', 0, undefined, '1E-10'],
    ['g', 1234567.8, '#', 0, undefined, '1.23457e+06'],
    ['f', -0, '', 0, 2, '-0.00'],
    ['f', -2.5, '0', 8, 2, '-0002.50'],
    ['e', 0.000123, '-', 9, 1, '1.2e-04  '],
    ['g', 0.1, '', 0, 17, '0.10000000000000001'],
    ['f', Infinity, '+', 6, undefined, '  +inf'],
    ['G', NaN, '', 0, undefined, 'NAN'],
  ] as const)('%%%s of %s (flags %j, width %i, precision %s) is %j', (conversion, value, flag, width, precision, printed) => {
    expect(formatFloat(conversion, value, new Set(flag ? [flag] : []), width, precision)).toBe(printed);
  });

  it('rounds the exact binary value half to even, the largest double written out whole', () => {
    expect(formatFloat('f', 1.7976931348623157e308, new Set(), 0, 0)).toMatch(
      /^179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368$/,
    );
    expect(formatFloat('f', 0.125, new Set(), 0, 2)).toBe('0.12');
    expect(formatFloat('f', 0.375, new Set(), 0, 2)).toBe('0.38');
  });
});
