import { posix as path } from 'node:path';
import type { ProgramHost } from './program-host.js';

/**
 * What busybox's bc and dc share: the arbitrary-precision decimals (its `BcNum`), a BigInt of digits
 * and a scale, each operation's result scale and truncation as busybox 1.35 computes them; their
 * printing in any output base with the line wrapping at the output width, and of strings with their
 * escapes; and how a program's input is read (FILE operands, stdin's lines, a pause now and then).
 */

/** The value `n / 10^s`. */
export interface Num {
  n: bigint;
  s: number;
}

/** An error that ends bc or dc with busybox's message (`bc: MESSAGE`, exit 1). */
export class CalcError extends Error {}

/** An error busybox says without the `FILE:LINE: ` of the file being run (one in read()'s line). */
export class CalcBareError extends CalcError {}

/**
 * Takes the line after the one at `at` out of `text` (busybox reads its input by whole lines, so
 * bc's read() and dc's `?` get the line after the statement running): the line, or undefined at the end.
 */
export function takeNextLine(text: string, at: number, atLineStart: boolean): { line?: string; text: string } {
  const start = atLineStart ? at : text.indexOf('\n', at) + 1;
  if (start <= 0 && !atLineStart) return { text };
  if (start >= text.length) return { text };
  const nl = text.indexOf('\n', start);
  const end = nl < 0 ? text.length : nl;
  return { line: text.slice(start, end), text: text.slice(0, start) + text.slice(nl < 0 ? end : end + 1) };
}

/** stdin's lines as bc's read() and dc's `?` take them, one at a time; `rest` is what they leave. */
export class InputLines {
  constructor(public rest: string) {}

  next(): string | undefined {
    const { line, text } = takeNextLine(this.rest, 0, true);
    this.rest = text;
    return line;
  }
}

/** `quit`, `halt` or dc's `q`: the program ends there with exit 0. */
export class CalcQuit extends Error {}

/** How many steps a program runs between two pauses (see `pause`). */
export const stepsPerPause = 200_000;

/** Lets the event loop run (a long program must not starve the simulator), then ends the program if its exec was aborted. */
export async function pause(signal: AbortSignal | undefined): Promise<void> {
  await new Promise((r) => setImmediate(r));
  if (signal?.aborted) throw new CalcQuit();
}

/** A FILE operand's text as bytes (latin1), or busybox's `can't open` error, said without a FILE:LINE. */
export async function readProgramFile(host: ProgramHost, cwd: string, name: string): Promise<string> {
  const p = path.resolve(cwd, name);
  const entry = await host.fs.entry(p);
  if (entry?.type !== 'file' && entry?.type !== 'symlink') throw new CalcBareError(`can't open '${name}': No such file or directory`);
  return (await host.fs.read(p)).toString('latin1');
}

export const zero: Num = { n: 0n, s: 0 };
export const fromInt = (v: number | bigint): Num => ({ n: BigInt(v), s: 0 });

const pow10 = (k: number): bigint => 10n ** BigInt(k);
const abs = (v: bigint): bigint => (v < 0n ? -v : v);

/** `a` at scale `s` (more digits: zeros; fewer: truncated toward zero). */
export function rescale(a: Num, s: number): Num {
  if (s === a.s) return a;
  return s > a.s ? { n: a.n * pow10(s - a.s), s } : { n: a.n / pow10(a.s - s), s };
}

export function add(a: Num, b: Num): Num {
  const s = Math.max(a.s, b.s);
  return { n: rescale(a, s).n + rescale(b, s).n, s };
}

export const neg = (a: Num): Num => ({ n: -a.n, s: a.s });
export const sub = (a: Num, b: Num): Num => add(a, neg(b));

export function mul(a: Num, b: Num, scale: number): Num {
  const s = Math.min(a.s + b.s, Math.max(scale, a.s, b.s));
  return rescale({ n: a.n * b.n, s: a.s + b.s }, s);
}

export function div(a: Num, b: Num, scale: number): Num {
  if (b.n === 0n) throw new CalcError('divide by zero');
  // a/b * 10^scale = a.n * 10^(b.s + scale) / (b.n * 10^a.s)
  const up = b.s + scale - a.s;
  const num = up >= 0 ? a.n * pow10(up) : a.n;
  const den = up >= 0 ? b.n : b.n * pow10(-up);
  return { n: num / den, s: scale };
}

/** busybox's remainder: a - (a/b)*b, the quotient at `scale`, the product at max(scale + b's, a's). */
export function mod(a: Num, b: Num, scale: number): Num {
  if (b.n === 0n) throw new CalcError('divide by zero');
  const ts = Math.max(scale + b.s, a.s);
  return sub(a, mul(div(a, b, scale), b, ts));
}

export function cmp(a: Num, b: Num): number {
  const s = Math.max(a.s, b.s);
  const d = rescale(a, s).n - rescale(b, s).n;
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

/** The integer part as a machine number (busybox's `ulong`), refusing negatives and overflow. */
export function toUlong(a: Num): number {
  if (a.n < 0n) throw new CalcError('negative number');
  const v = rescale(a, 0).n;
  if (v >= 2n ** 64n) throw new CalcError('overflow');
  return Number(v);
}

export function power(a: Num, b: Num, scale: number): Num {
  if (b.n % pow10(b.s) !== 0n) throw new CalcError('not an integer');
  const e = rescale(b, 0).n;
  if (e === 0n) return fromInt(1);
  if (a.n === 0n) return { n: 0n, s: scale };
  if (abs(e) >= 2n ** 64n) throw new CalcError('overflow');
  if (abs(e) > 1_000_000n) throw new CalcError('overflow');
  const k = Number(abs(e));
  const exact: Num = { n: a.n ** BigInt(k), s: a.s * k };
  if (e < 0n) return div(fromInt(1), exact, scale);
  const s = Math.min(a.s * k, Math.max(scale, a.s));
  return rescale(exact, s);
}

/** The integer square root, by Newton's steps down from a power of two above it. */
function isqrt(v: bigint): bigint {
  if (v < 2n) return v;
  let x = 1n << BigInt(Math.ceil(v.toString(2).length / 2));
  for (;;) {
    const y = (x + v / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

export function sqrt(a: Num, scale: number): Num {
  if (a.n < 0n) throw new CalcError('negative number');
  const s = Math.max(scale, a.s);
  return { n: isqrt(a.n * pow10(2 * s - a.s)), s };
}

/** busybox's `length()`: significant digits (of a zero, its scale in bc, 1 in dc). */
export function lengthOf(a: Num, isBc: boolean): number {
  if (a.n === 0n) return a.s === 0 ? 1 : isBc ? a.s : 1;
  return abs(a.n).toString().length;
}

const digitValue = (c: string): number => (c <= '9' ? c.charCodeAt(0) - 48 : c.charCodeAt(0) - 55);

/** A number token in base `base` (digits past the base count as base-1, as busybox reads them). */
export function parseNum(text: string, base: number): Num {
  const t = text.replace(/^0+/, '');
  if (!/[1-9A-Z]/.test(t)) return zero;
  if (base === 10 || t.length === 1) {
    const [int = '', frac = ''] = t.split('.');
    const digits = `${int}${frac}`.split('').map((c) => String(Math.min(digitValue(c), 9)));
    if (int.length === 1 && frac === '' && /[A-Z]/.test(int)) return fromInt(digitValue(int));
    return { n: BigInt(digits.join('') || '0'), s: frac.length };
  }
  const [int = '', frac = ''] = t.split('.');
  const b = BigInt(base);
  let n = 0n;
  for (const c of int) n = n * b + BigInt(Math.min(digitValue(c), base - 1));
  if (frac === '') return { n, s: 0 };
  let r = 0n;
  let m = 1n;
  for (const c of frac) {
    r = r * b + BigInt(Math.min(digitValue(c), base - 1));
    m *= b;
  }
  const fracNum = div({ n: r, s: 0 }, { n: m, s: 0 }, frac.length);
  const sum = add({ n, s: 0 }, fracNum);
  return sum.n === 0n ? zero : rescale(sum, Math.max(sum.s, frac.length));
}

/** What is printed so far on the current output line, and where busybox breaks it with `\`. */
export class CalcOutput {
  text = '';
  nchars = 0;
  constructor(readonly width: number) {}

  write(s: string): void {
    this.text += s;
  }

  private wrap(): void {
    if (this.nchars === this.width - 1) {
      this.text += '\\\n';
      this.nchars = 0;
    }
  }

  private hex(digit: number, width: number, radix: boolean): void {
    if (radix) {
      this.wrap();
      this.text += '.';
      this.nchars++;
    }
    this.wrap();
    this.text += '0123456789ABCDEF'[digit];
    this.nchars += width;
  }

  private decimalDigits(digit: number, width: number, radix: boolean): void {
    this.wrap();
    this.text += radix ? '.' : ' ';
    this.nchars++;
    this.wrap();
    const s = String(digit).padStart(width, '0');
    for (const c of s) {
      this.wrap();
      this.text += c;
      this.nchars++;
    }
  }

  /**
   * A string with busybox's escapes: `\n \a \b \f \r \t \\` as the character, `\e` as a backslash
   * (busybox's table has it so), any other backslash kept with what follows (one at the end alone);
   * the column counts every character written, `\n` starting it again.
   */
  printString(str: string): void {
    for (let i = 0; i < str.length; i++) {
      let c = str[i]!;
      if (c === '\\') {
        c = str[++i] ?? '';
        const k = 'nabfrte\\'.indexOf(c);
        if (k < 0 || c === '') {
          this.text += '\\';
          this.nchars++;
          if (c === '') break;
        } else {
          if (k === 0) this.nchars = -1;
          c = '\n\x07\b\f\r\t\\\\'[k]!;
        }
      }
      this.text += c;
      this.nchars++;
    }
  }

  /** One number in output base `obase`, then a newline if asked (the newline resets the column). */
  printNum(a: Num, obase: number, newline: boolean): void {
    this.wrap();
    if (a.n === 0n) {
      this.text += '0';
      this.nchars++;
    } else {
      if (a.n < 0n) {
        this.text += '-';
        this.nchars++;
      }
      const m = abs(a.n);
      if (obase === 10) {
        const str = m.toString().padStart(a.s, '0');
        const int = str.slice(0, str.length - a.s);
        for (const c of int) this.hex(Number(c), 1, false);
        const frac = str.slice(str.length - a.s);
        for (let i = 0; i < frac.length; i++) this.hex(Number(frac[i]), 1, i === 0);
      } else {
        this.printBase(m, a.s, obase);
      }
    }
    if (newline) {
      this.text += '\n';
      this.nchars = 0;
    }
  }

  private printBase(m: bigint, s: number, obase: number): void {
    const small = obase <= 16;
    const width = small ? 1 : String(obase - 1).length;
    const put = (d: number, radix: boolean): void => (small ? this.hex(d, width, radix) : this.decimalDigits(d, width, radix));
    const unit = pow10(s);
    const b = BigInt(obase);
    let int = m / unit;
    let frac = m % unit;
    const digits: number[] = [];
    while (int > 0n) {
      digits.push(Number(int % b));
      int /= b;
    }
    for (let i = digits.length - 1; i >= 0; i--) put(digits[i]!, false);
    if (s === 0) return;
    let fracLen = 1n;
    for (let radix = true; fracLen.toString().length <= s; radix = false) {
      frac *= b;
      const d = frac / unit;
      frac %= unit;
      put(Number(d), radix);
      fracLen *= b;
    }
  }
}

/** The output width from `BC_LINE_LENGTH`/`DC_LINE_LENGTH` as busybox reads it (bc's one narrower). */
export function lineWidth(value: string | undefined, isBc: boolean): number {
  let len = 70;
  if (value !== undefined) {
    if (/^\d+$/.test(value)) {
      const v = Number(value);
      len = v === 0 || v > 2147483647 ? 2147483647 : v;
    }
  }
  if (isBc) len--;
  if (len < 2) len = isBc ? 69 : 70;
  return len;
}
