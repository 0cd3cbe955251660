import type { ExecResult } from 'just-bash';

/**
 * How busybox 1.35's programs read their command lines: the multi-call binary's banner before a
 * program's usage, and getopt32 over glibc's getopt (or getopt_long when the program has long names).
 */

/** The busybox of the test beds (LXD 5.0.2's and Incus 6.0.4's images), as it names itself. */
export const busyboxVersion = 'BusyBox v1.35.0 (Debian 1:1.35.0-4+deb12u1+b1)';
/** The multi-call binary's first line, as `busybox --help` prints it. */
export const bannerLine = `${busyboxVersion} multi-call binary.`;
/** The first lines of every usage busybox prints. */
export const banner = `${bannerLine}\n\n`;

/** A wrong call: the program's usage after busybox's banner, exit 1. */
export const usage = (text: string): ExecResult => ({ stdout: '', stderr: `${banner}${text}`, exitCode: 1 });

/** `PROGRAM --help` alone: busybox's applet help, the usage after the banner on stderr, status 0; undefined for any other command line. */
export const helpAsked = (args: readonly string[], text: string): ExecResult | undefined =>
  args.length === 1 && args[0] === '--help' ? { stdout: '', stderr: `${banner}${text}`, exitCode: 0 } : undefined;

/** The parsed command line: options (a flag's value is `true`, an option's its argument) and operands. */
export interface Parsed {
  opts: Map<string, string | true>;
  operands: string[];
}

/**
 * Sees each option as it is read, in order (a flag's value is `true`); what it returns ends the
 * reading and is getopt's answer, as a program that acts on an option at once (or refuses its value).
 */
export type OnOption = (letter: string, value: string | true) => ExecResult | undefined;

/** How a program has getopt read: what sees each option, and whether long names may be abbreviated. */
export interface Reading {
  onOption?: OnOption;
  /** getopt_long's unambiguous prefixes (`--inst` for `--install`), an ambiguous one refused. */
  abbreviations?: boolean;
  /** getopt32's `+`: the first operand ends the options, the words after it all operands (a program run by this one: `timeout 1 ls -l`). */
  untilOperand?: boolean;
}

/**
 * Reads options as busybox's getopt32 over glibc does: clustered flags, an option's value glued or
 * next, options after operands too, `--` ends them; `longs` maps long names to their letters (or to
 * a name of their own, which the program tells apart in `onOption`), and `null` says the program has
 * none (getopt, not getopt_long: `--x` is the flags `-` and `x`).
 */
export function getopt(
  program: string,
  usageText: string,
  args: string[],
  flags: string,
  valued: string,
  longs: Record<string, string> | null = {},
  reading: Reading = {},
): Parsed | ExecResult {
  const opts = new Map<string, string | true>();
  const operands: string[] = [];
  const refuse = (why: string): ExecResult => ({ stdout: '', stderr: `${program}: ${why}\n${banner}${usageText}`, exitCode: 1 });
  const take = (letter: string, value: string | true): ExecResult | undefined => {
    opts.set(letter, value);
    return reading.onOption?.(letter, value);
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (longs !== null && a.startsWith('--')) {
      const [name, value] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      const names = Object.keys(longs);
      const match = Object.hasOwn(longs, name) ? [name] : reading.abbreviations ? names.filter((n) => n.startsWith(name)) : [];
      if (match.length === 0) return refuse(`unrecognized option '${a}'`);
      if (match.length > 1) return refuse(`option '--${name}' is ambiguous; possibilities:${match.map((m) => ` '--${m}'`).join('')}`);
      const long = match[0]!;
      const letter = longs[long]!;
      let v: string | true = true;
      if (valued.includes(letter)) {
        const given = value ?? args[++i];
        if (given === undefined) return refuse(`option '--${long}' requires an argument`);
        v = given;
      }
      const stop = take(letter, v);
      if (stop) return stop;
      continue;
    }
    if (!a.startsWith('-') || a === '-') {
      if (reading.untilOperand) {
        operands.push(...args.slice(i));
        break;
      }
      operands.push(a);
      continue;
    }
    for (let j = 1; j < a.length; j++) {
      const c = a[j]!;
      if (valued.includes(c)) {
        const v = j + 1 < a.length ? a.slice(j + 1) : args[++i];
        if (v === undefined) return refuse(`option requires an argument -- '${c}'`);
        const stop = take(c, v);
        if (stop) return stop;
        break;
      }
      if (!flags.includes(c)) return refuse(`invalid option -- '${c}'`);
      const stop = take(c, true);
      if (stop) return stop;
    }
  }
  return { opts, operands };
}

export const isResult = (p: Parsed | ExecResult): p is ExecResult => 'exitCode' in p;

/**
 * A command line with each cluster of short options apart, one option a word and a value the next
 * (`-qn1` is `-q -n 1`, `-ud@0` is `-u -d @0`), as getopt32 reads it, for a program just-bash runs
 * that takes one option a word. `valued` options take the rest of their word or the next; `glued`
 * ones only the rest of theirs, kept in one word (an optional value: `-I[SPEC]`). A word that is
 * not `-` and a letter is left as it is; `--` ends the options. `check` sees each option and its
 * value: it may end the reading with its answer, or give the value to pass on.
 */
export function apart(
  args: readonly string[],
  valued: string,
  glued = '',
  check: (letter: string, value: string | undefined) => ExecResult | string | undefined = () => undefined,
): string[] | ExecResult {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      out.push(...args.slice(i));
      break;
    }
    if (!/^-[A-Za-z]/.test(a)) {
      out.push(a);
      continue;
    }
    for (let j = 1; j < a.length; j++) {
      const c = a[j]!;
      const takes = valued.includes(c);
      const value = glued.includes(c) ? a.slice(j + 1) : takes ? (j + 1 < a.length ? a.slice(j + 1) : args[++i]) : undefined;
      const checked = check(c, value);
      if (checked !== undefined && typeof checked !== 'string') return checked;
      const given = checked ?? value;
      if (glued.includes(c)) out.push(`-${c}${given ?? ''}`);
      else out.push(`-${c}`, ...(given === undefined ? [] : [given]));
      if (takes || glued.includes(c)) break;
    }
  }
  return out;
}

/**
 * A number as libbb's xatoull_sfx reads it: decimal digits, then one of the applet's suffixes
 * (`units`: its multiplier), or none; undefined for anything else. Each applet has its own table, as
 * in busybox (head's `b k m`, truncate's `k K KB kB M MB G GB` …).
 */
export function suffixed(text: string, units: Readonly<Record<string, number>>): number | undefined {
  const m = /^(\d+)(\D*)$/.exec(text);
  if (!m) return undefined;
  const unit = m[2] === '' ? 1 : Object.hasOwn(units, m[2]!) ? units[m[2]!] : undefined;
  return unit === undefined ? undefined : Number(m[1]) * unit;
}
