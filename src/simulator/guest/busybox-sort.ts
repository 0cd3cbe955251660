import type { Command, CommandContext, ExecResult } from 'just-bash';
import { banner, getopt, isResult } from './busybox-getopt.js';
import { readOperand } from './busybox-reads.js';
import { writeToOption } from './guest-open.js';
import type { ProgramHost } from './program-host.js';
import { ProgramOutput } from './program-output.js';

const sortUsage =
  'Usage: sort [-nrugMcszbdfiokt] [-o FILE] [-k START[.OFS][OPTS][,END[.OFS][OPTS]] [-t CHAR] [FILE]...\n\n' +
  'Sort lines of text\n\n\t-o FILE\tOutput to FILE\n\t-c\tCheck whether input is sorted\n\t-b\tIgnore leading blanks\n' +
  '\t-f\tIgnore case\n\t-i\tIgnore unprintable characters\n\t-d\tDictionary order (blank or alphanumeric only)\n' +
  '\t-n\tSort numbers\n\t-g\tGeneral numerical sort\n\t-M\tSort month\n\t-V\tSort version\n\t-t CHAR\tField separator\n' +
  "\t-k N[,M] Sort by Nth field\n\t-r\tReverse sort order\n\t-s\tStable (don't sort ties alphabetically)\n" +
  '\t-u\tSuppress duplicate lines\n\t-z\tNUL terminated input and output\n';

/** sort.c's option letters in the order of its flag bits (OPT_STR): a key's options are looked up in it. */
const optStr = 'ngMVucszbrdfimS:T:o:k:*t:';
const flag = (letter: string): number => 1 << optStr.indexOf(letter);
const F = {
  n: flag('n'),
  g: flag('g'),
  M: flag('M'),
  V: flag('V'),
  u: flag('u'),
  c: flag('c'),
  s: flag('s'),
  z: flag('z'),
  b: flag('b'),
  r: flag('r'),
  d: flag('d'),
  f: flag('f'),
  i: flag('i'),
  bb: 1 << 30,
};
const allowedForKey = F.n | F.g | F.M | F.b | F.r | F.d | F.f | F.i;

/** A key: start field, start character, end field, end character (0: none), and its own flags. */
interface Key {
  range: [number, number, number, number];
  flags: number;
}

const die = (message: string): ExecResult => ({ stdout: '', stderr: `sort: ${message}\n`, exitCode: 2 });
const isSpace = (c: string | undefined): boolean => c !== undefined && ' \t\n\v\f\r'.includes(c);

/** `-k START[.OFS][OPTS][,END[.OFS][OPTS]]`, as sort.c's str2u and its loop read it. */
function parseKey(text: string): Key | ExecResult {
  const key: Key = { range: [0, 0, 0, 0], flags: 0 };
  let at = 0;
  const number = (): number | undefined => {
    const m = /^\d+/.exec(text.slice(at));
    if (!m) return undefined;
    at += m[0].length;
    const n = Number(m[0]);
    return n === 0 || n > 2 ** 31 - 1 ? undefined : n;
  };
  let i = 0;
  while (at < text.length) {
    const start = number();
    if (start === undefined) return die('bad field specification');
    key.range[2 * i] = start;
    if (text[at] === '.') {
      at++;
      const offset = number();
      if (offset === undefined) return die('bad field specification');
      key.range[2 * i + 1] = offset;
    }
    while (at < text.length) {
      const c = text[at]!;
      if (c === ',' && !i++) {
        at++;
        break;
      }
      const index = c === ':' || c === '*' ? -1 : optStr.indexOf(c);
      if (index < 0) return die('unknown key option');
      let f = 1 << index;
      if (f & ~allowedForKey) return die('unknown sort type');
      if (i && f === F.b) f = F.bb;
      key.flags |= f;
      at++;
    }
  }
  return key;
}

/** sort.c's get_key: the part of a line a key compares, after -b, -d, -i and -f. */
function keyOf(str: string, key: Key, flags: number, separator: string): string {
  const [f0, c0, f1, c1] = key.range;
  if (f0 === 1 && !c0 && !f1 && !c1 && !(flags & (F.b | F.d | F.f | F.i | F.bb))) return str;
  const len = str.length;
  let start = 0;
  let end = 0;
  for (let j = 0; j < 2; j++) {
    if (!key.range[2 * j]) end = len;
    else {
      let ch = '';
      end = 0;
      for (let i = 1; i < key.range[2 * j]! + j; i++) {
        if (separator) {
          while ((ch = str[end] ?? '') !== '') {
            end++;
            if (ch === separator) break;
          }
        } else {
          while (isSpace(str[end])) end++;
          while (end < len && !isSpace(str[end])) end++;
        }
      }
      if (j && ch) end--;
    }
    if (!j) start = end;
  }
  if (flags & F.b) while (isSpace(str[start])) start++;
  if (flags & F.bb) while (end > start && isSpace(str[end - 1])) end--;
  if (c1) end = Math.min(c1, len);
  if (c0) start = Math.min(start + c0 - 1, len);
  if (end < start) end = start;
  let out = str.slice(start, end);
  if (flags & F.d) out = [...out].filter((c) => isSpace(c) || /[A-Za-z0-9]/.test(c)).join('');
  if (flags & F.i) out = [...out].filter((c) => c >= ' ' && c <= '~').join('');
  if (flags & F.f) out = out.replace(/[a-z]+/g, (s) => s.toUpperCase());
  return out;
}

/** C's strtod prefix of a string (leading space, sign, decimal or inf/nan), or undefined when there is none. */
function strtod(s: string): number | undefined {
  const m = /^[ \t\n\v\f\r]*([+-]?)(?:(\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|(inf(?:inity)?)|(nan))/i.exec(s);
  if (!m) return undefined;
  const sign = m[1] === '-' ? -1 : 1;
  if (m[3]) return sign * Infinity;
  if (m[4]) return NaN;
  return sign * Number(m[2]);
}

const months = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const fullMonths = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** strptime's `%b`: a month's name, full or abbreviated, any case, after leading space. */
function month(s: string): number | undefined {
  const t = s.replace(/^[ \t\n\v\f\r]+/, '').toLowerCase();
  for (let m = 0; m < 12; m++) if (t.startsWith(fullMonths[m]!)) return m;
  for (let m = 0; m < 12; m++) if (t.startsWith(months[m]!)) return m;
  return undefined;
}

/** glibc's strverscmp, as far as scripts use it: runs of digits compare as numbers. */
function versionCompare(a: string, b: string): number {
  const parts = (s: string): string[] => s.match(/\d+|\D+/g) ?? [];
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i]!;
    const y = pb[i]!;
    if (x === y) continue;
    if (/^\d/.test(x) && /^\d/.test(y)) {
      const d = Number(x) - Number(y);
      if (d) return d;
    }
    return x < y ? -1 : 1;
  }
  return pa.length - pb.length;
}

const strcmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** sort.c's compare_keys over the keys (the whole line without any), its last-resort strcmp unless -s or `noTieBreak`. */
function comparer(keys: Key[], global: number, separator: string): (x: string, y: string, noTieBreak?: boolean) => number {
  return (x0, y0, noTieBreak = false) => {
    let flags = global;
    let retval = 0;
    for (const key of keys) {
      if (retval) break;
      flags = key.flags || global;
      const x = keyOf(x0, key, flags, separator);
      const y = keyOf(y0, key, flags, separator);
      switch (flags & (F.n | F.g | F.M | F.V)) {
        case 0:
          retval = strcmp(x, y);
          break;
        case F.V:
          retval = versionCompare(x, y);
          break;
        case F.g: {
          const dx = strtod(x);
          const dy = strtod(y);
          if (dx === undefined) retval = dy === undefined ? 0 : -1;
          else if (dy === undefined) retval = 1;
          else if (Number.isNaN(dx)) retval = Number.isNaN(dy) ? 0 : -1;
          else if (Number.isNaN(dy)) retval = 1;
          else retval = dx > dy ? 1 : dx < dy ? -1 : 0;
          break;
        }
        case F.M: {
          const mx = month(x);
          const my = month(y);
          retval = mx === undefined ? (my === undefined ? 0 : -1) : my === undefined ? 1 : mx - my;
          break;
        }
        case F.n: {
          const dx = strtod(x) ?? 0;
          const dy = strtod(y) ?? 0;
          retval = dx > dy ? 1 : dx < dy ? -1 : 0;
          break;
        }
        default:
          retval = 0;
      }
    }
    if (retval === 0 && !(global & F.s) && !noTieBreak) {
      flags = global;
      retval = strcmp(x0, y0);
    }
    return flags & F.r ? -retval : retval;
  };
}

/**
 * busybox 1.35's `sort` (coreutils/sort.c): its options (`-S`, `-T`, `-m` taken and ignored), keys
 * and their refusals (`bad field specification`, `unknown key option`, `bad -t parameter`), byte
 * order without a locale; the first operand it cannot open ends it (`sort: F: why`, status 2, as
 * coreutils 6.9 did), a directory reads as empty; `-c` says `Check line N`; `-o FILE` is opened
 * after the input is read (`can't open 'F': why`).
 */
export function sortCommand(host: ProgramHost): Command {
  return {
    name: 'sort',
    async execute(args, ctx) {
      // busybox answers `--help` as the first argument with the usage, on stdout.
      if (args[0] === '--help') return { stdout: `${banner}${sortUsage}`, stderr: '', exitCode: 0 };
      const parsed = getopt('sort', sortUsage, args, 'ngMVucszbrdfim', 'STokt', {});
      if (isResult(parsed)) return { ...parsed, exitCode: 2 };
      const { opts, operands } = parsed;
      let global = 0;
      for (const letter of 'ngMVucszbrdfi') if (opts.has(letter)) global |= flag(letter);
      if (global & F.b) global |= F.bb;
      let separator = '';
      const t = opts.get('t');
      if (typeof t === 'string') {
        if (t.length !== 1) return die('bad -t parameter');
        separator = t;
      }
      const keys: Key[] = [];
      for (const text of keyOptions(args)) {
        const key = parseKey(text);
        if ('exitCode' in key) return key;
        keys.push(key);
      }
      if (keys.length === 0) keys.push({ range: [1, 0, 0, 0], flags: 0 });
      let data = '';
      for (const f of operands.length ? operands : ['-']) {
        const read = await input(ctx, f);
        if (read.error) return die(`${f}: ${read.error}`);
        data += read.text;
        // Each file's last line ends there, newline or not.
        if (read.text !== '' && !read.text.endsWith(global & F.z ? '\0' : '\n')) data += global & F.z ? '\0' : '\n';
      }
      const end = global & F.z ? '\0' : '\n';
      const lines = data === '' ? [] : data.slice(0, -1).split(end);
      const compare = comparer(keys, global, separator);
      if (global & F.c) {
        const limit = global & F.u ? -1 : 0;
        for (let i = 1; i < lines.length; i++)
          if (compare(lines[i - 1]!, lines[i]!) > limit) return { stdout: '', stderr: `Check line ${i}\n`, exitCode: 1 };
        return { stdout: '', stderr: '', exitCode: 0 };
      }
      let sorted = [...lines].sort((a, b) => compare(a, b));
      if (global & F.u) {
        // Each line is compared with the last one kept, keys only (coreutils 6.3 drops lines whose keys are equal).
        const unique: string[] = [];
        for (const l of sorted) if (unique.length === 0 || compare(unique.at(-1)!, l, true) !== 0) unique.push(l);
        sorted = unique;
      }
      const out = Buffer.from(sorted.map((l) => `${l}${end}`).join(''), 'latin1');
      const target = opts.get('o');
      if (typeof target === 'string') {
        const wrote = await writeToOption(host, ctx.cwd, 'sort', target, out);
        return 'openError' in wrote ? die(`can't open '${target}': ${wrote.openError}`) : { stdout: '', stderr: wrote.stderr, exitCode: 0 };
      }
      const o = new ProgramOutput();
      o.bytes(out);
      return o.result(0);
    },
  };
}

/** Every `-k` value in order (getopt's map keeps only the last). */
function keyOptions(args: string[]): string[] {
  const keys: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') break;
    if (!a.startsWith('-') || a === '-' || a.startsWith('--')) continue;
    for (let j = 1; j < a.length; j++) {
      const c = a[j]!;
      if ('STokt'.includes(c)) {
        const value = j + 1 < a.length ? a.slice(j + 1) : (args[++i] ?? '');
        if (c === 'k') keys.push(value);
        break;
      }
    }
  }
  return keys;
}

/** An operand's text, one character a byte (a directory: none), or why it does not open. */
async function input(ctx: CommandContext, f: string): Promise<{ text: string; error?: string }> {
  const r = await readOperand(ctx, f);
  if ('error' in r) return { text: '', error: r.error };
  return { text: 'directory' in r ? '' : r.toString('latin1') };
}
