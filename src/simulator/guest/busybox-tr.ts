import type { Command } from 'just-bash';
import { bytesOutput } from './bytes-output.js';
import { getopt, isResult, usage } from './busybox-getopt.js';
import { stdinBytes } from './program-host.js';

const trUsage = [
  'Usage: tr [-cds] STRING1 [STRING2]',
  '',
  'Translate, squeeze, or delete characters from stdin, writing to stdout',
  '',
  '\t-c\tTake complement of STRING1',
  '\t-d\tDelete input characters coded STRING1',
  '\t-s\tSqueeze multiple output characters of STRING2 into one character',
  '',
].join('\n');

const code = (c: string): number => c.charCodeAt(0);

/** libbb's one-letter escapes (`\e` too), and what each stands for. */
const letters: Readonly<Record<number, number>> = { 0x61: 7, 0x62: 8, 0x65: 27, 0x66: 12, 0x6e: 10, 0x72: 13, 0x74: 9, 0x76: 11, 0x5c: 0x5c };

/**
 * libbb's bb_process_escape_sequence over `s` from `at` (just after the backslash): `\xHH` (one or
 * two hex digits), octal of up to three digits while the value stays a byte, or a letter; anything
 * else is the backslash itself, the byte after it left unread. Its value and where reading goes on.
 */
function escape(s: Uint8Array, at: number): { value: number; next: number } {
  let q = at;
  let base = 8;
  let digits = 0;
  let n = 0;
  if (s[q] === code('x')) {
    q++;
    base = 16;
    digits++;
  }
  do {
    const c = s[q] ?? 0;
    let d = c - 0x30;
    if (d < 0 || d >= 10) d = (c | 0x20) - 0x61 >= 0 ? (c | 0x20) - 0x61 + 10 : 0x100;
    if (d >= base) {
      // `\x` and no hex digit: the backslash, `x` read next.
      if (base === 16 && --digits === 0) return { value: 0x5c, next: at };
      break;
    }
    if (n * base + d > 0xff) break;
    n = n * base + d;
    q++;
  } while (++digits < 3);
  if (digits > 0) return { value: n, next: q };
  const letter = letters[s[q] ?? 0];
  return letter === undefined ? { value: 0x5c, next: q } : { value: letter, next: q + 1 };
}

/** The bytes of a `[:class:]` in the C locale, in busybox's order. */
function classBytes(name: string): number[] | undefined {
  const run = (from: string, to: string) => Array.from({ length: code(to) - code(from) + 1 }, (_, i) => code(from) + i);
  const all = Array.from({ length: 256 }, (_, i) => i);
  const isAlnum = (b: number) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);
  switch (name) {
    case 'alpha':
      return [...run('A', 'Z'), ...run('a', 'z')];
    case 'alnum':
      return [...run('0', '9'), ...run('A', 'Z'), ...run('a', 'z')];
    case 'digit':
      return run('0', '9');
    case 'lower':
      return run('a', 'z');
    case 'upper':
      return run('A', 'Z');
    case 'space':
      return [9, 10, 11, 12, 13, 32];
    case 'blank':
      return [9, 32];
    case 'punct':
      return all.filter((b) => b > 0x20 && b < 0x7f && !isAlnum(b));
    case 'cntrl':
      return all.filter((b) => b < 0x20 || b === 0x7f);
    case 'xdigit':
      return [...run('0', '9'), ...run('A', 'F'), ...run('a', 'f')];
    default:
      return undefined;
  }
}

/**
 * busybox 1.35's expand() (coreutils/tr.c): a string's bytes with escapes read, ranges `a-z` spelled
 * out (none when the end is below the start; an escape may end one), `[:class:]` and `[=C=]`; any
 * other `[` is itself. An escape stands where the backslash was, so an escaped `[` opens a class as
 * one typed does, as in busybox. Undefined for a malformed `[=C=]`, for which busybox shows its usage.
 */
function expand(arg: string): number[] | undefined {
  const s = Buffer.from(arg, 'utf8');
  const out: number[] = [];
  let p = 0;
  while (p < s.length) {
    if (s[p] === 0x5c) {
      const { value, next } = escape(s, p + 1);
      p = next - 1;
      s[p] = value;
    }
    if (s[p + 1] === code('-')) {
      if (p + 2 >= s.length) {
        out.push(s[p++]!);
        continue;
      }
      const start = s[p]!;
      let end = s[p + 2]!;
      p += 3;
      if (end === 0x5c) ({ value: end, next: p } = escape(s, p));
      for (let b = start; b <= end; b++) out.push(b);
      continue;
    }
    if (s[p] === code('[')) {
      const kind = s[p + 1];
      if (kind === code(':')) {
        const name = s.subarray(p + 2, p + 2 + (s[p + 2] === code('x') ? 8 : 7)).toString('latin1');
        const bytes = name.endsWith(':]') ? classBytes(name.slice(0, -2)) : undefined;
        if (bytes) {
          out.push(...bytes);
          p += 2 + name.length;
          continue;
        }
      } else if (kind === code('=') && p + 2 < s.length) {
        if (s[p + 3] !== code('=') || s[p + 4] !== code(']')) return undefined;
        out.push(s[p + 2]!);
        p += 5;
        continue;
      } else if (kind === code('=')) return undefined;
    }
    out.push(s[p++]!);
  }
  return out;
}

/**
 * busybox 1.35's `tr` (coreutils/tr.c), on bytes as in the beds' C locale: a character of UTF-8 is
 * its bytes in the sets and in the input (`tr -c 'a-z'` replaces each byte of `é`), STRING2 padded
 * with its last byte, `-c` the bytes not in STRING1 in order, `-d` before the mapping, `-s` squeezing
 * a repeat of a byte of either set.
 */
export function trCommand(): Command {
  return {
    name: 'tr',
    async execute(args, ctx) {
      const parsed = getopt('tr', trUsage, args, 'Ccds', '', null, { untilOperand: true });
      if (isResult(parsed)) return parsed;
      const { opts, operands } = parsed;
      if (operands.length === 0) return usage(trUsage);
      const given = expand(operands[0]!);
      if (!given) return usage(trUsage);
      const set1 = opts.has('c') || opts.has('C') ? Array.from({ length: 256 }, (_, b) => b).filter((b) => !given.includes(b)) : given;
      if (operands[1] === '') return { stdout: '', stderr: 'tr: STRING2 cannot be empty\n', exitCode: 1 };
      const set2 = operands[1] === undefined ? undefined : expand(operands[1]);
      if (operands[1] !== undefined && !set2) return usage(trUsage);
      const vector = Array.from({ length: 256 }, (_, b) => b);
      if (set2) {
        // map(): past STRING2's end, its last byte ('0' for one that expands to nothing, `z-a`).
        let last = code('0');
        for (const [i, b] of set1.entries()) vector[b] = i < set2.length ? (last = set2[i]!) : last;
      }
      const inSet1 = new Set(set1);
      const inSet2 = new Set(set2);
      const input = stdinBytes(ctx);
      const output = Buffer.alloc(input.length);
      let length = 0;
      let last = -1;
      for (const c of input) {
        if (opts.has('d') && inSet1.has(c)) continue;
        const coded = vector[c]!;
        if (opts.has('s') && last === coded && (inSet1.has(c) || inSet2.has(coded))) continue;
        output[length++] = last = coded;
      }
      return bytesOutput(output.subarray(0, length));
    },
  };
}
