/**
 * C's printf of numbers, as glibc and musl print them.
 *
 * A double (`%f %F %e %E %g %G`, and `%a %A` in hex): the exact value of the binary number rounded to the digits asked
 * for, half to even (`%.0f` of 2.5 is 2, of 0.5 is 0, `%g` of 100000.5 is 100000); an exponent of at least two digits (`1e+100`, `1.5e-07`); `%g`
 * choosing `%e` below 1e-4 or from 10^precision and dropping trailing zeros but under `#`; `inf`
 * and `nan`; the flags `-+ #0` and a width. JavaScript's toFixed and toPrecision round a tie up
 * and print exponents as `e+6`, which the programs the guest runs (busybox's printf, awk) do not.
 */
export function formatFloat(conversion: string, value: number, flags: ReadonlySet<string>, width = 0, precision?: number): string {
  const upper = conversion === 'E' || conversion === 'G' || conversion === 'F' || conversion === 'A';
  const negative = value < 0 || Object.is(value, -0);
  const sign = negative ? '-' : flags.has('+') ? '+' : flags.has(' ') ? ' ' : '';
  let body: string;
  if (!Number.isFinite(value)) body = Number.isNaN(value) ? 'nan' : 'inf';
  else {
    const x = Math.abs(value);
    const p = precision ?? 6;
    const kind = conversion.toLowerCase();
    if (kind === 'a') body = hexadecimal(x, precision, flags.has('#'));
    else if (kind === 'f') body = fixed(x, p, flags.has('#'));
    else if (kind === 'e') body = exponential(x, p, flags.has('#'));
    else body = general(x, p === 0 ? 1 : p, flags.has('#'));
  }
  if (upper) body = body.toUpperCase();
  const pad = width - sign.length - body.length;
  if (pad <= 0) return sign + body;
  if (flags.has('-')) return sign + body + ' '.repeat(pad);
  if (flags.has('0') && Number.isFinite(value)) {
    // The zeros go after `%a`'s `0x`.
    const prefix = conversion === 'a' || conversion === 'A' ? body.slice(0, 2) : '';
    return sign + prefix + '0'.repeat(pad) + body.slice(prefix.length);
  }
  return ' '.repeat(pad) + sign + body;
}

/**
 * `%a` of x ≥ 0 as glibc prints a double: `0x1.8p+1`, the leading digit 1 (0 for zero and for a
 * subnormal, whose exponent is -1022), the 52 bits of the fraction in hex without trailing zeros,
 * or rounded to `precision` digits (half to even; a carry makes the leading digit 2, as glibc
 * leaves it), the exponent in decimal; `point`: the `#` flag, a point even with no digit after it.
 */
function hexadecimal(x: number, precision: number | undefined, point: boolean): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  const lead = biased === 0 ? 0n : 1n;
  const exponent = x === 0 ? 0 : biased === 0 ? -1022 : biased - 1023;
  let whole = lead;
  let digits = fraction.toString(16).padStart(13, '0');
  if (precision === undefined) digits = digits.replace(/0+$/, '');
  else if (precision >= 13) digits = digits.padEnd(precision, '0');
  else {
    const shift = BigInt(4 * (13 - precision));
    const all = (lead << 52n) | fraction;
    let kept = all >> shift;
    const rest = all & ((1n << shift) - 1n);
    const half = 1n << (shift - 1n);
    if (rest > half || (rest === half && (kept & 1n) === 1n)) kept += 1n;
    const width = BigInt(4 * precision);
    whole = kept >> width;
    digits = precision === 0 ? '' : (kept & ((1n << width) - 1n)).toString(16).padStart(precision, '0');
  }
  const mantissa = digits || point ? `${whole}.${digits}` : `${whole}`;
  return `0x${mantissa}p${exponent < 0 ? '-' : '+'}${Math.abs(exponent)}`;
}

/** A finite non-negative double as the fraction num / den, exactly. */
function exact(x: number): { num: bigint; den: bigint } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  let mantissa = bits & ((1n << 52n) - 1n);
  let exponent = -1074;
  if (biased !== 0) {
    mantissa |= 1n << 52n;
    exponent = biased - 1075;
  }
  return exponent >= 0 ? { num: mantissa << BigInt(exponent), den: 1n } : { num: mantissa, den: 1n << BigInt(-exponent) };
}

/** x × 10^shift rounded to an integer, half to even, from x's exact value. */
function scaled(x: number, shift: number): bigint {
  let { num, den } = exact(x);
  if (shift >= 0) num *= 10n ** BigInt(shift);
  else den *= 10n ** BigInt(-shift);
  const q = num / den;
  const twice = (num % den) * 2n;
  return twice > den || (twice === den && q % 2n === 1n) ? q + 1n : q;
}

/** `%.Pf` of x ≥ 0; `point`: the `#` flag, a point even with no digit after it. */
function fixed(x: number, p: number, point: boolean): string {
  const digits = scaled(x, p)
    .toString()
    .padStart(p + 1, '0');
  const whole = digits.slice(0, digits.length - p);
  return p === 0 ? `${whole}${point ? '.' : ''}` : `${whole}.${digits.slice(digits.length - p)}`;
}

/** The digits of x ≥ 0 rounded to p + 1 significant ones, and the power of ten of the first. */
function significant(x: number, p: number): { digits: string; exponent: number } {
  if (x === 0) return { digits: '0'.repeat(p + 1), exponent: 0 };
  let exponent = Math.floor(Math.log10(x));
  for (let tries = 0; tries < 4; tries++) {
    const digits = scaled(x, p - exponent).toString();
    if (digits.length === p + 1) return { digits, exponent };
    exponent += digits.length > p + 1 ? 1 : -1;
  }
  const digits = scaled(x, p - exponent).toString();
  return { digits: digits.slice(0, p + 1), exponent: exponent + digits.length - (p + 1) };
}

/** `%.Pe` of x ≥ 0. */
function exponential(x: number, p: number, point: boolean): string {
  const { digits, exponent } = significant(x, p);
  const mantissa = p === 0 ? `${digits}${point ? '.' : ''}` : `${digits[0]}.${digits.slice(1)}`;
  return `${mantissa}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

/** `%.Pg` of x ≥ 0 (P ≥ 1): `%e` when the exponent is below -4 or from P, else `%f`; trailing zeros dropped but under `#`. */
function general(x: number, p: number, keep: boolean): string {
  const { exponent } = significant(x, p - 1);
  const text = exponent < -4 || exponent >= p ? exponential(x, p - 1, keep) : fixed(x, p - 1 - exponent, keep);
  if (keep) return text;
  const [mantissa, e] = text.split('e') as [string, string | undefined];
  const trimmed = mantissa.includes('.') ? mantissa.replace(/0+$/, '').replace(/\.$/, '') : mantissa;
  return e === undefined ? trimmed : `${trimmed}e${e}`;
}

/** Text padded with spaces to `width`, on the right under the `-` flag. */
export const padded = (text: string, width: number, flags: ReadonlySet<string>): string =>
  flags.has('-') ? text.padEnd(width) : text.padStart(width);

/**
 * C's printf of an integer (`%d %i %o %u %x %X`) given its value as the conversion reads it: precision
 * as least digits, the flags `-+ #0`, the width. The caller casts as its program does (busybox's
 * printf reads 64 bits; its awk a C int).
 */
export function formatInteger(conversion: string, value: bigint, flags: ReadonlySet<string>, width = 0, precision?: number): string {
  const signed = conversion === 'd' || conversion === 'i';
  const negative = value < 0n;
  const magnitude = negative ? -value : value;
  let digits = magnitude.toString(conversion === 'o' ? 8 : conversion === 'x' || conversion === 'X' ? 16 : 10);
  if (conversion === 'X') digits = digits.toUpperCase();
  if (precision !== undefined) digits = precision === 0 && magnitude === 0n ? '' : digits.padStart(precision, '0');
  let prefix = negative ? '-' : signed && flags.has('+') ? '+' : signed && flags.has(' ') ? ' ' : '';
  if (flags.has('#') && conversion === 'o' && !digits.startsWith('0')) digits = `0${digits}`;
  if (flags.has('#') && (conversion === 'x' || conversion === 'X') && magnitude !== 0n) prefix += `0${conversion}`;
  const pad = width - prefix.length - digits.length;
  if (pad <= 0) return prefix + digits;
  if (flags.has('-')) return prefix + digits + ' '.repeat(pad);
  if (flags.has('0') && precision === undefined) return prefix + '0'.repeat(pad) + digits;
  return ' '.repeat(pad) + prefix + digits;
}

// awk's printf and number-to-string conversions live in just-bash's bundle, which asks for these
// formatters by these names (patches/README.md 68, 70).
(globalThis as Record<symbol, unknown>)[Symbol.for('reflex.formatInteger')] = (
  conversion: string,
  value: bigint,
  flags: string,
  width: number,
  precision: number | undefined,
): string => formatInteger(conversion, value, new Set(flags), width, precision);
(globalThis as Record<symbol, unknown>)[Symbol.for('reflex.formatFloat')] = (
  conversion: string,
  value: number,
  flags: string,
  width: number,
  precision: number | undefined,
): string => formatFloat(conversion, value, new Set(flags), width, precision);
