import { isUtf8 } from 'node:buffer';
import type { Command, CommandContext, ExecResult } from 'just-bash';
import { formatFloat, formatInteger, padded } from './c-printf.js';
import { ProgramOutput } from './program-output.js';

const ok = (stdout = ''): ExecResult => ({ stdout, stderr: '', exitCode: 0 });
const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });

/** Text as the bytes of its UTF-8 form, one character per byte, except characters that are bytes already. */
const asBytes = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

/**
 * While just-bash's printf runs, the format's own characters of the Latin-1 range (the `é` of
 * `printf 'é\xff'`) stand at U+E080 to U+E0FF and the bytes its escapes name past ASCII at U+E180
 * to U+E1FF (private use): it would decode escaped bytes that form UTF-8 (`\xc3\xa9`) into the
 * character, and a character of that range, written or escaped, would then read as one byte.
 */
const textMark = 0xe000;
const byteMark = 0xe100;

/** A printf escape that writes a byte outside ASCII (`\xff`, `\377`): the output is then bytes, not text. */
const byteEscape = /\\(?:x[89a-fA-F][0-9a-fA-F]|0?[2-3][0-7]{2})/;

/**
 * A format's escapes of a number (`\xHH`, `\NNN` with at most three octal digits, a leading 0 one of
 * them, as busybox reads `\0302` as `\030` and `2`) and its escaped backslash, which stays as it is.
 */
const numberEscape = /\\(\\|x[0-9a-fA-F]{1,2}|[0-7]{1,3})/g;

const markText = (text: string): string => text.replace(/[\u0080-\u00ff]/g, (c) => String.fromCharCode(textMark + c.charCodeAt(0)));

function markFormat(format: string): string {
  return markText(format).replace(numberEscape, (escape, body: string) => {
    if (body === '\\') return escape;
    // Octal digits are taken while the value stays a byte (`\400` is `\40` and `0`).
    const digits = !body.startsWith('x') && parseInt(body, 8) > 0xff ? body.slice(0, 2) : body;
    const value = body.startsWith('x') ? parseInt(body.slice(1), 16) : parseInt(digits, 8);
    const after = body.slice(digits.length);
    // An ASCII one as `\xHH`, which just-bash reads as busybox does (its octal takes a fourth digit after a 0);
    // an escaped `%` is a percent sign, not a conversion.
    const ascii = value === 0x25 ? '%%' : `\\x${value.toString(16).padStart(2, '0')}`;
    return (value >= 0x80 ? String.fromCharCode(byteMark + value) : ascii) + after;
  });
}

/** printf's output with the marks undone: escaped bytes as themselves, text as UTF-8 (a byte `%b` wrote stays one); raw if it has any such byte. */
function unmark(output: string): { out: string; raw: boolean } {
  let raw = false;
  const out = [...output]
    .map((c) => {
      const code = c.charCodeAt(0);
      if (code <= 0xff) {
        raw ||= code >= 0x80;
        return c;
      }
      if (code >= byteMark + 0x80 && code <= byteMark + 0xff) {
        raw = true;
        return String.fromCharCode(code - byteMark);
      }
      return asBytes(code >= textMark + 0x80 && code <= textMark + 0xff ? String.fromCharCode(code - textMark) : c);
    })
    .join('');
  return { out, raw };
}

/** One piece of a printf format as busybox's print_formatted reads it. */
type Piece =
  /** Text, its escapes as typed, `%%` included. */
  | { kind: 'text'; source: string }
  /** A conversion: its one flag of `-+ #`, its width (digits, maybe from `0`, or `*`), its precision (digits or `*`), `b` or one of `diouxXfeEgGcs`. */
  | { kind: 'directive'; flag: string; width: string; precision: string | undefined; conversion: string }
  /** A directive busybox refuses: what its message shows (the format from its `%` to the end, the size modifiers `l L h z` taken out). */
  | { kind: 'invalid'; shown: string };

/** A format in pieces, up to and with its first invalid directive. */
function scanFormat(format: string): Piece[] {
  const pieces: Piece[] = [];
  let text = '';
  const flushText = () => {
    if (text) pieces.push({ kind: 'text', source: text });
    text = '';
  };
  for (let i = 0; i < format.length; i++) {
    if (format[i] === '\\') {
      text += format.slice(i, i + 2);
      i++;
      continue;
    }
    if (format[i] !== '%') {
      text += format[i];
      continue;
    }
    const start = i++;
    if (format[i] === '%') {
      text += '%%';
      continue;
    }
    flushText();
    if (format[i] === 'b') {
      pieces.push({ kind: 'directive', flag: '', width: '', precision: undefined, conversion: 'b' });
      continue;
    }
    const flag = '-+ #'.includes(format[i] ?? '\0') ? format[i++]! : '';
    let width = '';
    if (format[i] === '*') width = format[i++]!;
    else while (/[0-9]/.test(format[i] ?? '')) width += format[i++];
    let precision: string | undefined;
    if (format[i] === '.') {
      i++;
      precision = '';
      if (format[i] === '*') precision = format[i++]!;
      else while (/[0-9]/.test(format[i] ?? '')) precision += format[i++];
    }
    let sized = i;
    while (/[lLhz]/.test(format[sized] ?? '')) sized++;
    const conversion = format[sized];
    if (conversion === undefined || !'diouxXfeEgGcs'.includes(conversion)) {
      pieces.push({ kind: 'invalid', shown: format.slice(start, i) + format.slice(sized) });
      return pieces;
    }
    pieces.push({ kind: 'directive', flag, width, precision, conversion });
    i = sized;
  }
  flushText();
  return pieces;
}

/** A conversion of a format. */
type Directive = Extract<Piece, { kind: 'directive' }>;

/** The arguments a directive takes: one, and one more for each `*`. */
const argsTaken = (d: Directive): number => 1 + Number(d.width === '*') + Number(d.precision === '*');

/** The source of a piece, for the format given to just-bash. */
function sourceOf(p: Piece): string {
  if (p.kind === 'text') return p.source;
  if (p.kind === 'invalid') return p.shown;
  return `%${p.flag}${p.width}${p.precision === undefined ? '' : `.${p.precision}`}${p.conversion}`;
}

/**
 * The first directive of a printf format that busybox's printf refuses, if any (print_formatted):
 * the format before it, the arguments the directives before it take, and what its message shows.
 */
function invalidDirective(format: string): { before: string; consumed: number; shown: string } | undefined {
  const pieces = scanFormat(format);
  const bad = pieces.at(-1);
  if (bad?.kind !== 'invalid') return undefined;
  const before = pieces.slice(0, -1);
  return {
    before: before.map(sourceOf).join(''),
    consumed: before.reduce((n, p) => n + (p.kind === 'directive' ? argsTaken(p) : 0), 0),
    shown: bad.shown,
  };
}

const UINT64 = 1n << 64n;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

/** The byte a quoted argument (`'a`, `"b`) stands for: the first byte after the quote, 0 when none. */
const quotedByte = (arg: string): bigint => BigInt(Buffer.from(arg.slice(1), 'utf8')[0] ?? 0);

/**
 * An integer argument as busybox's printf reads it (skip_whitespace, then bb_strtoll or
 * bb_strtoull, base 0): a leading `+` dropped, decimal, `0x` hex or `0` octal, all of it digits. A
 * signed conversion takes what fits in 64 bits signed; an unsigned one what fits unsigned, or a
 * negative 64-bit signed one wrapped (`%u` of -1 is 18446744073709551615). Undefined: `invalid number`.
 */
function busyboxInteger(arg: string, signed: boolean): bigint | undefined {
  let a = arg.replace(/^[ \t\n\v\f\r]+/, '');
  if (a.startsWith("'") || a.startsWith('"')) return quotedByte(a);
  if (a.startsWith('+')) a = a.slice(1);
  const m = /^(-?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$/.exec(a);
  if (!m) return undefined;
  const digits = m[2]!;
  const magnitude = BigInt(/^0[0-7]+$/.test(digits) ? `0o${digits.slice(1)}` : digits);
  const value = m[1] ? -magnitude : magnitude;
  if (value < INT64_MIN) return undefined;
  if (signed) return value > INT64_MAX ? undefined : value;
  if (value >= UINT64) return undefined;
  return value < 0n ? value + UINT64 : value;
}

/**
 * A floating argument as busybox's printf reads it (strtod, all of it): the text for just-bash's
 * printf, or undefined (`invalid number`). An empty one is 0; a hex float (`0x1p3`) is read here.
 */
function busyboxFloat(arg: string): string | undefined {
  if (arg.startsWith("'") || arg.startsWith('"')) return String(quotedByte(arg));
  if (arg === '') return '0';
  const a = arg.replace(/^[ \t\n\v\f\r]+/, '');
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(a) || /^[+-]?(inf(inity)?|nan)$/i.test(a)) return a;
  const hex = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?\d+))?$/.exec(a);
  if (!hex || (hex[2] === '' && !hex[3])) return undefined;
  const fraction = [...(hex[3] ?? '')].reduce((f, c, i) => f + parseInt(c, 16) / 16 ** (i + 1), 0);
  return String((hex[1] === '-' ? -1 : 1) * (parseInt(hex[2] || '0', 16) + fraction) * 2 ** Number(hex[4] ?? 0));
}

/** Whether text has a character past ASCII, which the C locale reads as its UTF-8 bytes. */
const beyondAscii = (text: string): boolean => /[^\x00-\x7f]/.test(text);

/** Bytes as a format that prints them: past ASCII as `\xHH`, `%` and the backslash escaped. */
const literal = (bytes: Buffer): string =>
  [...bytes].map((b) => (b >= 0x80 ? `\\x${b.toString(16)}` : b === 0x25 ? '%%' : b === 0x5c ? '\\\\' : String.fromCharCode(b))).join('');

/**
 * busybox's reading of the numbers a format takes, where just-bash's printf (JS numbers) differs:
 * integers of 64 bits, an argument that is not all a number printed as 0 with `sh: invalid number
 * 'X'` and exit 1 (a `*` width or precision says it and stays 0), a quoted character's byte. The
 * format is spelled out pass by pass as busybox reuses it for the arguments left, its integer
 * conversions done here as text, the others given just-bash with checked arguments; `%c` of an
 * empty argument writes its NUL. Undefined when the format converts no number and no character.
 */
function busyboxNumbers(pieces: Piece[], args: string[]): { format: string; args: string[]; stderr: string; failed: boolean } | undefined {
  const directives = pieces.filter((p) => p.kind === 'directive');
  const bytewise = (d: Directive): boolean => d.conversion === 's' && (d.width !== '' || d.precision !== undefined) && args.some(beyondAscii);
  if (!directives.some((d) => !'bs'.includes(d.conversion) || d.width === '*' || d.precision === '*' || bytewise(d))) return undefined;
  let format = '';
  const passed: string[] = [];
  let stderr = '';
  let failed = false;
  let next = 0;
  const take = (): string => args[next++] ?? '';
  const star = (): number => {
    const arg = take();
    const value = busyboxInteger(arg, true);
    if (value === undefined) stderr += `sh: invalid number '${arg.replace(/^\s+/, '')}'\n`;
    return Number(value ?? 0n);
  };
  do {
    const before = next;
    for (const p of pieces) {
      if (p.kind !== 'directive') {
        format += sourceOf(p);
        continue;
      }
      const flags = new Set([p.flag, ...(p.width.startsWith('0') ? ['0'] : [])]);
      let width = p.width === '*' ? star() : Number(p.width || 0);
      if (width < 0) (flags.add('-'), (width = -width));
      let precision = p.precision === '*' ? star() : p.precision === undefined ? undefined : Number(p.precision || 0);
      if (precision !== undefined && precision < 0) precision = undefined;
      const spec = `%${[...flags].join('')}${width || ''}${precision === undefined ? '' : `.${precision}`}`;
      if ('diouxX'.includes(p.conversion)) {
        const arg = take();
        let value = busyboxInteger(arg, p.conversion === 'd' || p.conversion === 'i');
        if (value === undefined) {
          stderr += `sh: invalid number '${arg.replace(/^[ \t\n\v\f\r]+/, '')}'\n`;
          failed = true;
          value = 0n;
        }
        format += formatInteger(p.conversion, value, flags, width, precision);
      } else if ('feEgG'.includes(p.conversion)) {
        const arg = take();
        const value = busyboxFloat(arg);
        if (value === undefined) ((stderr += `sh: invalid number '${arg}'\n`), (failed = true));
        // Infinity and NaN as C prints them, which just-bash's printf does not.
        const special =
          value && /^[+-]?(inf|nan)/i.exec(value)
            ? `${value.startsWith('-') ? '-' : flags.has('+') ? '+' : ''}${value.replace(/^[+-]/, '').slice(0, 3).toLowerCase()}`
            : undefined;
        if (special !== undefined) format += padded(/[EG]/.test(p.conversion) ? special.toUpperCase() : special, width, flags);
        else format += formatFloat(p.conversion, Number(value ?? '0'), flags, width, precision);
      } else if (p.conversion === 'c' && args[next] === '') {
        // The empty argument's character is its terminating NUL byte, which C's %c writes.
        next++;
        format += padded('\\000', width + 3, flags);
      } else if ((p.conversion === 'c' || p.conversion === 's') && beyondAscii(args[next] ?? '')) {
        // busybox runs in the C locale: %c is the argument's first byte, and %s's width and precision count bytes.
        const bytes = Buffer.from(take(), 'utf8');
        const kept = p.conversion === 'c' ? bytes.subarray(0, 1) : precision === undefined ? bytes : bytes.subarray(0, precision);
        const pad = ' '.repeat(Math.max(0, width - kept.length));
        format += flags.has('-') ? literal(kept) + pad : pad + literal(kept);
      } else {
        format += p.conversion === 'b' ? '%b' : `${spec}${p.conversion}`;
        passed.push(take());
      }
    }
    if (next === before) break;
  } while (next < args.length);
  return { format, args: passed, stderr, failed };
}

/**
 * busybox's printf writes its complaints as it meets them and its output, buffered, when it ends:
 * where both go to one place (`2>&1`), the complaints come first.
 */
function stderrFirst(result: ExecResult): ExecResult {
  if (!result.stdout || !result.stderr) return result;
  const out = new ProgramOutput();
  out.err(result.stderr);
  if (result.stdoutKind === 'bytes') out.bytes(Buffer.from(result.stdout, 'latin1'));
  else out.out(result.stdout);
  return out.result(result.exitCode);
}

/**
 * busybox's printf over just-bash's: a conversion busybox lacks refused after what comes before it,
 * the numbers read as busybox reads them ({@link busyboxNumbers}), and the byte an escape names
 * written as that byte (just-bash writes `\xff` as the text `ÿ`, two bytes in UTF-8). Its output
 * and messages are busybox's on the test beds (`test/conformance/busybox-programs.test.ts`).
 */
export function printfCommand(): Command {
  const printf: Command = {
    name: 'printf',
    async execute(args, ctx): Promise<ExecResult> {
      return stderrFirst(await run(args, ctx));
    },
  };
  /** The printf itself, its complaints and output as they come. */
  async function run(args: string[], ctx: CommandContext): Promise<ExecResult> {
    if (!ctx.origCommand) return fail('sh: printf: not found\n', 127);
    const [format = '', ...rest] = args;
    // A conversion busybox does not have (`%q`, a bare `%`): what comes before it is printed, then the error, 1.
    const bad = invalidDirective(format);
    if (bad) {
      const before = bad.before === '' ? ok('') : await run([bad.before, ...rest.slice(0, bad.consumed)], ctx);
      return { ...before, stderr: `${before.stderr}sh: ${bad.shown}: invalid format\n`, exitCode: 1 };
    }
    const numbers = busyboxNumbers(scanFormat(format), rest);
    const printed = await printBytes(numbers?.format ?? format, numbers?.args ?? rest, ctx.origCommand);
    return numbers
      ? { ...printed, stderr: numbers.stderr + printed.stderr, exitCode: numbers.failed ? Math.max(1, printed.exitCode) : printed.exitCode }
      : printed;
  }
  /** just-bash's printf, the bytes its escapes name written as bytes. */
  async function printBytes(format: string, rest: string[], origCommand: NonNullable<CommandContext['origCommand']>): Promise<ExecResult> {
    if (!/\\(?:x[0-9a-fA-F]|[0-7])/.test(format) && !rest.some((a) => byteEscape.test(a))) return origCommand([format, ...rest]);
    const result = await origCommand([markFormat(format), ...rest.map(markText)]);
    const { out, raw } = unmark(result.stdout);
    // Bytes that are UTF-8 (none past ASCII, or escapes spelling `é`) are text, read back as it: the
    // exec hands text out as UTF-8, where it would decode bytes back into a character of one byte.
    const bytes = Buffer.from(out, 'latin1');
    if (!raw || isUtf8(bytes)) return { ...result, stdout: bytes.toString('utf8') };
    return { ...result, stdout: out, stdoutKind: 'bytes' };
  }
  return printf;
}
