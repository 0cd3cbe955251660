import type { Command, CommandContext, ExecResult } from 'just-bash';
import { suffixed } from './busybox-getopt.js';
import { isDirectory, readOperand } from './busybox-reads.js';
import { ProgramOutput } from './program-output.js';

const fail = (stderr: string, exitCode = 1): ExecResult => ({ stdout: '', stderr, exitCode });

/** An operand's bytes (a directory: none, its read fails), or what od says when it does not open. */
async function operand(ctx: CommandContext, f: string): Promise<Buffer | string> {
  const r = await readOperand(ctx, f);
  if ('error' in r) return `od: ${f}: ${r.error}\n`;
  return 'directory' in r ? Buffer.alloc(0) : r;
}

/** One output format: a kind (`d` signed, `u` unsigned, `o` octal, `x` hex, `c` characters, `a` named characters) and its size in bytes. */
interface Spec {
  kind: 'd' | 'u' | 'o' | 'x' | 'c' | 'a';
  size: 1 | 2 | 4 | 8;
}

/** `-t TYPE`'s sizes as od_bloaty reads them: a number, or C (char), S (short), I (int), L (long). */
const sizeLetters: Record<string, 1 | 2 | 4 | 8> = { C: 1, S: 2, I: 4, L: 8, '1': 1, '2': 2, '4': 4, '8': 8 };

/** Each `-t` argument's formats (`-t x1c` is two), or undefined when od does not take it. */
function typeString(text: string): Spec[] | undefined {
  const specs: Spec[] = [];
  for (let at = 0; at < text.length;) {
    const kind = text[at++]!;
    if (kind === 'c' || kind === 'a') specs.push({ kind, size: 1 });
    else if ('duox'.includes(kind)) {
      const size = sizeLetters[text[at] ?? ''];
      if (size !== undefined) at++;
      specs.push({ kind: kind as Spec['kind'], size: size ?? 4 });
    } else return undefined;
  }
  return specs.length ? specs : undefined;
}

/** The traditional letters' formats (`-d` is unsigned 2-byte decimal, `-i` and `-s` signed 2-byte, `-l` signed 4-byte). */
const letters: Record<string, Spec> = {
  a: { kind: 'a', size: 1 },
  b: { kind: 'o', size: 1 },
  c: { kind: 'c', size: 1 },
  d: { kind: 'u', size: 2 },
  h: { kind: 'x', size: 2 },
  i: { kind: 'd', size: 2 },
  l: { kind: 'd', size: 4 },
  o: { kind: 'o', size: 2 },
  s: { kind: 'd', size: 2 },
  x: { kind: 'x', size: 2 },
};

/** printf's widths od_bloaty gives each integer format, by size: `%4d`, `%06o`, `%08x` … */
const widths: Record<'d' | 'u' | 'o' | 'x', Record<1 | 2 | 4 | 8, number>> = {
  d: { 1: 4, 2: 6, 4: 11, 8: 20 },
  u: { 1: 3, 2: 5, 4: 10, 8: 20 },
  o: { 1: 3, 2: 6, 4: 11, 8: 22 },
  x: { 1: 2, 2: 4, 4: 8, 8: 16 },
};

const escapes: Record<number, string> = { 0: '\\0', 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r' };
const names = [
  'nul',
  'soh',
  'stx',
  'etx',
  'eot',
  'enq',
  'ack',
  'bel',
  'bs',
  'ht',
  'nl',
  'vt',
  'ff',
  'cr',
  'so',
  'si',
  'dle',
  'dc1',
  'dc2',
  'dc3',
  'dc4',
  'nak',
  'syn',
  'etb',
  'can',
  'em',
  'sub',
  'esc',
  'fs',
  'gs',
  'rs',
  'us',
  'sp',
];

/** One cell of a row: the value at `i` (little-endian, the bytes past the row's end zeros), as the spec prints it after its space. */
function cell(spec: Spec, row: Buffer, i: number): string {
  const b = row[i]!;
  if (spec.kind === 'c') return ` ${(escapes[b] ?? (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : b.toString(8).padStart(3, '0'))).padStart(3)}`;
  if (spec.kind === 'a') {
    const c = b & 0x7f;
    return ` ${(c < names.length ? names[c]! : c === 0x7f ? 'del' : String.fromCharCode(c)).padStart(3)}`;
  }
  let value = 0n;
  for (let k = spec.size - 1; k >= 0; k--) value = (value << 8n) | BigInt(row[i + k] ?? 0);
  if (spec.kind === 'd' && value >= 1n << BigInt(spec.size * 8 - 1)) value -= 1n << BigInt(spec.size * 8);
  const width = widths[spec.kind][spec.size];
  if (spec.kind === 'o') return ` ${value.toString(8).padStart(width, '0')}`;
  if (spec.kind === 'x') return ` ${value.toString(16).padStart(width, '0')}`;
  return ` ${value.toString().padStart(width)}`;
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** libbb's xatoull_sfx with od's suffixes (`b` 512, `k` 1024, `m` 1024²), as -N and -j read their numbers. */
const count = (text: string): number | undefined => suffixed(text, { b: 512, k: 1024, m: 1024 * 1024 });

/**
 * busybox 1.35's `od` (od_bloaty.c): the formats `-t [duox][1248CSIL]`, `c` and `a`, several at a
 * time (each a line of its own under one address), the traditional letters `-a -b -c -d -h -i -l
 * -o -s -x`, `-A d|o|x|n`, `-j SKIP` and `-N COUNT` (with `b k m`), `-w[WIDTH]` (a multiple of the
 * formats' sizes, else a warning), `-v`. Its operands are one stream: one that does not open is
 * said (`od: F: why`) and the next read, a directory is a `read error`, each message where the
 * stream reaches it (status 1).
 */
export function odCommand(): Command {
  return {
    name: 'od',
    async execute(args, ctx) {
      const specs: Spec[] = [];
      let radix = 'o';
      let verbose = false;
      let skip = 0;
      let limit = Infinity;
      let width = 16;
      const files: string[] = [];
      // getopt: flags may share an argument, and -A, -t, -j and -N take the rest of theirs or the next one (-tx1 is -t x1); -w only the rest.
      for (let i = 0; i < args.length; i++) {
        const a = args[i]!;
        if (!a.startsWith('-') || a === '-') {
          files.push(a);
          continue;
        }
        for (let j = 1; j < a.length; j++) {
          const letter = a[j]!;
          if ('AtjN'.includes(letter)) {
            const value = j + 1 < a.length ? a.slice(j + 1) : (args[++i] ?? '');
            if (letter === 'A') {
              // -A reads the first letter of its value only (-Anv is -A n).
              if (!'doxn'.includes(value[0] ?? '-')) return fail(`od: bad output address radix '${value[0] ?? ''}' (must be [doxn])\n`);
              radix = value[0]!;
            } else if (letter === 't') {
              const given = typeString(value);
              if (!given) return ctx.origCommand ? ctx.origCommand(args) : fail(`od: invalid type string '${value}'\n`);
              specs.push(...given);
            } else {
              const n = count(value);
              if (n === undefined) return fail(`od: invalid number '${value}'\n`);
              if (letter === 'j') skip = n;
              else limit = n;
            }
            break;
          }
          if (letter === 'w') {
            const value = a.slice(j + 1);
            const n = value === '' ? 32 : count(value);
            if (n === undefined) return fail(`od: invalid number '${value}'\n`);
            width = n;
            break;
          }
          if (letter === 'v') verbose = true;
          else if (Object.hasOwn(letters, letter)) specs.push(letters[letter]!);
          else return ctx.origCommand ? ctx.origCommand(args) : fail(`od: invalid option -- '${letter}'\n`);
        }
      }
      if (specs.length === 0) specs.push({ kind: 'o', size: 2 });
      const o = new ProgramOutput();
      const multiple = specs.reduce((l, s) => (l * s.size) / gcd(l, s.size), 1);
      if (width === 0 || width % multiple !== 0) {
        o.err(`od: warning: invalid width ${width}; using ${multiple} instead\n`);
        width = multiple;
      }
      // The operands are one stream; what od says of one (it does not open, or reading it fails) comes
      // when the stream reaches it: after the rows that end before it (od_bloaty.c's read_block opens
      // the next file only when a row still needs bytes).
      const chunks: Buffer[] = [];
      const notes: { at: number; message: string }[] = [];
      let size = 0;
      // With no operand opened, od ends at the first read (open_next_file finds none): no last offset.
      let opened = false;
      for (const f of files.length ? files : ['-']) {
        const read = await operand(ctx, f);
        if (typeof read === 'string') notes.push({ at: size, message: read });
        else {
          opened = true;
          chunks.push(read);
          size += read.length;
          if (f !== '-' && (await isDirectory(ctx.fs, ctx.cwd, f))) notes.push({ at: size, message: `od: ${f}: read error\n` });
        }
      }
      const failed = notes.length > 0;
      const say = (upTo: number): void => {
        while (notes.length && notes[0]!.at <= upTo) o.err(notes.shift()!.message);
      };
      if (skip > size) {
        say(Infinity);
        o.err("od: can't skip past end of combined input\n");
        return o.result(1);
      }
      const data = Buffer.concat(chunks).subarray(skip, skip + Math.min(limit, size));
      const addressWidth = radix === 'n' ? 0 : radix === 'x' ? 6 : 7;
      const address = (at: number): string =>
        radix === 'n' ? '' : at.toString(radix === 'x' ? 16 : radix === 'd' ? 10 : 8).padStart(addressWidth, '0');
      let previous: string | undefined;
      let starred = false;
      say(skip);
      for (let at = 0; at < data.length; at += width) {
        const row = data.subarray(at, at + width);
        // A row short of a whole width is the last: od met every operand's end before printing it.
        say(row.length === width ? skip + at : Infinity);
        if (!verbose && row.length === width && row.toString('hex') === previous) {
          if (!starred) o.out('*\n');
          starred = true;
          continue;
        }
        previous = row.toString('hex');
        starred = false;
        specs.forEach((spec, n) => {
          let cells = '';
          for (let i = 0; i < row.length; i += spec.size) cells += cell(spec, row, i);
          o.out(`${n === 0 ? address(skip + at) : ' '.repeat(addressWidth)}${cells}\n`);
        });
      }
      say(Infinity);
      if (radix !== 'n' && opened) o.out(`${address(skip + data.length)}\n`);
      return o.result(failed ? 1 : 0);
    },
  };
}
